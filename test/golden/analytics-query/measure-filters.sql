SELECT `agent_name` AS `g0`, count() AS `m0`, countIf(`error` = {p0:Float64}) AS `m1`, maxOrNullIf(`duration_ms`, `error` = {p1:Float64}) AS `m2`, uniqExactIf(`tool`, `error` = {p2:Float64}) AS `m3`
FROM `lookout`.`event_tool_called` FINAL
WHERE `tenant_id` = {p3:String} AND `project_id` = {p4:String} AND `timestamp` >= {p5:DateTime64(3, 'UTC')} AND `timestamp` < {p6:DateTime64(3, 'UTC')}
GROUP BY `g0`
ORDER BY `g0` ASC
LIMIT {p7:UInt32}
SETTINGS max_execution_time = 15, max_result_rows = 10000, max_memory_usage = 4294967296, output_format_json_quote_64bit_integers = 1, output_format_json_quote_denormals = 0, do_not_merge_across_partitions_select_final = 1, readonly = 2

-- params
{
  "p0": "1",
  "p1": "0",
  "p2": "1",
  "p3": "tenant-golden",
  "p4": "project-golden",
  "p5": "2026-11-15 00:00:00.000",
  "p6": "2026-11-22 00:00:00.000",
  "p7": "10000"
}
