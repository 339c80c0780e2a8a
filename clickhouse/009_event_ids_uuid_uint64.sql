-- Issue 17: the per-span event tables store trace_id as UUID and span_id as UInt64, rebuilt.
--
-- FINAL reads the sorting key's columns for every row of the parts it has to check (fresh, unmerged
-- parts: what ingestion writes), and the key ends in the two ids: a 36-character trace id and a
-- 16-character span id as text on every row. As UUID (16 bytes) and UInt64 (8 bytes) FINAL compares
-- and decodes fixed-width numbers, and tool_aggregates' exact distinct-trace count hashes 16 bytes.
-- 4 M generation rows in 16 time-ordered parts, tenant and project LowCardinality as 008 left them
-- (bench/query/final-key-columns.ts, load 1-2): the DSL's by-model statement with FINAL 240 -> 169 ms,
-- the distinct-trace count 710 -> 495 ms; 10 M rows on a quiet machine: 327 -> 238 ms.
--
-- The values fit exactly: ingestion writes trace_id as the canonical (lower-case, dashed) text of a
-- v5 UUID (src/ingest/trace-id.ts) and accepts only span ids of 16 lower-case hex characters, not all
-- zero (src/ingest/span-validation.ts); a UInt64 holds the 8 bytes they spell. Readers print the same
-- text back (toString(trace_id); lower(leftPad(hex(span_id), 16, '0'))), and compare a text value by
-- converting the value once, never the column per row (docs/analytics-query.md).
--
-- A sorting-key type cannot change in place (ALTER refuses it: the sort order changes), so each table
-- is rebuilt by the table-rebuild recipe (scripts/clickhouse-rebuilds/table-rebuild.ts writes the
-- statements below): a copy <table>_v009 with the new types (everything else as before), every row
-- version copied into it with its version column (ReplacingMergeTree then picks the same newest row),
-- the two swapped by EXCHANGE TABLES (atomic), then rows an older process wrote during the copy are
-- copied after it (the same key and version are not copied twice), and the old data dropped. The
-- catch-up looks at rows from an hour before the old table's newest row — nothing writes to the old
-- table after the swap, so that anchor cannot move — and compares 8-byte hashes of (key, version),
-- not whole rows, so its set stays small whatever the ingest rate.
--
-- Every statement may run again from the top after an interruption anywhere: a table stopped
-- between its EXCHANGE and its catch-up has its old data (text ids) under the _v009 name, and its
-- rows the live table lacks are carried over first; then the copy starts by dropping the _v009
-- table. The conversion reads either type (toTypeName is a constant, so only one branch of the `if`
-- is evaluated: a table already converted is copied as it is), so a table interrupted between its
-- EXCHANGE and its DROP is found converted and copied again. The file is recorded only after its
-- last statement, so a finished run is never repeated.

-- event_generation_completed
-- Rows a stopped earlier run left under the _v009 name that the live table lacks (see above).
CREATE TABLE IF NOT EXISTS {db}.event_generation_completed_v009 {on_cluster}
(
    tenant_id LowCardinality(String),
    project_id LowCardinality(String),
    timestamp DateTime64(3, 'UTC'),
    actor LowCardinality(String),
    surface LowCardinality(String),
    user_id LowCardinality(String),
    api_key_id LowCardinality(String),
    model LowCardinality(String),
    provider LowCardinality(String),
    trace_id UUID CODEC(LZ4),
    span_id UInt64 CODEC(LZ4),
    duration_ms Float64,
    input_tokens UInt64,
    output_tokens UInt64,
    cached_input_tokens UInt64,
    cache_write_input_tokens UInt64 DEFAULT 0,
    tps Nullable(Float64),
    error UInt8,
    inserted_at DateTime64(3, 'UTC') DEFAULT now64(3)
)
ENGINE = {replicated}ReplacingMergeTree(inserted_at)
PARTITION BY toYYYYMM(timestamp)
ORDER BY (tenant_id, project_id, timestamp, trace_id, span_id)
TTL toDateTime(timestamp) + INTERVAL 90 DAY;

INSERT INTO {db}.event_generation_completed (tenant_id, project_id, timestamp, actor, surface, user_id, api_key_id, model, provider, trace_id, span_id, duration_ms, input_tokens, output_tokens, cached_input_tokens, cache_write_input_tokens, tps, error, inserted_at)
SELECT tenant_id, project_id, timestamp, actor, surface, user_id, api_key_id, model, provider, toUUID(trace_id), if(toTypeName(span_id) = 'UInt64', toUInt64(span_id), reinterpretAsUInt64(reverse(unhex(span_id)))), duration_ms, input_tokens, output_tokens, cached_input_tokens, cache_write_input_tokens, tps, error, inserted_at
FROM {db}.event_generation_completed_v009
WHERE (SELECT count() FROM {db}.event_generation_completed_v009) > 0 AND toTypeName(span_id) = 'String' AND inserted_at >= (SELECT max(inserted_at) - INTERVAL 1 HOUR FROM {db}.event_generation_completed_v009)
    AND cityHash64(tenant_id, project_id, timestamp, toUUID(trace_id), if(toTypeName(span_id) = 'UInt64', toUInt64(span_id), reinterpretAsUInt64(reverse(unhex(span_id)))), inserted_at) GLOBAL NOT IN (
        SELECT cityHash64(tenant_id, project_id, timestamp, trace_id, span_id, inserted_at) FROM {db}.event_generation_completed
        WHERE (SELECT count() FROM {db}.event_generation_completed_v009) > 0 AND inserted_at >= (SELECT max(inserted_at) - INTERVAL 1 HOUR FROM {db}.event_generation_completed_v009)
    );

DROP TABLE IF EXISTS {db}.event_generation_completed_v009 {on_cluster} SYNC;

CREATE TABLE IF NOT EXISTS {db}.event_generation_completed_v009 {on_cluster}
(
    tenant_id LowCardinality(String),
    project_id LowCardinality(String),
    timestamp DateTime64(3, 'UTC'),
    actor LowCardinality(String),
    surface LowCardinality(String),
    user_id LowCardinality(String),
    api_key_id LowCardinality(String),
    model LowCardinality(String),
    provider LowCardinality(String),
    trace_id UUID CODEC(LZ4),
    span_id UInt64 CODEC(LZ4),
    duration_ms Float64,
    input_tokens UInt64,
    output_tokens UInt64,
    cached_input_tokens UInt64,
    cache_write_input_tokens UInt64 DEFAULT 0,
    tps Nullable(Float64),
    error UInt8,
    inserted_at DateTime64(3, 'UTC') DEFAULT now64(3)
)
ENGINE = {replicated}ReplacingMergeTree(inserted_at)
PARTITION BY toYYYYMM(timestamp)
ORDER BY (tenant_id, project_id, timestamp, trace_id, span_id)
TTL toDateTime(timestamp) + INTERVAL 90 DAY;

INSERT INTO {db}.event_generation_completed_v009 (tenant_id, project_id, timestamp, actor, surface, user_id, api_key_id, model, provider, trace_id, span_id, duration_ms, input_tokens, output_tokens, cached_input_tokens, cache_write_input_tokens, tps, error, inserted_at)
SELECT tenant_id, project_id, timestamp, actor, surface, user_id, api_key_id, model, provider, toUUID(trace_id), if(toTypeName(span_id) = 'UInt64', toUInt64(span_id), reinterpretAsUInt64(reverse(unhex(span_id)))), duration_ms, input_tokens, output_tokens, cached_input_tokens, cache_write_input_tokens, tps, error, inserted_at
FROM {db}.event_generation_completed;

EXCHANGE TABLES {db}.event_generation_completed AND {db}.event_generation_completed_v009 {on_cluster};

INSERT INTO {db}.event_generation_completed (tenant_id, project_id, timestamp, actor, surface, user_id, api_key_id, model, provider, trace_id, span_id, duration_ms, input_tokens, output_tokens, cached_input_tokens, cache_write_input_tokens, tps, error, inserted_at)
SELECT tenant_id, project_id, timestamp, actor, surface, user_id, api_key_id, model, provider, toUUID(trace_id), if(toTypeName(span_id) = 'UInt64', toUInt64(span_id), reinterpretAsUInt64(reverse(unhex(span_id)))), duration_ms, input_tokens, output_tokens, cached_input_tokens, cache_write_input_tokens, tps, error, inserted_at
FROM {db}.event_generation_completed_v009
WHERE inserted_at >= (SELECT max(inserted_at) - INTERVAL 1 HOUR FROM {db}.event_generation_completed_v009)
    AND cityHash64(tenant_id, project_id, timestamp, toUUID(trace_id), if(toTypeName(span_id) = 'UInt64', toUInt64(span_id), reinterpretAsUInt64(reverse(unhex(span_id)))), inserted_at) GLOBAL NOT IN (
        SELECT cityHash64(tenant_id, project_id, timestamp, trace_id, span_id, inserted_at) FROM {db}.event_generation_completed
        WHERE inserted_at >= (SELECT max(inserted_at) - INTERVAL 1 HOUR FROM {db}.event_generation_completed_v009)
    );

DROP TABLE IF EXISTS {db}.event_generation_completed_v009 {on_cluster} SYNC;

-- event_tool_called
-- Rows a stopped earlier run left under the _v009 name that the live table lacks (see above).
CREATE TABLE IF NOT EXISTS {db}.event_tool_called_v009 {on_cluster}
(
    tenant_id LowCardinality(String),
    project_id LowCardinality(String),
    timestamp DateTime64(3, 'UTC'),
    actor LowCardinality(String),
    surface LowCardinality(String),
    user_id LowCardinality(String),
    api_key_id LowCardinality(String),
    tool LowCardinality(String),
    agent_name LowCardinality(String),
    trace_id UUID CODEC(LZ4),
    span_id UInt64 CODEC(LZ4),
    duration_ms Float64,
    output_tokens UInt64,
    error UInt8,
    inserted_at DateTime64(3, 'UTC') DEFAULT now64(3)
)
ENGINE = {replicated}ReplacingMergeTree(inserted_at)
PARTITION BY toYYYYMM(timestamp)
ORDER BY (tenant_id, project_id, timestamp, trace_id, span_id)
TTL toDateTime(timestamp) + INTERVAL 90 DAY;

INSERT INTO {db}.event_tool_called (tenant_id, project_id, timestamp, actor, surface, user_id, api_key_id, tool, agent_name, trace_id, span_id, duration_ms, output_tokens, error, inserted_at)
SELECT tenant_id, project_id, timestamp, actor, surface, user_id, api_key_id, tool, agent_name, toUUID(trace_id), if(toTypeName(span_id) = 'UInt64', toUInt64(span_id), reinterpretAsUInt64(reverse(unhex(span_id)))), duration_ms, output_tokens, error, inserted_at
FROM {db}.event_tool_called_v009
WHERE (SELECT count() FROM {db}.event_tool_called_v009) > 0 AND toTypeName(span_id) = 'String' AND inserted_at >= (SELECT max(inserted_at) - INTERVAL 1 HOUR FROM {db}.event_tool_called_v009)
    AND cityHash64(tenant_id, project_id, timestamp, toUUID(trace_id), if(toTypeName(span_id) = 'UInt64', toUInt64(span_id), reinterpretAsUInt64(reverse(unhex(span_id)))), inserted_at) GLOBAL NOT IN (
        SELECT cityHash64(tenant_id, project_id, timestamp, trace_id, span_id, inserted_at) FROM {db}.event_tool_called
        WHERE (SELECT count() FROM {db}.event_tool_called_v009) > 0 AND inserted_at >= (SELECT max(inserted_at) - INTERVAL 1 HOUR FROM {db}.event_tool_called_v009)
    );

DROP TABLE IF EXISTS {db}.event_tool_called_v009 {on_cluster} SYNC;

CREATE TABLE IF NOT EXISTS {db}.event_tool_called_v009 {on_cluster}
(
    tenant_id LowCardinality(String),
    project_id LowCardinality(String),
    timestamp DateTime64(3, 'UTC'),
    actor LowCardinality(String),
    surface LowCardinality(String),
    user_id LowCardinality(String),
    api_key_id LowCardinality(String),
    tool LowCardinality(String),
    agent_name LowCardinality(String),
    trace_id UUID CODEC(LZ4),
    span_id UInt64 CODEC(LZ4),
    duration_ms Float64,
    output_tokens UInt64,
    error UInt8,
    inserted_at DateTime64(3, 'UTC') DEFAULT now64(3)
)
ENGINE = {replicated}ReplacingMergeTree(inserted_at)
PARTITION BY toYYYYMM(timestamp)
ORDER BY (tenant_id, project_id, timestamp, trace_id, span_id)
TTL toDateTime(timestamp) + INTERVAL 90 DAY;

INSERT INTO {db}.event_tool_called_v009 (tenant_id, project_id, timestamp, actor, surface, user_id, api_key_id, tool, agent_name, trace_id, span_id, duration_ms, output_tokens, error, inserted_at)
SELECT tenant_id, project_id, timestamp, actor, surface, user_id, api_key_id, tool, agent_name, toUUID(trace_id), if(toTypeName(span_id) = 'UInt64', toUInt64(span_id), reinterpretAsUInt64(reverse(unhex(span_id)))), duration_ms, output_tokens, error, inserted_at
FROM {db}.event_tool_called;

EXCHANGE TABLES {db}.event_tool_called AND {db}.event_tool_called_v009 {on_cluster};

INSERT INTO {db}.event_tool_called (tenant_id, project_id, timestamp, actor, surface, user_id, api_key_id, tool, agent_name, trace_id, span_id, duration_ms, output_tokens, error, inserted_at)
SELECT tenant_id, project_id, timestamp, actor, surface, user_id, api_key_id, tool, agent_name, toUUID(trace_id), if(toTypeName(span_id) = 'UInt64', toUInt64(span_id), reinterpretAsUInt64(reverse(unhex(span_id)))), duration_ms, output_tokens, error, inserted_at
FROM {db}.event_tool_called_v009
WHERE inserted_at >= (SELECT max(inserted_at) - INTERVAL 1 HOUR FROM {db}.event_tool_called_v009)
    AND cityHash64(tenant_id, project_id, timestamp, toUUID(trace_id), if(toTypeName(span_id) = 'UInt64', toUInt64(span_id), reinterpretAsUInt64(reverse(unhex(span_id)))), inserted_at) GLOBAL NOT IN (
        SELECT cityHash64(tenant_id, project_id, timestamp, trace_id, span_id, inserted_at) FROM {db}.event_tool_called
        WHERE inserted_at >= (SELECT max(inserted_at) - INTERVAL 1 HOUR FROM {db}.event_tool_called_v009)
    );

DROP TABLE IF EXISTS {db}.event_tool_called_v009 {on_cluster} SYNC;

-- event_span_errored
-- Rows a stopped earlier run left under the _v009 name that the live table lacks (see above).
CREATE TABLE IF NOT EXISTS {db}.event_span_errored_v009 {on_cluster}
(
    tenant_id LowCardinality(String),
    project_id LowCardinality(String),
    timestamp DateTime64(3, 'UTC'),
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
PARTITION BY toYYYYMM(timestamp)
ORDER BY (tenant_id, project_id, timestamp, trace_id, span_id)
TTL toDateTime(timestamp) + INTERVAL 90 DAY;

INSERT INTO {db}.event_span_errored (tenant_id, project_id, timestamp, actor, surface, user_id, api_key_id, span_name, trace_id, span_id, inserted_at)
SELECT tenant_id, project_id, timestamp, actor, surface, user_id, api_key_id, span_name, toUUID(trace_id), if(toTypeName(span_id) = 'UInt64', toUInt64(span_id), reinterpretAsUInt64(reverse(unhex(span_id)))), inserted_at
FROM {db}.event_span_errored_v009
WHERE (SELECT count() FROM {db}.event_span_errored_v009) > 0 AND toTypeName(span_id) = 'String' AND inserted_at >= (SELECT max(inserted_at) - INTERVAL 1 HOUR FROM {db}.event_span_errored_v009)
    AND cityHash64(tenant_id, project_id, timestamp, toUUID(trace_id), if(toTypeName(span_id) = 'UInt64', toUInt64(span_id), reinterpretAsUInt64(reverse(unhex(span_id)))), inserted_at) GLOBAL NOT IN (
        SELECT cityHash64(tenant_id, project_id, timestamp, trace_id, span_id, inserted_at) FROM {db}.event_span_errored
        WHERE (SELECT count() FROM {db}.event_span_errored_v009) > 0 AND inserted_at >= (SELECT max(inserted_at) - INTERVAL 1 HOUR FROM {db}.event_span_errored_v009)
    );

DROP TABLE IF EXISTS {db}.event_span_errored_v009 {on_cluster} SYNC;

CREATE TABLE IF NOT EXISTS {db}.event_span_errored_v009 {on_cluster}
(
    tenant_id LowCardinality(String),
    project_id LowCardinality(String),
    timestamp DateTime64(3, 'UTC'),
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
PARTITION BY toYYYYMM(timestamp)
ORDER BY (tenant_id, project_id, timestamp, trace_id, span_id)
TTL toDateTime(timestamp) + INTERVAL 90 DAY;

INSERT INTO {db}.event_span_errored_v009 (tenant_id, project_id, timestamp, actor, surface, user_id, api_key_id, span_name, trace_id, span_id, inserted_at)
SELECT tenant_id, project_id, timestamp, actor, surface, user_id, api_key_id, span_name, toUUID(trace_id), if(toTypeName(span_id) = 'UInt64', toUInt64(span_id), reinterpretAsUInt64(reverse(unhex(span_id)))), inserted_at
FROM {db}.event_span_errored;

EXCHANGE TABLES {db}.event_span_errored AND {db}.event_span_errored_v009 {on_cluster};

INSERT INTO {db}.event_span_errored (tenant_id, project_id, timestamp, actor, surface, user_id, api_key_id, span_name, trace_id, span_id, inserted_at)
SELECT tenant_id, project_id, timestamp, actor, surface, user_id, api_key_id, span_name, toUUID(trace_id), if(toTypeName(span_id) = 'UInt64', toUInt64(span_id), reinterpretAsUInt64(reverse(unhex(span_id)))), inserted_at
FROM {db}.event_span_errored_v009
WHERE inserted_at >= (SELECT max(inserted_at) - INTERVAL 1 HOUR FROM {db}.event_span_errored_v009)
    AND cityHash64(tenant_id, project_id, timestamp, toUUID(trace_id), if(toTypeName(span_id) = 'UInt64', toUInt64(span_id), reinterpretAsUInt64(reverse(unhex(span_id)))), inserted_at) GLOBAL NOT IN (
        SELECT cityHash64(tenant_id, project_id, timestamp, trace_id, span_id, inserted_at) FROM {db}.event_span_errored
        WHERE inserted_at >= (SELECT max(inserted_at) - INTERVAL 1 HOUR FROM {db}.event_span_errored_v009)
    );

DROP TABLE IF EXISTS {db}.event_span_errored_v009 {on_cluster} SYNC;
