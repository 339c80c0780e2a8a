SELECT count() AS `m0`
FROM `lookout`.`event_tool_called` FINAL
WHERE `tenant_id` = {p0:String} AND `project_id` = {p1:String} AND `timestamp` >= {p2:DateTime64(3, 'UTC')} AND `timestamp` < {p3:DateTime64(3, 'UTC')} AND `tool` = {p4:String} AND `agent_name` IN ({p5:String}, {p6:String}, {p7:String}, {p8:String}, {p9:String}, {p10:String}) AND `duration_ms` > {p11:Float64}
SETTINGS max_execution_time = 15, max_result_rows = 10000, max_memory_usage = 4294967296, output_format_json_quote_64bit_integers = 1, output_format_json_quote_denormals = 0, do_not_merge_across_partitions_select_final = 1, readonly = 2

-- params
{
  "p0": "tenant-golden",
  "p1": "project-golden",
  "p2": "2026-11-15 00:00:00.000",
  "p3": "2026-11-22 00:00:00.000",
  "p4": "x' OR 1=1 --",
  "p5": "a\\",
  "p6": "b'); DROP TABLE lookout.event_tool_called; --",
  "p7": "nul\u0000byte",
  "p8": "雪😀",
  "p9": "`backtick`",
  "p10": "{p0:String}",
  "p11": "1e+308"
}
