SELECT max(`has_root`) AS `root_status`, max(isNotNull(`root_duration_ms`)) AS `root_duration`, max(`agent_name` != '') AS `agents`, max(`total_tokens` > 0) AS `tokens`, max(notEmpty(`models`)) AS `model`, max(`estimated_cost_basis` IN ({p0:String}, {p1:String}, {p2:String})) AS `cost_basis`
FROM `lookout`.`event_trace_processed`
WHERE `tenant_id` = {p3:String} AND `project_id` = {p4:String}
SETTINGS output_format_json_quote_64bit_integers = 0, force_grouping_standard_compatibility = 1, max_memory_usage = 4294967296

-- params
{
  "p0": "stored",
  "p1": "partial",
  "p2": "unpriced",
  "p3": "tenant-golden",
  "p4": "project-golden"
}
