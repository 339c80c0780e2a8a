SELECT 1 AS `found`
FROM `lookout`.`event_generation_completed`
WHERE `tenant_id` = {p0:String} AND `project_id` = {p1:String} AND `provider` != ''
LIMIT {p2:UInt32}
SETTINGS output_format_json_quote_64bit_integers = 0, force_grouping_standard_compatibility = 1, max_memory_usage = 4294967296

-- params
{
  "p0": "tenant-golden",
  "p1": "project-golden",
  "p2": "1"
}
