SELECT `model` AS `g0`, count() AS `m0`, arrayElementOrNull(quantilesExactOrNull(0.5, 0.95, 0.99)(`duration_ms`), 1) AS `m1`, arrayElementOrNull(quantilesExactOrNull(0.5, 0.95, 0.99)(`duration_ms`), 2) AS `m2`, arrayElementOrNull(quantilesExactOrNull(0.5, 0.95, 0.99)(`duration_ms`), 3) AS `m3`, sum(`input_tokens`) AS `m4`, avgOrNull(`tps`) AS `m5`, uniqExact(`trace_id`) AS `m6`
FROM `lookout`.`event_generation_completed` FINAL
WHERE `tenant_id` = {p0:String} AND `project_id` = {p1:String} AND `timestamp` >= {p2:DateTime64(3, 'UTC')} AND `timestamp` < {p3:DateTime64(3, 'UTC')}
GROUP BY `g0`
ORDER BY `m2` DESC, `g0` ASC
LIMIT {p4:UInt32}
SETTINGS max_execution_time = 15, max_result_rows = 10, max_memory_usage = 4294967296, output_format_json_quote_64bit_integers = 1, output_format_json_quote_denormals = 0, do_not_merge_across_partitions_select_final = 1, readonly = 2

-- params
{
  "p0": "tenant-golden",
  "p1": "project-golden",
  "p2": "2026-11-15 00:00:00.000",
  "p3": "2026-11-22 00:00:00.000",
  "p4": "10"
}
