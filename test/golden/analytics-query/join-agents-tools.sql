SELECT `p`.`g0` AS `g0`, `p`.`m0` AS `m0`, `p`.`m1` AS `m1`, `j`.`j0` AS `j0`, `j`.`j1` AS `j1`
FROM (
  SELECT `agent_name` AS `g0`, count() AS `m0`, countIf(`error_count` > {p0:Float64}) AS `m1`
  FROM (SELECT * FROM `lookout`.`event_trace_processed` FINAL WHERE `tenant_id` = {p1:String} AND `project_id` = {p2:String} AND `timestamp` >= {p3:DateTime64(3, 'UTC')} AND `timestamp` < {p4:DateTime64(3, 'UTC')})
  GROUP BY `g0`
) AS `p`
LEFT JOIN (
  SELECT `agent_name` AS `k`, count() AS `j0`, uniqExact(`tool`) AS `j1`
  FROM `lookout`.`event_tool_called` FINAL
  WHERE `tenant_id` = {p5:String} AND `project_id` = {p6:String} AND `timestamp` >= {p7:DateTime64(3, 'UTC')} AND `timestamp` < {p8:DateTime64(3, 'UTC')} AND `error` = {p9:Float64}
  GROUP BY `k`
) AS `j` ON `p`.`g0` = `j`.`k`
ORDER BY `m1` DESC, `g0` ASC
LIMIT {p10:UInt32}
SETTINGS max_execution_time = 15, max_result_rows = 10000, max_memory_usage = 4294967296, output_format_json_quote_64bit_integers = 1, output_format_json_quote_denormals = 0, join_use_nulls = 1, readonly = 2

-- params
{
  "p0": "0",
  "p1": "tenant-golden",
  "p2": "project-golden",
  "p3": "2026-11-15 00:00:00.000",
  "p4": "2026-11-22 00:00:00.000",
  "p5": "tenant-golden",
  "p6": "project-golden",
  "p7": "2026-11-15 00:00:00.000",
  "p8": "2026-11-22 00:00:00.000",
  "p9": "1",
  "p10": "10000"
}
