-- traces (003, as 005, 015 and 018 left it) in granules of 256 rows instead of 8192, rebuilt
-- (docs/search.md "How it works").
--
-- A granule is what ClickHouse reads at least, and trace summaries are keyed by (tenant, project,
-- trace): a page of a search's results is read by trace id (the traces the text index names, or a
-- slice of the newest traces a common word is checked among), and each id cost a granule of 8192
-- summaries in every part that might hold it. So do the other reads of one trace by id (a trace's
-- stored summary for its detail page, issue agents, the cost backfill). Reads of a whole project (the
-- unsearched list, its total, agent names) read the same rows either way.
--
-- On 200,000 summaries in 7 parts (scratch runs of the engine's own counters, rows the engine
-- selected to read, 8192 -> 256 rows a granule):
--   50 summaries by id, FINAL                      303,842 -> 70,815 (33.2 -> 5.6 MB uncompressed)
--   the same, newest row per id without FINAL      193,647 -> 62,879 (26.2 -> 3.3 MB)
--   10 summaries by id, FINAL                      181,096 -> 22,175
--   one trace's summary (its detail page), FINAL    32,129 -> 2,206
--   the list's first page (FINAL, whole project)   240,812 -> 209,834 (19.6 -> 15.7 MB)
--   its total (count, FINAL)                       228,318 -> 201,944
-- Reads of the whole project select the same rows either way, and took the same time within the
-- noise of a loaded machine (medians of 5 alternating runs, load 10-20: list page 526 / 451 ms,
-- with has_error 449 / 408 ms, total 671 / 907 ms, thread count 23 / 18 ms). The primary index
-- grows 32-fold (about 3,900 entries per million summaries).
--
-- A table setting like the granularity cannot change in place, so the table is rebuilt by the
-- table-rebuild recipe (scripts/clickhouse-rebuilds/table-rebuild.ts writes the statements below), as
-- 009, 010 and 017 were: a copy traces_v019 (columns, column TTLs, key, partitions and TTL as 003,
-- 005, 015 and 018 left them), every row version copied into it with its version column
-- (processed_at: ReplacingMergeTree then keeps the same newest row), the two swapped by EXCHANGE
-- TABLES (atomic), then rows an older process wrote during the copy copied after it, and the old data
-- dropped. That catch-up compares the rows of the last hour of settling times; a preview row an older
-- process writes during the copy carries the oldest possible time (trace-preview.ts) and is not
-- carried: its trace is listed again once it settles, seconds later. Every statement may run again
-- from the top after an interruption anywhere; the file is recorded only after its last statement.

-- traces
-- Rows a stopped earlier run left under the _v019 name that the live table lacks (see above).
CREATE TABLE IF NOT EXISTS {db}.traces_v019 {on_cluster}
(
    tenant_id String,
    project_id String,
    trace_id String,
    otel_trace_id String,
    timestamp DateTime64(3, 'UTC'),
    service_name LowCardinality(String),
    agent_name LowCardinality(String),
    thread_id String,
    release LowCardinality(String),
    agent_input_display String TTL toDateTime(timestamp) + toIntervalDay(content_days),
    agent_input Nullable(String) TTL toDateTime(timestamp) + toIntervalDay(content_days),
    agent_output Nullable(String) TTL toDateTime(timestamp) + toIntervalDay(content_days),
    tool_calls String TTL toDateTime(timestamp) + toIntervalDay(content_days),
    interaction String,
    has_error UInt8,
    total_duration_ms Float64,
    span_count UInt32,
    total_tokens UInt64,
    error_count UInt32,
    models_used Array(LowCardinality(String)),
    stats_tool_calls String,
    estimated_cost_usd Nullable(Float64),
    preview UInt8 DEFAULT 0,
    processed_at DateTime64(3, 'UTC') DEFAULT now64(3),
    analytics_days UInt8 DEFAULT coalesce(joinGetOrNull('{db_name}.retention_settings', 'analytics_days', CAST(tenant_id, 'String'), CAST(project_id, 'String')), joinGetOrNull('{db_name}.retention_settings', 'analytics_days', CAST(tenant_id, 'String'), ''), toUInt8(90)),
    content_days UInt8 DEFAULT coalesce(joinGetOrNull('{db_name}.retention_settings', 'content_days', CAST(tenant_id, 'String'), CAST(project_id, 'String')), joinGetOrNull('{db_name}.retention_settings', 'content_days', CAST(tenant_id, 'String'), ''), toUInt8(90))
)
ENGINE = {replicated}ReplacingMergeTree(processed_at)
PARTITION BY toYYYYMM(timestamp)
ORDER BY (tenant_id, project_id, trace_id)
TTL toDateTime(timestamp) + toIntervalDay(analytics_days)
SETTINGS index_granularity = 256;

INSERT INTO {db}.traces (tenant_id, project_id, trace_id, otel_trace_id, timestamp, service_name, agent_name, thread_id, release, agent_input_display, agent_input, agent_output, tool_calls, interaction, has_error, total_duration_ms, span_count, total_tokens, error_count, models_used, stats_tool_calls, estimated_cost_usd, preview, processed_at, analytics_days, content_days)
SELECT tenant_id, project_id, trace_id, otel_trace_id, timestamp, service_name, agent_name, thread_id, release, agent_input_display, agent_input, agent_output, tool_calls, interaction, has_error, total_duration_ms, span_count, total_tokens, error_count, models_used, stats_tool_calls, estimated_cost_usd, preview, processed_at, analytics_days, content_days
FROM {db}.traces_v019
WHERE (SELECT count() FROM {db}.traces_v019) > 0 AND processed_at >= (SELECT max(processed_at) - INTERVAL 1 HOUR FROM {db}.traces_v019)
    AND cityHash64(tenant_id, project_id, trace_id, processed_at) GLOBAL NOT IN (
        SELECT cityHash64(tenant_id, project_id, trace_id, processed_at) FROM {db}.traces
        WHERE (SELECT count() FROM {db}.traces_v019) > 0 AND processed_at >= (SELECT max(processed_at) - INTERVAL 1 HOUR FROM {db}.traces_v019)
    );

DROP TABLE IF EXISTS {db}.traces_v019 {on_cluster} SYNC;

CREATE TABLE IF NOT EXISTS {db}.traces_v019 {on_cluster}
(
    tenant_id String,
    project_id String,
    trace_id String,
    otel_trace_id String,
    timestamp DateTime64(3, 'UTC'),
    service_name LowCardinality(String),
    agent_name LowCardinality(String),
    thread_id String,
    release LowCardinality(String),
    agent_input_display String TTL toDateTime(timestamp) + toIntervalDay(content_days),
    agent_input Nullable(String) TTL toDateTime(timestamp) + toIntervalDay(content_days),
    agent_output Nullable(String) TTL toDateTime(timestamp) + toIntervalDay(content_days),
    tool_calls String TTL toDateTime(timestamp) + toIntervalDay(content_days),
    interaction String,
    has_error UInt8,
    total_duration_ms Float64,
    span_count UInt32,
    total_tokens UInt64,
    error_count UInt32,
    models_used Array(LowCardinality(String)),
    stats_tool_calls String,
    estimated_cost_usd Nullable(Float64),
    preview UInt8 DEFAULT 0,
    processed_at DateTime64(3, 'UTC') DEFAULT now64(3),
    analytics_days UInt8 DEFAULT coalesce(joinGetOrNull('{db_name}.retention_settings', 'analytics_days', CAST(tenant_id, 'String'), CAST(project_id, 'String')), joinGetOrNull('{db_name}.retention_settings', 'analytics_days', CAST(tenant_id, 'String'), ''), toUInt8(90)),
    content_days UInt8 DEFAULT coalesce(joinGetOrNull('{db_name}.retention_settings', 'content_days', CAST(tenant_id, 'String'), CAST(project_id, 'String')), joinGetOrNull('{db_name}.retention_settings', 'content_days', CAST(tenant_id, 'String'), ''), toUInt8(90))
)
ENGINE = {replicated}ReplacingMergeTree(processed_at)
PARTITION BY toYYYYMM(timestamp)
ORDER BY (tenant_id, project_id, trace_id)
TTL toDateTime(timestamp) + toIntervalDay(analytics_days)
SETTINGS index_granularity = 256;

INSERT INTO {db}.traces_v019 (tenant_id, project_id, trace_id, otel_trace_id, timestamp, service_name, agent_name, thread_id, release, agent_input_display, agent_input, agent_output, tool_calls, interaction, has_error, total_duration_ms, span_count, total_tokens, error_count, models_used, stats_tool_calls, estimated_cost_usd, preview, processed_at, analytics_days, content_days)
SELECT tenant_id, project_id, trace_id, otel_trace_id, timestamp, service_name, agent_name, thread_id, release, agent_input_display, agent_input, agent_output, tool_calls, interaction, has_error, total_duration_ms, span_count, total_tokens, error_count, models_used, stats_tool_calls, estimated_cost_usd, preview, processed_at, analytics_days, content_days
FROM {db}.traces;

EXCHANGE TABLES {db}.traces AND {db}.traces_v019 {on_cluster};

INSERT INTO {db}.traces (tenant_id, project_id, trace_id, otel_trace_id, timestamp, service_name, agent_name, thread_id, release, agent_input_display, agent_input, agent_output, tool_calls, interaction, has_error, total_duration_ms, span_count, total_tokens, error_count, models_used, stats_tool_calls, estimated_cost_usd, preview, processed_at, analytics_days, content_days)
SELECT tenant_id, project_id, trace_id, otel_trace_id, timestamp, service_name, agent_name, thread_id, release, agent_input_display, agent_input, agent_output, tool_calls, interaction, has_error, total_duration_ms, span_count, total_tokens, error_count, models_used, stats_tool_calls, estimated_cost_usd, preview, processed_at, analytics_days, content_days
FROM {db}.traces_v019
WHERE processed_at >= (SELECT max(processed_at) - INTERVAL 1 HOUR FROM {db}.traces_v019)
    AND cityHash64(tenant_id, project_id, trace_id, processed_at) GLOBAL NOT IN (
        SELECT cityHash64(tenant_id, project_id, trace_id, processed_at) FROM {db}.traces
        WHERE processed_at >= (SELECT max(processed_at) - INTERVAL 1 HOUR FROM {db}.traces_v019)
    );

DROP TABLE IF EXISTS {db}.traces_v019 {on_cluster} SYNC;
