SELECT toStartOfWeek(`timestamp`, 0) AS `date`, `issue_id` AS `issue_id`, toString(`timestamp`) AS `resolved_at`
FROM `lookout`.`event_issue` FINAL
WHERE `tenant_id` = {p0:String} AND `project_id` = {p1:String} AND `timestamp` >= {p2:DateTime64(3, 'UTC')} AND `timestamp` < {p3:DateTime64(3, 'UTC')} AND `name` = {p4:String}
SETTINGS output_format_json_quote_64bit_integers = 0, force_grouping_standard_compatibility = 1, max_memory_usage = 4294967296

-- params
{
  "p0": "tenant-golden",
  "p1": "project-golden",
  "p2": "2026-10-28 00:00:00.000",
  "p3": "2026-11-22 00:00:00.000",
  "p4": "issue.resolved"
}
