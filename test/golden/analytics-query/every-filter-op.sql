SELECT count() AS `m0`
FROM `lookout`.`event_generation_completed` FINAL
WHERE `tenant_id` = {p0:String} AND `project_id` = {p1:String} AND `timestamp` >= {p2:DateTime64(3, 'UTC')} AND `timestamp` < {p3:DateTime64(3, 'UTC')} AND `model` = {p4:String} AND `surface` != {p5:String} AND `input_tokens` > {p6:Float64} AND `input_tokens` >= {p7:Float64} AND `duration_ms` < {p8:Float64} AND `duration_ms` <= {p9:Float64} AND 0 AND isNotNull(`tps`) AND `output_tokens` IN ({p10:Float64}, {p11:Float64}, {p12:Float64})
SETTINGS max_execution_time = 15, max_result_rows = 10000, max_memory_usage = 4294967296, output_format_json_quote_64bit_integers = 1, output_format_json_quote_denormals = 0, do_not_merge_across_partitions_select_final = 1, readonly = 2

-- params
{
  "p0": "tenant-golden",
  "p1": "project-golden",
  "p2": "2026-11-15 00:00:00.000",
  "p3": "2026-11-22 00:00:00.000",
  "p4": "gpt-4o",
  "p5": "",
  "p6": "10",
  "p7": "11",
  "p8": "2500.5",
  "p9": "2500",
  "p10": "1",
  "p11": "2.5",
  "p12": "-3"
}
