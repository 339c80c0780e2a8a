-- Retention per project (docs/data-lifecycle.md "Retention"): every row carries its project's
-- retention, and the tables' TTL reads it.
--
-- analytics_days (1-90) bounds every row of a project: row TTL `timestamp + analytics_days`.
-- content_days (1-analytics_days) bounds the raw content: a column TTL empties the content columns of
-- spans (attributes, events) and traces (agent input and output, their display text, the tool call
-- list with its messages), and a row TTL removes what is content as a whole (span_logs: log records;
-- trace_content: search text). Durations, tokens, models, costs, statuses, names and ids stay for
-- analytics_days. These are the engine's own TTL: it removes what expired when it merges a part that
-- holds expired rows or values (at most merge_with_ttl_timeout, 4 h by default, after the first value
-- expired); no job of ours sweeps the tables.
--
-- Where a row's retention comes from: the two columns default to the project's setting, looked up at
-- insert time in `retention_settings` (joinGetOrNull: the project's row, else its tenant's default row
-- with project_id '', else 90). That table is a Join table (a keyed in-memory table kept on disk, the
-- last row of a key wins), written by the retention routes on every node (src/lifecycle/retention-
-- engine.ts); the settings themselves live in PostgreSQL (sql/026_retention.sql). So no writer names
-- the columns: every insert of every table, now and later, gets them from the engine, and a change
-- reaches the next insert at once. A Join table needs no credentials and no reload, which a
-- dictionary over a table would (its source query runs as a user of its own).
--
-- A changed setting reaches existing rows by a mutation the retention route submits: ALTER TABLE …
-- UPDATE analytics_days, content_days WHERE <the project's rows>. A mutation that updates a column a
-- TTL expression reads also runs the TTL on the parts it rewrites, so a shorter setting removes what
-- it expires when the mutation applies (seconds on small tables), a longer one only moves the
-- deadline of what has not expired yet. Read paths hide expired content by the current setting at
-- once, whatever the engine has done yet (src/spans/content-expiry.ts).
--
-- The other choices weighed: a TTL calling joinGet or dictGet directly keeps each part's computed TTL
-- bounds from when the part was written, so a shorter setting would wait for MATERIALIZE TTL of whole
-- tables; a partition per project and day multiplies parts; lightweight DELETEs of ours on a schedule
-- are the sweeper the engine's TTL makes unnecessary.
--
-- Existing rows read 90 for both columns (no setting existed), which is the TTL they already had, so
-- the new TTL expressions are not materialized over existing parts (materialize_ttl_after_modify = 0:
-- that would rewrite every part for no change). Every statement is idempotent: CREATE … IF NOT EXISTS,
-- ADD COLUMN IF NOT EXISTS, MODIFY TTL / MODIFY COLUMN to what they already are.

CREATE TABLE IF NOT EXISTS {db}.retention_settings {on_cluster}
(
    tenant_id String,
    -- '' for the tenant's default.
    project_id String,
    analytics_days UInt8,
    content_days UInt8
)
ENGINE = Join(ANY, LEFT, tenant_id, project_id)
SETTINGS join_any_take_last_row = 1;

ALTER TABLE {db}.spans {on_cluster}
    ADD COLUMN IF NOT EXISTS analytics_days UInt8 DEFAULT coalesce(joinGetOrNull('{db_name}.retention_settings', 'analytics_days', CAST(tenant_id, 'String'), CAST(project_id, 'String')), joinGetOrNull('{db_name}.retention_settings', 'analytics_days', CAST(tenant_id, 'String'), ''), toUInt8(90)),
    ADD COLUMN IF NOT EXISTS content_days UInt8 DEFAULT coalesce(joinGetOrNull('{db_name}.retention_settings', 'content_days', CAST(tenant_id, 'String'), CAST(project_id, 'String')), joinGetOrNull('{db_name}.retention_settings', 'content_days', CAST(tenant_id, 'String'), ''), toUInt8(90));
ALTER TABLE {db}.spans {on_cluster}
    MODIFY TTL toDateTime(timestamp) + toIntervalDay(analytics_days)
    SETTINGS materialize_ttl_after_modify = 0;
ALTER TABLE {db}.spans {on_cluster}
    MODIFY COLUMN attributes String TTL toDateTime(timestamp) + toIntervalDay(content_days),
    MODIFY COLUMN events String TTL toDateTime(timestamp) + toIntervalDay(content_days)
    SETTINGS materialize_ttl_after_modify = 0;

ALTER TABLE {db}.span_logs {on_cluster}
    ADD COLUMN IF NOT EXISTS analytics_days UInt8 DEFAULT coalesce(joinGetOrNull('{db_name}.retention_settings', 'analytics_days', CAST(tenant_id, 'String'), CAST(project_id, 'String')), joinGetOrNull('{db_name}.retention_settings', 'analytics_days', CAST(tenant_id, 'String'), ''), toUInt8(90)),
    ADD COLUMN IF NOT EXISTS content_days UInt8 DEFAULT coalesce(joinGetOrNull('{db_name}.retention_settings', 'content_days', CAST(tenant_id, 'String'), CAST(project_id, 'String')), joinGetOrNull('{db_name}.retention_settings', 'content_days', CAST(tenant_id, 'String'), ''), toUInt8(90));
ALTER TABLE {db}.span_logs {on_cluster}
    MODIFY TTL toDateTime(timestamp) + toIntervalDay(content_days)
    SETTINGS materialize_ttl_after_modify = 0;

ALTER TABLE {db}.traces {on_cluster}
    ADD COLUMN IF NOT EXISTS analytics_days UInt8 DEFAULT coalesce(joinGetOrNull('{db_name}.retention_settings', 'analytics_days', CAST(tenant_id, 'String'), CAST(project_id, 'String')), joinGetOrNull('{db_name}.retention_settings', 'analytics_days', CAST(tenant_id, 'String'), ''), toUInt8(90)),
    ADD COLUMN IF NOT EXISTS content_days UInt8 DEFAULT coalesce(joinGetOrNull('{db_name}.retention_settings', 'content_days', CAST(tenant_id, 'String'), CAST(project_id, 'String')), joinGetOrNull('{db_name}.retention_settings', 'content_days', CAST(tenant_id, 'String'), ''), toUInt8(90));
ALTER TABLE {db}.traces {on_cluster}
    MODIFY TTL toDateTime(timestamp) + toIntervalDay(analytics_days)
    SETTINGS materialize_ttl_after_modify = 0;
ALTER TABLE {db}.traces {on_cluster}
    MODIFY COLUMN agent_input_display String TTL toDateTime(timestamp) + toIntervalDay(content_days),
    MODIFY COLUMN agent_input Nullable(String) TTL toDateTime(timestamp) + toIntervalDay(content_days),
    MODIFY COLUMN agent_output Nullable(String) TTL toDateTime(timestamp) + toIntervalDay(content_days),
    MODIFY COLUMN tool_calls String TTL toDateTime(timestamp) + toIntervalDay(content_days)
    SETTINGS materialize_ttl_after_modify = 0;

ALTER TABLE {db}.trace_content {on_cluster}
    ADD COLUMN IF NOT EXISTS analytics_days UInt8 DEFAULT coalesce(joinGetOrNull('{db_name}.retention_settings', 'analytics_days', CAST(tenant_id, 'String'), CAST(project_id, 'String')), joinGetOrNull('{db_name}.retention_settings', 'analytics_days', CAST(tenant_id, 'String'), ''), toUInt8(90)),
    ADD COLUMN IF NOT EXISTS content_days UInt8 DEFAULT coalesce(joinGetOrNull('{db_name}.retention_settings', 'content_days', CAST(tenant_id, 'String'), CAST(project_id, 'String')), joinGetOrNull('{db_name}.retention_settings', 'content_days', CAST(tenant_id, 'String'), ''), toUInt8(90));
ALTER TABLE {db}.trace_content {on_cluster}
    MODIFY TTL toDateTime(timestamp) + toIntervalDay(content_days)
    SETTINGS materialize_ttl_after_modify = 0;

ALTER TABLE {db}.event_trace_processed {on_cluster}
    ADD COLUMN IF NOT EXISTS analytics_days UInt8 DEFAULT coalesce(joinGetOrNull('{db_name}.retention_settings', 'analytics_days', CAST(tenant_id, 'String'), CAST(project_id, 'String')), joinGetOrNull('{db_name}.retention_settings', 'analytics_days', CAST(tenant_id, 'String'), ''), toUInt8(90)),
    ADD COLUMN IF NOT EXISTS content_days UInt8 DEFAULT coalesce(joinGetOrNull('{db_name}.retention_settings', 'content_days', CAST(tenant_id, 'String'), CAST(project_id, 'String')), joinGetOrNull('{db_name}.retention_settings', 'content_days', CAST(tenant_id, 'String'), ''), toUInt8(90));
ALTER TABLE {db}.event_trace_processed {on_cluster}
    MODIFY TTL toDateTime(timestamp) + toIntervalDay(analytics_days)
    SETTINGS materialize_ttl_after_modify = 0;

ALTER TABLE {db}.event_generation_completed {on_cluster}
    ADD COLUMN IF NOT EXISTS analytics_days UInt8 DEFAULT coalesce(joinGetOrNull('{db_name}.retention_settings', 'analytics_days', CAST(tenant_id, 'String'), CAST(project_id, 'String')), joinGetOrNull('{db_name}.retention_settings', 'analytics_days', CAST(tenant_id, 'String'), ''), toUInt8(90)),
    ADD COLUMN IF NOT EXISTS content_days UInt8 DEFAULT coalesce(joinGetOrNull('{db_name}.retention_settings', 'content_days', CAST(tenant_id, 'String'), CAST(project_id, 'String')), joinGetOrNull('{db_name}.retention_settings', 'content_days', CAST(tenant_id, 'String'), ''), toUInt8(90));
ALTER TABLE {db}.event_generation_completed {on_cluster}
    MODIFY TTL toDateTime(timestamp) + toIntervalDay(analytics_days)
    SETTINGS materialize_ttl_after_modify = 0;

ALTER TABLE {db}.event_tool_called {on_cluster}
    ADD COLUMN IF NOT EXISTS analytics_days UInt8 DEFAULT coalesce(joinGetOrNull('{db_name}.retention_settings', 'analytics_days', CAST(tenant_id, 'String'), CAST(project_id, 'String')), joinGetOrNull('{db_name}.retention_settings', 'analytics_days', CAST(tenant_id, 'String'), ''), toUInt8(90)),
    ADD COLUMN IF NOT EXISTS content_days UInt8 DEFAULT coalesce(joinGetOrNull('{db_name}.retention_settings', 'content_days', CAST(tenant_id, 'String'), CAST(project_id, 'String')), joinGetOrNull('{db_name}.retention_settings', 'content_days', CAST(tenant_id, 'String'), ''), toUInt8(90));
ALTER TABLE {db}.event_tool_called {on_cluster}
    MODIFY TTL toDateTime(timestamp) + toIntervalDay(analytics_days)
    SETTINGS materialize_ttl_after_modify = 0;

ALTER TABLE {db}.event_span_errored {on_cluster}
    ADD COLUMN IF NOT EXISTS analytics_days UInt8 DEFAULT coalesce(joinGetOrNull('{db_name}.retention_settings', 'analytics_days', CAST(tenant_id, 'String'), CAST(project_id, 'String')), joinGetOrNull('{db_name}.retention_settings', 'analytics_days', CAST(tenant_id, 'String'), ''), toUInt8(90)),
    ADD COLUMN IF NOT EXISTS content_days UInt8 DEFAULT coalesce(joinGetOrNull('{db_name}.retention_settings', 'content_days', CAST(tenant_id, 'String'), CAST(project_id, 'String')), joinGetOrNull('{db_name}.retention_settings', 'content_days', CAST(tenant_id, 'String'), ''), toUInt8(90));
ALTER TABLE {db}.event_span_errored {on_cluster}
    MODIFY TTL toDateTime(timestamp) + toIntervalDay(analytics_days)
    SETTINGS materialize_ttl_after_modify = 0;

ALTER TABLE {db}.event_issue {on_cluster}
    ADD COLUMN IF NOT EXISTS analytics_days UInt8 DEFAULT coalesce(joinGetOrNull('{db_name}.retention_settings', 'analytics_days', CAST(tenant_id, 'String'), CAST(project_id, 'String')), joinGetOrNull('{db_name}.retention_settings', 'analytics_days', CAST(tenant_id, 'String'), ''), toUInt8(90)),
    ADD COLUMN IF NOT EXISTS content_days UInt8 DEFAULT coalesce(joinGetOrNull('{db_name}.retention_settings', 'content_days', CAST(tenant_id, 'String'), CAST(project_id, 'String')), joinGetOrNull('{db_name}.retention_settings', 'content_days', CAST(tenant_id, 'String'), ''), toUInt8(90));
ALTER TABLE {db}.event_issue {on_cluster}
    MODIFY TTL toDateTime(timestamp) + toIntervalDay(analytics_days)
    SETTINGS materialize_ttl_after_modify = 0;
