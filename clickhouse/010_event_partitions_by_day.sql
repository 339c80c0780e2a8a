-- Issue 17: the per-span event tables partitioned by day instead of by month, and two codecs, rebuilt.
--
-- Their sorting key holds `timestamp`, so two versions of a row always share a partition and FINAL
-- merges each partition on its own (do_not_merge_across_partitions_select_final: the query DSL sets
-- it; the engine decides so itself for these tables). A partition that holds a single part which is
-- already free of repeats (the engine's own merge or deduplicated insert, level > 0) is then read
-- without FINAL's merge at all. By month, the current month's partition holds every fresh part of the
-- month, so a 30-day read merged them all under FINAL; by day, only the partitions that still hold
-- several parts are merged: on a running installation today's and those late spans reached, while
-- every settled day is read as a plain scan. The engine's merge policy alone may leave a day in a few
-- parts for good (it merges parts of similar size), so a day whose parts are all an hour old is merged
-- into one (min_age_to_force_merge_seconds, per partition: once per day, and again after late spans). 10 M generation rows in 16 time-ordered inserts with the
-- engine's merges running (bench/query/final-settings.ts): the DSL's by-model statement with FINAL
-- p50 / p95 295 / 355 -> 262 / 276 ms (plain, not exact: 208 / 215).
--
-- Codecs (bench/query/column-widths.ts, 10 M merged rows): rows are sorted by time within a part, so
-- `timestamp` as deltas (Delta, LZ4) compresses 48 MiB -> 0.4 MiB and every read of the window filter
-- decodes far less (the by-model scan 79 -> 44 ms); token counts are small integers, bit-packed by T64
-- (36 -> 17 MiB; token sums by model 134 -> 113 ms). Together: the DSL's by-model statement 236 ->
-- 150 ms, model_scorecard's generation statement 279 -> 223 ms. Values are unchanged.
--
-- An insert block past `max_partitions_per_insert_block` (100) partitions is refused by default; one
-- flush holds spans from 90 days back to INGEST_MAX_FUTURE_SKEW_MS ahead of the server clock, so every
-- insert carries throw_on_max_partitions_per_insert_block = 0 (a warning instead; src/platform/clickhouse/clickhouse.ts).
--
-- A partition key cannot change in place, so each table is rebuilt by the table-rebuild recipe
-- (scripts/clickhouse-rebuilds/table-rebuild.ts writes the statements below), as 009 was: a copy <table>_v010 (everything as before but the partition key and the codecs), every row version
-- copied into it with its version column, the two swapped by EXCHANGE TABLES (atomic), then rows an
-- older process wrote during the copy copied after it, and the old data dropped. The catch-up compares
-- 8-byte hashes of key and version over the rows from an hour before the old table's newest row.
-- Nothing writes to the old table after the swap, so that anchor does not move: not with rows written
-- to the new table after it (whose time, on a cluster, comes from another node's clock) nor with a
-- catch-up interrupted half-way. It covers every row written during a copy of up to an hour (0.74 s per
-- million rows here) and keeps the compared set to the last hour's rows.
--
-- Every statement may run again from the top after an interruption anywhere: each table first
-- carries over from a <table>_v010 left by an earlier run whatever rows its live table lacks (after
-- a stop between EXCHANGE and catch-up, that is the old data with the late rows; before the EXCHANGE,
-- a half-made copy whose rows the live table all holds: nothing; on a normal run the name is new and
-- empty, and the count guard keeps the statement from reading the live table at all); then the copy
-- starts afresh. A table interrupted between its EXCHANGE and its DROP is copied again (the same
-- rows). The file is recorded only after its last statement, so a finished run is never repeated.

-- event_generation_completed
-- Rows a stopped earlier run left under the _v010 name that the live table lacks (see above).
CREATE TABLE IF NOT EXISTS {db}.event_generation_completed_v010 {on_cluster}
(
    tenant_id LowCardinality(String),
    project_id LowCardinality(String),
    timestamp DateTime64(3, 'UTC') CODEC(Delta, LZ4),
    actor LowCardinality(String),
    surface LowCardinality(String),
    user_id LowCardinality(String),
    api_key_id LowCardinality(String),
    model LowCardinality(String),
    provider LowCardinality(String),
    trace_id UUID CODEC(LZ4),
    span_id UInt64 CODEC(LZ4),
    duration_ms Float64,
    input_tokens UInt64 CODEC(T64, LZ4),
    output_tokens UInt64 CODEC(T64, LZ4),
    cached_input_tokens UInt64 CODEC(T64, LZ4),
    cache_write_input_tokens UInt64 DEFAULT 0 CODEC(T64, LZ4),
    tps Nullable(Float64),
    error UInt8,
    inserted_at DateTime64(3, 'UTC') DEFAULT now64(3)
)
ENGINE = {replicated}ReplacingMergeTree(inserted_at)
PARTITION BY toDate(timestamp)
ORDER BY (tenant_id, project_id, timestamp, trace_id, span_id)
TTL toDateTime(timestamp) + INTERVAL 90 DAY
SETTINGS min_age_to_force_merge_seconds = 3600, min_age_to_force_merge_on_partition_only = 1;

INSERT INTO {db}.event_generation_completed (tenant_id, project_id, timestamp, actor, surface, user_id, api_key_id, model, provider, trace_id, span_id, duration_ms, input_tokens, output_tokens, cached_input_tokens, cache_write_input_tokens, tps, error, inserted_at)
SELECT tenant_id, project_id, timestamp, actor, surface, user_id, api_key_id, model, provider, trace_id, span_id, duration_ms, input_tokens, output_tokens, cached_input_tokens, cache_write_input_tokens, tps, error, inserted_at
FROM {db}.event_generation_completed_v010
WHERE (SELECT count() FROM {db}.event_generation_completed_v010) > 0 AND inserted_at >= (SELECT max(inserted_at) - INTERVAL 1 HOUR FROM {db}.event_generation_completed_v010)
    AND cityHash64(tenant_id, project_id, timestamp, trace_id, span_id, inserted_at) GLOBAL NOT IN (
        SELECT cityHash64(tenant_id, project_id, timestamp, trace_id, span_id, inserted_at) FROM {db}.event_generation_completed
        WHERE (SELECT count() FROM {db}.event_generation_completed_v010) > 0 AND inserted_at >= (SELECT max(inserted_at) - INTERVAL 1 HOUR FROM {db}.event_generation_completed_v010)
    );

DROP TABLE IF EXISTS {db}.event_generation_completed_v010 {on_cluster} SYNC;

CREATE TABLE IF NOT EXISTS {db}.event_generation_completed_v010 {on_cluster}
(
    tenant_id LowCardinality(String),
    project_id LowCardinality(String),
    timestamp DateTime64(3, 'UTC') CODEC(Delta, LZ4),
    actor LowCardinality(String),
    surface LowCardinality(String),
    user_id LowCardinality(String),
    api_key_id LowCardinality(String),
    model LowCardinality(String),
    provider LowCardinality(String),
    trace_id UUID CODEC(LZ4),
    span_id UInt64 CODEC(LZ4),
    duration_ms Float64,
    input_tokens UInt64 CODEC(T64, LZ4),
    output_tokens UInt64 CODEC(T64, LZ4),
    cached_input_tokens UInt64 CODEC(T64, LZ4),
    cache_write_input_tokens UInt64 DEFAULT 0 CODEC(T64, LZ4),
    tps Nullable(Float64),
    error UInt8,
    inserted_at DateTime64(3, 'UTC') DEFAULT now64(3)
)
ENGINE = {replicated}ReplacingMergeTree(inserted_at)
PARTITION BY toDate(timestamp)
ORDER BY (tenant_id, project_id, timestamp, trace_id, span_id)
TTL toDateTime(timestamp) + INTERVAL 90 DAY
SETTINGS min_age_to_force_merge_seconds = 3600, min_age_to_force_merge_on_partition_only = 1;

INSERT INTO {db}.event_generation_completed_v010 (tenant_id, project_id, timestamp, actor, surface, user_id, api_key_id, model, provider, trace_id, span_id, duration_ms, input_tokens, output_tokens, cached_input_tokens, cache_write_input_tokens, tps, error, inserted_at)
SELECT tenant_id, project_id, timestamp, actor, surface, user_id, api_key_id, model, provider, trace_id, span_id, duration_ms, input_tokens, output_tokens, cached_input_tokens, cache_write_input_tokens, tps, error, inserted_at
FROM {db}.event_generation_completed;

EXCHANGE TABLES {db}.event_generation_completed AND {db}.event_generation_completed_v010 {on_cluster};

INSERT INTO {db}.event_generation_completed (tenant_id, project_id, timestamp, actor, surface, user_id, api_key_id, model, provider, trace_id, span_id, duration_ms, input_tokens, output_tokens, cached_input_tokens, cache_write_input_tokens, tps, error, inserted_at)
SELECT tenant_id, project_id, timestamp, actor, surface, user_id, api_key_id, model, provider, trace_id, span_id, duration_ms, input_tokens, output_tokens, cached_input_tokens, cache_write_input_tokens, tps, error, inserted_at
FROM {db}.event_generation_completed_v010
WHERE inserted_at >= (SELECT max(inserted_at) - INTERVAL 1 HOUR FROM {db}.event_generation_completed_v010)
    AND cityHash64(tenant_id, project_id, timestamp, trace_id, span_id, inserted_at) GLOBAL NOT IN (
        SELECT cityHash64(tenant_id, project_id, timestamp, trace_id, span_id, inserted_at) FROM {db}.event_generation_completed
        WHERE inserted_at >= (SELECT max(inserted_at) - INTERVAL 1 HOUR FROM {db}.event_generation_completed_v010)
    );

DROP TABLE IF EXISTS {db}.event_generation_completed_v010 {on_cluster} SYNC;

-- event_tool_called
-- Rows a stopped earlier run left under the _v010 name that the live table lacks (see above).
CREATE TABLE IF NOT EXISTS {db}.event_tool_called_v010 {on_cluster}
(
    tenant_id LowCardinality(String),
    project_id LowCardinality(String),
    timestamp DateTime64(3, 'UTC') CODEC(Delta, LZ4),
    actor LowCardinality(String),
    surface LowCardinality(String),
    user_id LowCardinality(String),
    api_key_id LowCardinality(String),
    tool LowCardinality(String),
    agent_name LowCardinality(String),
    trace_id UUID CODEC(LZ4),
    span_id UInt64 CODEC(LZ4),
    duration_ms Float64,
    output_tokens UInt64 CODEC(T64, LZ4),
    error UInt8,
    inserted_at DateTime64(3, 'UTC') DEFAULT now64(3)
)
ENGINE = {replicated}ReplacingMergeTree(inserted_at)
PARTITION BY toDate(timestamp)
ORDER BY (tenant_id, project_id, timestamp, trace_id, span_id)
TTL toDateTime(timestamp) + INTERVAL 90 DAY
SETTINGS min_age_to_force_merge_seconds = 3600, min_age_to_force_merge_on_partition_only = 1;

INSERT INTO {db}.event_tool_called (tenant_id, project_id, timestamp, actor, surface, user_id, api_key_id, tool, agent_name, trace_id, span_id, duration_ms, output_tokens, error, inserted_at)
SELECT tenant_id, project_id, timestamp, actor, surface, user_id, api_key_id, tool, agent_name, trace_id, span_id, duration_ms, output_tokens, error, inserted_at
FROM {db}.event_tool_called_v010
WHERE (SELECT count() FROM {db}.event_tool_called_v010) > 0 AND inserted_at >= (SELECT max(inserted_at) - INTERVAL 1 HOUR FROM {db}.event_tool_called_v010)
    AND cityHash64(tenant_id, project_id, timestamp, trace_id, span_id, inserted_at) GLOBAL NOT IN (
        SELECT cityHash64(tenant_id, project_id, timestamp, trace_id, span_id, inserted_at) FROM {db}.event_tool_called
        WHERE (SELECT count() FROM {db}.event_tool_called_v010) > 0 AND inserted_at >= (SELECT max(inserted_at) - INTERVAL 1 HOUR FROM {db}.event_tool_called_v010)
    );

DROP TABLE IF EXISTS {db}.event_tool_called_v010 {on_cluster} SYNC;

CREATE TABLE IF NOT EXISTS {db}.event_tool_called_v010 {on_cluster}
(
    tenant_id LowCardinality(String),
    project_id LowCardinality(String),
    timestamp DateTime64(3, 'UTC') CODEC(Delta, LZ4),
    actor LowCardinality(String),
    surface LowCardinality(String),
    user_id LowCardinality(String),
    api_key_id LowCardinality(String),
    tool LowCardinality(String),
    agent_name LowCardinality(String),
    trace_id UUID CODEC(LZ4),
    span_id UInt64 CODEC(LZ4),
    duration_ms Float64,
    output_tokens UInt64 CODEC(T64, LZ4),
    error UInt8,
    inserted_at DateTime64(3, 'UTC') DEFAULT now64(3)
)
ENGINE = {replicated}ReplacingMergeTree(inserted_at)
PARTITION BY toDate(timestamp)
ORDER BY (tenant_id, project_id, timestamp, trace_id, span_id)
TTL toDateTime(timestamp) + INTERVAL 90 DAY
SETTINGS min_age_to_force_merge_seconds = 3600, min_age_to_force_merge_on_partition_only = 1;

INSERT INTO {db}.event_tool_called_v010 (tenant_id, project_id, timestamp, actor, surface, user_id, api_key_id, tool, agent_name, trace_id, span_id, duration_ms, output_tokens, error, inserted_at)
SELECT tenant_id, project_id, timestamp, actor, surface, user_id, api_key_id, tool, agent_name, trace_id, span_id, duration_ms, output_tokens, error, inserted_at
FROM {db}.event_tool_called;

EXCHANGE TABLES {db}.event_tool_called AND {db}.event_tool_called_v010 {on_cluster};

INSERT INTO {db}.event_tool_called (tenant_id, project_id, timestamp, actor, surface, user_id, api_key_id, tool, agent_name, trace_id, span_id, duration_ms, output_tokens, error, inserted_at)
SELECT tenant_id, project_id, timestamp, actor, surface, user_id, api_key_id, tool, agent_name, trace_id, span_id, duration_ms, output_tokens, error, inserted_at
FROM {db}.event_tool_called_v010
WHERE inserted_at >= (SELECT max(inserted_at) - INTERVAL 1 HOUR FROM {db}.event_tool_called_v010)
    AND cityHash64(tenant_id, project_id, timestamp, trace_id, span_id, inserted_at) GLOBAL NOT IN (
        SELECT cityHash64(tenant_id, project_id, timestamp, trace_id, span_id, inserted_at) FROM {db}.event_tool_called
        WHERE inserted_at >= (SELECT max(inserted_at) - INTERVAL 1 HOUR FROM {db}.event_tool_called_v010)
    );

DROP TABLE IF EXISTS {db}.event_tool_called_v010 {on_cluster} SYNC;

-- event_span_errored
-- Rows a stopped earlier run left under the _v010 name that the live table lacks (see above).
CREATE TABLE IF NOT EXISTS {db}.event_span_errored_v010 {on_cluster}
(
    tenant_id LowCardinality(String),
    project_id LowCardinality(String),
    timestamp DateTime64(3, 'UTC') CODEC(Delta, LZ4),
    actor LowCardinality(String),
    surface LowCardinality(String),
    user_id LowCardinality(String),
    api_key_id LowCardinality(String),
    span_name LowCardinality(String),
    trace_id UUID CODEC(LZ4),
    span_id UInt64 CODEC(LZ4),
    inserted_at DateTime64(3, 'UTC') DEFAULT now64(3)
)
ENGINE = {replicated}ReplacingMergeTree(inserted_at)
PARTITION BY toDate(timestamp)
ORDER BY (tenant_id, project_id, timestamp, trace_id, span_id)
TTL toDateTime(timestamp) + INTERVAL 90 DAY
SETTINGS min_age_to_force_merge_seconds = 3600, min_age_to_force_merge_on_partition_only = 1;

INSERT INTO {db}.event_span_errored (tenant_id, project_id, timestamp, actor, surface, user_id, api_key_id, span_name, trace_id, span_id, inserted_at)
SELECT tenant_id, project_id, timestamp, actor, surface, user_id, api_key_id, span_name, trace_id, span_id, inserted_at
FROM {db}.event_span_errored_v010
WHERE (SELECT count() FROM {db}.event_span_errored_v010) > 0 AND inserted_at >= (SELECT max(inserted_at) - INTERVAL 1 HOUR FROM {db}.event_span_errored_v010)
    AND cityHash64(tenant_id, project_id, timestamp, trace_id, span_id, inserted_at) GLOBAL NOT IN (
        SELECT cityHash64(tenant_id, project_id, timestamp, trace_id, span_id, inserted_at) FROM {db}.event_span_errored
        WHERE (SELECT count() FROM {db}.event_span_errored_v010) > 0 AND inserted_at >= (SELECT max(inserted_at) - INTERVAL 1 HOUR FROM {db}.event_span_errored_v010)
    );

DROP TABLE IF EXISTS {db}.event_span_errored_v010 {on_cluster} SYNC;

CREATE TABLE IF NOT EXISTS {db}.event_span_errored_v010 {on_cluster}
(
    tenant_id LowCardinality(String),
    project_id LowCardinality(String),
    timestamp DateTime64(3, 'UTC') CODEC(Delta, LZ4),
    actor LowCardinality(String),
    surface LowCardinality(String),
    user_id LowCardinality(String),
    api_key_id LowCardinality(String),
    span_name LowCardinality(String),
    trace_id UUID CODEC(LZ4),
    span_id UInt64 CODEC(LZ4),
    inserted_at DateTime64(3, 'UTC') DEFAULT now64(3)
)
ENGINE = {replicated}ReplacingMergeTree(inserted_at)
PARTITION BY toDate(timestamp)
ORDER BY (tenant_id, project_id, timestamp, trace_id, span_id)
TTL toDateTime(timestamp) + INTERVAL 90 DAY
SETTINGS min_age_to_force_merge_seconds = 3600, min_age_to_force_merge_on_partition_only = 1;

INSERT INTO {db}.event_span_errored_v010 (tenant_id, project_id, timestamp, actor, surface, user_id, api_key_id, span_name, trace_id, span_id, inserted_at)
SELECT tenant_id, project_id, timestamp, actor, surface, user_id, api_key_id, span_name, trace_id, span_id, inserted_at
FROM {db}.event_span_errored;

EXCHANGE TABLES {db}.event_span_errored AND {db}.event_span_errored_v010 {on_cluster};

INSERT INTO {db}.event_span_errored (tenant_id, project_id, timestamp, actor, surface, user_id, api_key_id, span_name, trace_id, span_id, inserted_at)
SELECT tenant_id, project_id, timestamp, actor, surface, user_id, api_key_id, span_name, trace_id, span_id, inserted_at
FROM {db}.event_span_errored_v010
WHERE inserted_at >= (SELECT max(inserted_at) - INTERVAL 1 HOUR FROM {db}.event_span_errored_v010)
    AND cityHash64(tenant_id, project_id, timestamp, trace_id, span_id, inserted_at) GLOBAL NOT IN (
        SELECT cityHash64(tenant_id, project_id, timestamp, trace_id, span_id, inserted_at) FROM {db}.event_span_errored
        WHERE inserted_at >= (SELECT max(inserted_at) - INTERVAL 1 HOUR FROM {db}.event_span_errored_v010)
    );

DROP TABLE IF EXISTS {db}.event_span_errored_v010 {on_cluster} SYNC;
