SELECT toDate(`timestamp`) AS `date`, `model` AS `model`, grouping(`date`) = 0 AS `by_date`, grouping(`model`) = 0 AS `by_model`, count() AS `requests`, sum(`error`) AS `errors`, avg(`tps`) AS `speed`, count(`tps`) AS `speed_known`, quantilesExact(0.5, 0.95, 0.99)(`tps`) AS `speed_q`, sum(`input_tokens`) AS `prompt_tokens`, sum(`output_tokens`) AS `completion_tokens`
FROM `lookout`.`event_generation_completed` FINAL
WHERE `tenant_id` = {p0:String} AND `project_id` = {p1:String} AND `timestamp` >= {p2:DateTime64(3, 'UTC')} AND `timestamp` < {p3:DateTime64(3, 'UTC')}
GROUP BY GROUPING SETS ((`date`), (`model`), ())
SETTINGS output_format_json_quote_64bit_integers = 0, force_grouping_standard_compatibility = 1, max_memory_usage = 4294967296

-- params
{
  "p0": "tenant-golden",
  "p1": "project-golden",
  "p2": "2026-11-21 06:00:00.000",
  "p3": "2026-11-22 06:00:00.000"
}
