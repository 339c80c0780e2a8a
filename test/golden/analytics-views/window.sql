SELECT toStartOfWeek(`timestamp`, 0) AS `date`, grouping(`date`) AS `is_total`, count() AS `traces`, countIf(`has_root` = 1 AND `root_status_code` = {p0:String}) AS `failed_runs`, countIf(`has_root` = 1) AS `root_status_known`, countIf(`has_root` = 0) AS `root_absent`, count(`root_duration_ms`) AS `duration_known`, quantilesExact(0.5, 0.95)(`root_duration_ms`) AS `latency_q`, countIf(`has_root` = 1) AS `cov_root_status`, countIf(isNotNull(`root_duration_ms`)) AS `cov_root_duration`, countIf(`agent_name` != '') AS `cov_agents`, countIf(`total_tokens` > 0) AS `cov_tokens`, countIf(notEmpty(`models`)) AS `cov_model`, countIf(`estimated_cost_basis` IN ({p1:String}, {p2:String}, {p3:String})) AS `cov_cost_basis`, sum(`generations_with_provider`) AS `cov_provider`, sum(`generations`) AS `cov_generations`, countIf(`tool_calls` > 0) AS `cov_tools`, countIf(estimated_cost_basis IN ('stored', 'partial', 'unpriced')) AS stored_traces,
  countIf(estimated_cost_basis IN ('partial', 'unpriced')) AS stored_unpriced,
  sumIf(ifNull(estimated_cost_usd, 0), estimated_cost_basis IN ('stored', 'partial')) AS stored_cost,
  sumIf(cost_priced_tokens, estimated_cost_basis IN ('stored', 'partial', 'unpriced')) AS stored_priced_tokens,
  sum(total_tokens) AS window_tokens,
  minIf(cost_priced_at, estimated_cost_basis IN ('stored', 'partial', 'unpriced')) AS stored_priced_at,
  groupUniqArrayArrayIf({p4:UInt32})(cost_unpriced_models, estimated_cost_basis IN ('stored', 'partial', 'unpriced')) AS stored_unpriced_models
FROM (SELECT * FROM `lookout`.`event_trace_processed` FINAL WHERE `tenant_id` = {p5:String} AND `project_id` = {p6:String} AND `timestamp` >= {p7:DateTime64(3, 'UTC')} AND `timestamp` < {p8:DateTime64(3, 'UTC')})
GROUP BY GROUPING SETS ((`date`), ())
ORDER BY `date` ASC
SETTINGS output_format_json_quote_64bit_integers = 0, force_grouping_standard_compatibility = 1, max_memory_usage = 4294967296

-- params
{
  "p0": "ERROR",
  "p1": "stored",
  "p2": "partial",
  "p3": "unpriced",
  "p4": 51,
  "p5": "tenant-golden",
  "p6": "project-golden",
  "p7": "2026-10-28 00:00:00.000",
  "p8": "2026-11-22 00:00:00.000"
}
