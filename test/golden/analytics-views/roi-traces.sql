SELECT toStartOfWeek(`timestamp`, 0) AS `date`, grouping(`date`) AS `is_total`, count() AS `traces`, countIf(`error_count` > 0) AS `errors`, uniqExactIf(`agent_name`, `agent_name` != '') AS `agents`
FROM (SELECT * FROM `lookout`.`event_trace_processed` FINAL WHERE `tenant_id` = {p0:String} AND `project_id` = {p1:String})
GROUP BY GROUPING SETS ((`date`), ())
ORDER BY `date` ASC
SETTINGS output_format_json_quote_64bit_integers = 0, force_grouping_standard_compatibility = 1, max_memory_usage = 4294967296

-- params
{
  "p0": "tenant-golden",
  "p1": "project-golden"
}
