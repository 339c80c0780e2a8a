SELECT `p`.`g0` AS `g0`, `p`.`m0` AS `m0`, `j`.`j0` AS `j0`
FROM (
  SELECT toString(`trace_id`) AS `g0`, count() AS `m0`
  FROM `lookout`.`event_tool_called` FINAL
  WHERE `tenant_id` = {p0:String} AND `project_id` = {p1:String} AND `timestamp` >= {p2:DateTime64(3, 'UTC')} AND `timestamp` < {p3:DateTime64(3, 'UTC')}
  GROUP BY `g0`
) AS `p`
LEFT JOIN (
  SELECT toString(`trace_id`) AS `k`, sum(`output_tokens`) AS `j0`
  FROM `lookout`.`event_generation_completed` FINAL
  WHERE `tenant_id` = {p4:String} AND `project_id` = {p5:String} AND `timestamp` >= {p6:DateTime64(3, 'UTC')} AND `timestamp` < {p7:DateTime64(3, 'UTC')}
  GROUP BY `k`
) AS `j` ON `p`.`g0` = `j`.`k`
ORDER BY `g0` ASC
LIMIT {p8:UInt32}
SETTINGS max_execution_time = 15, max_result_rows = 100, max_memory_usage = 4294967296, output_format_json_quote_64bit_integers = 1, output_format_json_quote_denormals = 0, join_use_nulls = 1, do_not_merge_across_partitions_select_final = 1, readonly = 2

-- params
{
  "p0": "tenant-golden",
  "p1": "project-golden",
  "p2": "2026-11-15 00:00:00.000",
  "p3": "2026-11-22 00:00:00.000",
  "p4": "tenant-golden",
  "p5": "project-golden",
  "p6": "2026-11-15 00:00:00.000",
  "p7": "2026-11-22 00:00:00.000",
  "p8": "100"
}
