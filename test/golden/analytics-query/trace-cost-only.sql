SELECT count() AS `rows`
FROM (SELECT * FROM `lookout`.`event_trace_processed` FINAL WHERE `tenant_id` = {p0:String} AND `project_id` = {p1:String} AND `timestamp` >= {p2:DateTime64(3, 'UTC')} AND `timestamp` < {p3:DateTime64(3, 'UTC')})
SETTINGS max_execution_time = 15, max_result_rows = 10000, max_memory_usage = 4294967296, output_format_json_quote_64bit_integers = 1, output_format_json_quote_denormals = 0, readonly = 2

-- params
{
  "p0": "tenant-golden",
  "p1": "project-golden",
  "p2": "2026-11-15 00:00:00.000",
  "p3": "2026-11-22 00:00:00.000"
}

-- cost where
`tenant_id` = {p0:String} AND `project_id` = {p1:String} AND `timestamp` >= {p2:DateTime64(3, 'UTC')} AND `timestamp` < {p3:DateTime64(3, 'UTC')}
-- cost params
{
  "p0": "tenant-golden",
  "p1": "project-golden",
  "p2": "2026-11-15 00:00:00.000",
  "p3": "2026-11-22 00:00:00.000"
}
-- cost groups

