SELECT count() AS `traces`, sumMap(mapFromArrays(`models`, arrayWithConstant(length(`models`), toUInt64(1)))) AS `runs_by_model`, countIf(estimated_cost_basis IN ('stored', 'partial', 'unpriced')) AS stored_traces,
  countIf(estimated_cost_basis IN ('partial', 'unpriced')) AS stored_unpriced,
  sumIf(ifNull(estimated_cost_usd, 0), estimated_cost_basis IN ('stored', 'partial')) AS stored_cost,
  sumIf(cost_priced_tokens, estimated_cost_basis IN ('stored', 'partial', 'unpriced')) AS stored_priced_tokens,
  sum(total_tokens) AS window_tokens,
  minIf(cost_priced_at, estimated_cost_basis IN ('stored', 'partial', 'unpriced')) AS stored_priced_at,
  groupUniqArrayArrayIf({p0:UInt32})(cost_unpriced_models, estimated_cost_basis IN ('stored', 'partial', 'unpriced')) AS stored_unpriced_models, sumMapIf(cost_model_costs, estimated_cost_basis IN ('stored', 'partial')) AS stored_model_costs,
  groupUniqArrayArrayIf(mapKeys(cost_model_costs), estimated_cost_basis IN ('stored', 'partial')) AS stored_cost_models
FROM (SELECT * FROM `lookout`.`event_trace_processed` FINAL WHERE `tenant_id` = {p1:String} AND `project_id` = {p2:String} AND `timestamp` >= {p3:DateTime64(3, 'UTC')} AND `timestamp` < {p4:DateTime64(3, 'UTC')})
SETTINGS output_format_json_quote_64bit_integers = 0, force_grouping_standard_compatibility = 1, max_memory_usage = 4294967296

-- params
{
  "p0": 51,
  "p1": "tenant-golden",
  "p2": "project-golden",
  "p3": "2026-10-28 00:00:00.000",
  "p4": "2026-11-22 00:00:00.000"
}
