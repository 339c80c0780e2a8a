WITH intDiv(toRelativeDayNum(toStartOfWeek(`timestamp`, 0)) - toRelativeDayNum({p0:Date}), 7) AS `bucket_index`
SELECT `tool` AS `tool`, count() AS `calls`, sum(`error`) AS `errors`, quantilesExact(0.5, 0.95)(`duration_ms`) AS `duration_q`, uniqExact(`trace_id`) AS `traces`, sum(`output_tokens`) AS `output_tokens`, countResample(0, 4, 1)(`bucket_index`) AS `calls_by_bucket`, sumResample(0, 4, 1)(toUInt64(`error`), `bucket_index`) AS `errors_by_bucket`
FROM `lookout`.`event_tool_called` FINAL
WHERE `tenant_id` = {p1:String} AND `project_id` = {p2:String} AND `timestamp` >= {p3:DateTime64(3, 'UTC')} AND `timestamp` < {p4:DateTime64(3, 'UTC')}
GROUP BY `tool`
ORDER BY `calls` DESC, `tool` ASC
SETTINGS output_format_json_quote_64bit_integers = 0, force_grouping_standard_compatibility = 1, max_memory_usage = 4294967296

-- params
{
  "p0": "2026-10-25",
  "p1": "tenant-golden",
  "p2": "project-golden",
  "p3": "2026-10-28 00:00:00.000",
  "p4": "2026-11-22 00:00:00.000"
}
