SELECT toStartOfMonth(`timestamp`) AS `date`, count() AS `traces`, countIf(`has_root` = 1 AND `root_status_code` = {p0:String}) AS `failed_runs`, countIf(`has_root` = 1) AS `root_status_known`, countIf(`has_root` = 0) AS `root_absent`, sum(`error_count`) AS `span_errors`, sum(`input_tokens`) AS `input_tokens`, sum(`output_tokens`) AS `output_tokens`, countIf(estimated_cost_basis IN ('stored', 'partial', 'unpriced')) AS stored_traces,
  countIf(estimated_cost_basis IN ('partial', 'unpriced')) AS stored_unpriced,
  sumIf(ifNull(estimated_cost_usd, 0), estimated_cost_basis IN ('stored', 'partial')) AS stored_cost,
  sumIf(cost_priced_tokens, estimated_cost_basis IN ('stored', 'partial', 'unpriced')) AS stored_priced_tokens,
  sum(total_tokens) AS window_tokens,
  minIf(cost_priced_at, estimated_cost_basis IN ('stored', 'partial', 'unpriced')) AS stored_priced_at,
  groupUniqArrayArrayIf({p1:UInt32})(cost_unpriced_models, estimated_cost_basis IN ('stored', 'partial', 'unpriced')) AS stored_unpriced_models
FROM (SELECT * FROM `lookout`.`event_trace_processed` FINAL WHERE `tenant_id` = {p2:String} AND `project_id` = {p3:String} AND `timestamp` >= {p4:DateTime64(3, 'UTC')} AND `timestamp` < {p5:DateTime64(3, 'UTC')})
GROUP BY `date`
ORDER BY `date` ASC
SETTINGS output_format_json_quote_64bit_integers = 0, force_grouping_standard_compatibility = 1, max_memory_usage = 4294967296

-- params
{
  "p0": "ERROR",
  "p1": 51,
  "p2": "tenant-golden",
  "p3": "project-golden",
  "p4": "2026-10-28 00:00:00.000",
  "p5": "2026-11-22 00:00:00.000"
}
