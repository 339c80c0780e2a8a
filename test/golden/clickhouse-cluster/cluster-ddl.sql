CREATE TABLE IF NOT EXISTS `lookout`.`schema_migrations` ON CLUSTER `lookout_cluster` (name String, applied_at DateTime64(3, 'UTC') DEFAULT now64(3)) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/all/lookout/schema_migrations', '{replica}') ORDER BY name;

CREATE TABLE IF NOT EXISTS `lookout`.`spans_local` ON CLUSTER `lookout_cluster`
(
    tenant_id String,
    project_id String,
    trace_id String,
    otel_trace_id String,
    span_id String,
    parent_span_id String,
    name String,
    kind LowCardinality(String),
    start_time_ns UInt64,
    end_time_ns UInt64,
    duration_ms Float64,
    status_code LowCardinality(String),
    status_description String,
    service_name String,
    span_class LowCardinality(String),
    model String,
    provider LowCardinality(String),
    input_tokens UInt64,
    output_tokens UInt64,
    cached_input_tokens UInt64,
    agent_name String,
    tool_name String,
    thread_id String,
    attributes String,
    events String,
    resource String,
    scope_name String,
    scope_version String,
    timestamp DateTime64(3, 'UTC'),
    ingested_at DateTime64(3, 'UTC') DEFAULT now64(3)
)
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/lookout/spans_local', '{replica}', ingested_at)
PARTITION BY toYYYYMM(timestamp)
ORDER BY (tenant_id, project_id, trace_id, span_id)
TTL toDateTime(timestamp) + INTERVAL 90 DAY;

CREATE TABLE IF NOT EXISTS `lookout`.`spans` ON CLUSTER `lookout_cluster` AS `lookout`.`spans_local`
ENGINE = Distributed(`lookout_cluster`, `lookout`, `spans_local`, cityHash64(trace_id));

CREATE TABLE IF NOT EXISTS `lookout`.`event_generation_completed_local` ON CLUSTER `lookout_cluster`
(
    tenant_id String,
    project_id String,
    timestamp DateTime64(3, 'UTC'),
    actor LowCardinality(String),
    surface LowCardinality(String),
    user_id String,
    api_key_id String,
    model String,
    provider LowCardinality(String),
    trace_id String,
    span_id String,
    duration_ms Float64,
    input_tokens UInt64,
    output_tokens UInt64,
    cached_input_tokens UInt64,
    tps Nullable(Float64),
    error UInt8,
    inserted_at DateTime64(3, 'UTC') DEFAULT now64(3)
)
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/lookout/event_generation_completed_local', '{replica}', inserted_at)
PARTITION BY toYYYYMM(timestamp)
ORDER BY (tenant_id, project_id, timestamp, trace_id, span_id)
TTL toDateTime(timestamp) + INTERVAL 90 DAY;

CREATE TABLE IF NOT EXISTS `lookout`.`event_generation_completed` ON CLUSTER `lookout_cluster` AS `lookout`.`event_generation_completed_local`
ENGINE = Distributed(`lookout_cluster`, `lookout`, `event_generation_completed_local`, cityHash64(toString(trace_id)));

CREATE TABLE IF NOT EXISTS `lookout`.`event_tool_called_local` ON CLUSTER `lookout_cluster`
(
    tenant_id String,
    project_id String,
    timestamp DateTime64(3, 'UTC'),
    actor LowCardinality(String),
    surface LowCardinality(String),
    user_id String,
    api_key_id String,
    tool String,
    agent_name String,
    trace_id String,
    span_id String,
    duration_ms Float64,
    output_tokens UInt64,
    error UInt8,
    inserted_at DateTime64(3, 'UTC') DEFAULT now64(3)
)
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/lookout/event_tool_called_local', '{replica}', inserted_at)
PARTITION BY toYYYYMM(timestamp)
ORDER BY (tenant_id, project_id, timestamp, trace_id, span_id)
TTL toDateTime(timestamp) + INTERVAL 90 DAY;

CREATE TABLE IF NOT EXISTS `lookout`.`event_tool_called` ON CLUSTER `lookout_cluster` AS `lookout`.`event_tool_called_local`
ENGINE = Distributed(`lookout_cluster`, `lookout`, `event_tool_called_local`, cityHash64(toString(trace_id)));

CREATE TABLE IF NOT EXISTS `lookout`.`event_span_errored_local` ON CLUSTER `lookout_cluster`
(
    tenant_id String,
    project_id String,
    timestamp DateTime64(3, 'UTC'),
    actor LowCardinality(String),
    surface LowCardinality(String),
    user_id String,
    api_key_id String,
    span_name String,
    trace_id String,
    span_id String,
    inserted_at DateTime64(3, 'UTC') DEFAULT now64(3)
)
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/lookout/event_span_errored_local', '{replica}', inserted_at)
PARTITION BY toYYYYMM(timestamp)
ORDER BY (tenant_id, project_id, timestamp, trace_id, span_id)
TTL toDateTime(timestamp) + INTERVAL 90 DAY;

CREATE TABLE IF NOT EXISTS `lookout`.`event_span_errored` ON CLUSTER `lookout_cluster` AS `lookout`.`event_span_errored_local`
ENGINE = Distributed(`lookout_cluster`, `lookout`, `event_span_errored_local`, cityHash64(toString(trace_id)));

CREATE TABLE IF NOT EXISTS `lookout`.`event_trace_processed_local` ON CLUSTER `lookout_cluster`
(
    tenant_id String,
    project_id String,
    timestamp DateTime64(3, 'UTC'),
    actor LowCardinality(String),
    surface LowCardinality(String),
    user_id String,
    api_key_id String,
    trace_id String,
    agent_name String,
    root_status_code LowCardinality(String),
    has_root UInt8,
    root_duration_ms Nullable(Float64),
    error_count UInt32,
    failing_tool_calls UInt32,
    input_tokens UInt64,
    output_tokens UInt64,
    total_tokens UInt64,
    estimated_cost_usd Nullable(Float64),
    estimated_cost_basis LowCardinality(String),
    cost_priced_tokens UInt64,
    cost_unpriced_models Array(String),
    cost_priced_at Nullable(DateTime64(3, 'UTC')),
    cost_model_costs Map(String, Float64),
    models Array(String),
    processed_at DateTime64(3, 'UTC') DEFAULT now64(3)
)
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/lookout/event_trace_processed_local', '{replica}', processed_at)
PARTITION BY toYYYYMM(timestamp)
ORDER BY (tenant_id, project_id, trace_id)
TTL toDateTime(timestamp) + INTERVAL 90 DAY;

CREATE TABLE IF NOT EXISTS `lookout`.`event_trace_processed` ON CLUSTER `lookout_cluster` AS `lookout`.`event_trace_processed_local`
ENGINE = Distributed(`lookout_cluster`, `lookout`, `event_trace_processed_local`, cityHash64(trace_id));

CREATE TABLE IF NOT EXISTS `lookout`.`event_issue_local` ON CLUSTER `lookout_cluster`
(
    tenant_id String,
    project_id String,
    timestamp DateTime64(3, 'UTC'),
    actor LowCardinality(String),
    surface LowCardinality(String),
    user_id String,
    api_key_id String,
    name LowCardinality(String),
    issue_id String,
    event_id String,
    inserted_at DateTime64(3, 'UTC') DEFAULT now64(3)
)
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/lookout/event_issue_local', '{replica}', inserted_at)
PARTITION BY toYYYYMM(timestamp)
ORDER BY (tenant_id, project_id, timestamp, event_id)
TTL toDateTime(timestamp) + INTERVAL 90 DAY;

CREATE TABLE IF NOT EXISTS `lookout`.`event_issue` ON CLUSTER `lookout_cluster` AS `lookout`.`event_issue_local`
ENGINE = Distributed(`lookout_cluster`, `lookout`, `event_issue_local`, cityHash64(event_id));

CREATE TABLE IF NOT EXISTS `lookout`.`traces_local` ON CLUSTER `lookout_cluster`
(
    tenant_id String,
    project_id String,
    trace_id String,
    otel_trace_id String,
    timestamp DateTime64(3, 'UTC'),
    service_name String,
    agent_name String,
    thread_id String,
    release String,
    agent_input_display String,
    agent_input Nullable(String),
    agent_output Nullable(String),
    tool_calls String,
    interaction String,
    has_error UInt8,
    total_duration_ms Float64,
    span_count UInt32,
    total_tokens UInt64,
    error_count UInt32,
    models_used Array(String),
    stats_tool_calls String,
    estimated_cost_usd Nullable(Float64),
    processed_at DateTime64(3, 'UTC') DEFAULT now64(3)
)
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/lookout/traces_local', '{replica}', processed_at)
PARTITION BY toYYYYMM(timestamp)
ORDER BY (tenant_id, project_id, trace_id)
TTL toDateTime(timestamp) + INTERVAL 90 DAY;

CREATE TABLE IF NOT EXISTS `lookout`.`traces` ON CLUSTER `lookout_cluster` AS `lookout`.`traces_local`
ENGINE = Distributed(`lookout_cluster`, `lookout`, `traces_local`, cityHash64(trace_id));

ALTER TABLE `lookout`.`event_generation_completed_local` ON CLUSTER `lookout_cluster`
    ADD COLUMN IF NOT EXISTS cache_write_input_tokens UInt64 DEFAULT 0 AFTER cached_input_tokens;

ALTER TABLE `lookout`.`event_generation_completed` ON CLUSTER `lookout_cluster`
    ADD COLUMN IF NOT EXISTS cache_write_input_tokens UInt64 DEFAULT 0 AFTER cached_input_tokens;

ALTER TABLE `lookout`.`spans_local` ON CLUSTER `lookout_cluster`
    MODIFY COLUMN model LowCardinality(String),
    MODIFY COLUMN service_name LowCardinality(String),
    MODIFY COLUMN agent_name LowCardinality(String),
    MODIFY COLUMN tool_name LowCardinality(String),
    MODIFY COLUMN scope_name LowCardinality(String),
    MODIFY COLUMN scope_version LowCardinality(String),
    MODIFY COLUMN otel_trace_id CODEC(ZSTD(1)),
    MODIFY COLUMN parent_span_id CODEC(ZSTD(1));

ALTER TABLE `lookout`.`spans` ON CLUSTER `lookout_cluster`
    MODIFY COLUMN model LowCardinality(String),
    MODIFY COLUMN service_name LowCardinality(String),
    MODIFY COLUMN agent_name LowCardinality(String),
    MODIFY COLUMN tool_name LowCardinality(String),
    MODIFY COLUMN scope_name LowCardinality(String),
    MODIFY COLUMN scope_version LowCardinality(String),
    MODIFY COLUMN otel_trace_id CODEC(ZSTD(1)),
    MODIFY COLUMN parent_span_id CODEC(ZSTD(1));

ALTER TABLE `lookout`.`event_generation_completed_local` ON CLUSTER `lookout_cluster`
    MODIFY COLUMN user_id LowCardinality(String),
    MODIFY COLUMN api_key_id LowCardinality(String),
    MODIFY COLUMN model LowCardinality(String),
    MODIFY COLUMN trace_id CODEC(ZSTD(1)),
    MODIFY COLUMN span_id CODEC(ZSTD(1));

ALTER TABLE `lookout`.`event_generation_completed` ON CLUSTER `lookout_cluster`
    MODIFY COLUMN user_id LowCardinality(String),
    MODIFY COLUMN api_key_id LowCardinality(String),
    MODIFY COLUMN model LowCardinality(String),
    MODIFY COLUMN trace_id CODEC(ZSTD(1)),
    MODIFY COLUMN span_id CODEC(ZSTD(1));

ALTER TABLE `lookout`.`event_tool_called_local` ON CLUSTER `lookout_cluster`
    MODIFY COLUMN user_id LowCardinality(String),
    MODIFY COLUMN api_key_id LowCardinality(String),
    MODIFY COLUMN tool LowCardinality(String),
    MODIFY COLUMN agent_name LowCardinality(String),
    MODIFY COLUMN trace_id CODEC(ZSTD(1)),
    MODIFY COLUMN span_id CODEC(ZSTD(1));

ALTER TABLE `lookout`.`event_tool_called` ON CLUSTER `lookout_cluster`
    MODIFY COLUMN user_id LowCardinality(String),
    MODIFY COLUMN api_key_id LowCardinality(String),
    MODIFY COLUMN tool LowCardinality(String),
    MODIFY COLUMN agent_name LowCardinality(String),
    MODIFY COLUMN trace_id CODEC(ZSTD(1)),
    MODIFY COLUMN span_id CODEC(ZSTD(1));

ALTER TABLE `lookout`.`event_span_errored_local` ON CLUSTER `lookout_cluster`
    MODIFY COLUMN user_id LowCardinality(String),
    MODIFY COLUMN api_key_id LowCardinality(String),
    MODIFY COLUMN span_name LowCardinality(String),
    MODIFY COLUMN trace_id CODEC(ZSTD(1)),
    MODIFY COLUMN span_id CODEC(ZSTD(1));

ALTER TABLE `lookout`.`event_span_errored` ON CLUSTER `lookout_cluster`
    MODIFY COLUMN user_id LowCardinality(String),
    MODIFY COLUMN api_key_id LowCardinality(String),
    MODIFY COLUMN span_name LowCardinality(String),
    MODIFY COLUMN trace_id CODEC(ZSTD(1)),
    MODIFY COLUMN span_id CODEC(ZSTD(1));

ALTER TABLE `lookout`.`event_trace_processed_local` ON CLUSTER `lookout_cluster`
    MODIFY COLUMN user_id LowCardinality(String),
    MODIFY COLUMN api_key_id LowCardinality(String),
    MODIFY COLUMN agent_name LowCardinality(String),
    MODIFY COLUMN models Array(LowCardinality(String)),
    MODIFY COLUMN cost_unpriced_models Array(LowCardinality(String)),
    ADD COLUMN IF NOT EXISTS generations UInt32 DEFAULT 0 AFTER models,
    ADD COLUMN IF NOT EXISTS generations_with_provider UInt32 DEFAULT 0 AFTER generations,
    ADD COLUMN IF NOT EXISTS tool_calls UInt32 DEFAULT 0 AFTER generations_with_provider;

ALTER TABLE `lookout`.`event_trace_processed` ON CLUSTER `lookout_cluster`
    MODIFY COLUMN user_id LowCardinality(String),
    MODIFY COLUMN api_key_id LowCardinality(String),
    MODIFY COLUMN agent_name LowCardinality(String),
    MODIFY COLUMN models Array(LowCardinality(String)),
    MODIFY COLUMN cost_unpriced_models Array(LowCardinality(String)),
    ADD COLUMN IF NOT EXISTS generations UInt32 DEFAULT 0 AFTER models,
    ADD COLUMN IF NOT EXISTS generations_with_provider UInt32 DEFAULT 0 AFTER generations,
    ADD COLUMN IF NOT EXISTS tool_calls UInt32 DEFAULT 0 AFTER generations_with_provider;

ALTER TABLE `lookout`.`event_issue_local` ON CLUSTER `lookout_cluster`
    MODIFY COLUMN user_id LowCardinality(String),
    MODIFY COLUMN api_key_id LowCardinality(String);

ALTER TABLE `lookout`.`event_issue` ON CLUSTER `lookout_cluster`
    MODIFY COLUMN user_id LowCardinality(String),
    MODIFY COLUMN api_key_id LowCardinality(String);

ALTER TABLE `lookout`.`traces_local` ON CLUSTER `lookout_cluster`
    MODIFY COLUMN service_name LowCardinality(String),
    MODIFY COLUMN agent_name LowCardinality(String),
    MODIFY COLUMN release LowCardinality(String),
    MODIFY COLUMN models_used Array(LowCardinality(String));

ALTER TABLE `lookout`.`traces` ON CLUSTER `lookout_cluster`
    MODIFY COLUMN service_name LowCardinality(String),
    MODIFY COLUMN agent_name LowCardinality(String),
    MODIFY COLUMN release LowCardinality(String),
    MODIFY COLUMN models_used Array(LowCardinality(String));

INSERT INTO `lookout`.`event_trace_processed` (tenant_id, project_id, timestamp, actor, surface, user_id, api_key_id, trace_id, agent_name, root_status_code,
     has_root, root_duration_ms, error_count, failing_tool_calls, input_tokens, output_tokens, total_tokens,
     estimated_cost_usd, estimated_cost_basis, cost_priced_tokens, cost_unpriced_models, cost_priced_at,
     cost_model_costs, models, generations, generations_with_provider, tool_calls, processed_at)
SETTINGS distributed_foreground_insert = 1
SELECT t.tenant_id, t.project_id, t.timestamp, t.actor, t.surface, t.user_id, t.api_key_id, t.trace_id, t.agent_name,
    t.root_status_code, t.has_root, t.root_duration_ms, t.error_count, t.failing_tool_calls, t.input_tokens,
    t.output_tokens, t.total_tokens, t.estimated_cost_usd, t.estimated_cost_basis, t.cost_priced_tokens,
    t.cost_unpriced_models, t.cost_priced_at, t.cost_model_costs, t.models,
    g.generations, g.generations_with_provider, c.tool_calls, t.processed_at
FROM `lookout`.event_trace_processed AS t FINAL
GLOBAL LEFT JOIN
(
    SELECT tenant_id, project_id, trace_id, toUInt32(count()) AS generations, toUInt32(countIf(provider != '')) AS generations_with_provider
    FROM `lookout`.event_generation_completed FINAL
    GROUP BY tenant_id, project_id, trace_id
) AS g ON t.tenant_id = g.tenant_id AND t.project_id = g.project_id AND t.trace_id = g.trace_id
GLOBAL LEFT JOIN
(
    SELECT tenant_id, project_id, trace_id, toUInt32(count()) AS tool_calls
    FROM `lookout`.event_tool_called FINAL
    GROUP BY tenant_id, project_id, trace_id
) AS c ON t.tenant_id = c.tenant_id AND t.project_id = c.project_id AND t.trace_id = c.trace_id
WHERE t.generations = 0 AND t.generations_with_provider = 0 AND t.tool_calls = 0
    AND (g.generations > 0 OR c.tool_calls > 0)
SETTINGS join_use_nulls = 0;

ALTER TABLE `lookout`.`event_trace_processed_local` ON CLUSTER `lookout_cluster`
    ADD COLUMN IF NOT EXISTS first_processing UInt8 DEFAULT 0 AFTER tool_calls;

ALTER TABLE `lookout`.`event_trace_processed` ON CLUSTER `lookout_cluster`
    ADD COLUMN IF NOT EXISTS first_processing UInt8 DEFAULT 0 AFTER tool_calls;

ALTER TABLE `lookout`.`event_generation_completed_local` ON CLUSTER `lookout_cluster`
    MODIFY COLUMN trace_id CODEC(LZ4),
    MODIFY COLUMN span_id CODEC(LZ4);

ALTER TABLE `lookout`.`event_generation_completed` ON CLUSTER `lookout_cluster`
    MODIFY COLUMN trace_id CODEC(LZ4),
    MODIFY COLUMN span_id CODEC(LZ4);

ALTER TABLE `lookout`.`event_tool_called_local` ON CLUSTER `lookout_cluster`
    MODIFY COLUMN trace_id CODEC(LZ4),
    MODIFY COLUMN span_id CODEC(LZ4);

ALTER TABLE `lookout`.`event_tool_called` ON CLUSTER `lookout_cluster`
    MODIFY COLUMN trace_id CODEC(LZ4),
    MODIFY COLUMN span_id CODEC(LZ4);

ALTER TABLE `lookout`.`event_span_errored_local` ON CLUSTER `lookout_cluster`
    MODIFY COLUMN trace_id CODEC(LZ4),
    MODIFY COLUMN span_id CODEC(LZ4);

ALTER TABLE `lookout`.`event_span_errored` ON CLUSTER `lookout_cluster`
    MODIFY COLUMN trace_id CODEC(LZ4),
    MODIFY COLUMN span_id CODEC(LZ4);

ALTER TABLE `lookout`.`event_generation_completed_local` ON CLUSTER `lookout_cluster`
    MODIFY COLUMN tenant_id LowCardinality(String),
    MODIFY COLUMN project_id LowCardinality(String);

ALTER TABLE `lookout`.`event_generation_completed` ON CLUSTER `lookout_cluster`
    MODIFY COLUMN tenant_id LowCardinality(String),
    MODIFY COLUMN project_id LowCardinality(String);

ALTER TABLE `lookout`.`event_tool_called_local` ON CLUSTER `lookout_cluster`
    MODIFY COLUMN tenant_id LowCardinality(String),
    MODIFY COLUMN project_id LowCardinality(String);

ALTER TABLE `lookout`.`event_tool_called` ON CLUSTER `lookout_cluster`
    MODIFY COLUMN tenant_id LowCardinality(String),
    MODIFY COLUMN project_id LowCardinality(String);

ALTER TABLE `lookout`.`event_span_errored_local` ON CLUSTER `lookout_cluster`
    MODIFY COLUMN tenant_id LowCardinality(String),
    MODIFY COLUMN project_id LowCardinality(String);

ALTER TABLE `lookout`.`event_span_errored` ON CLUSTER `lookout_cluster`
    MODIFY COLUMN tenant_id LowCardinality(String),
    MODIFY COLUMN project_id LowCardinality(String);

ALTER TABLE `lookout`.`event_trace_processed_local` ON CLUSTER `lookout_cluster`
    MODIFY COLUMN tenant_id LowCardinality(String),
    MODIFY COLUMN project_id LowCardinality(String);

ALTER TABLE `lookout`.`event_trace_processed` ON CLUSTER `lookout_cluster`
    MODIFY COLUMN tenant_id LowCardinality(String),
    MODIFY COLUMN project_id LowCardinality(String);

CREATE TABLE IF NOT EXISTS `lookout`.`event_generation_completed_v009_local` ON CLUSTER `lookout_cluster`
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
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{uuid}/{shard}', '{replica}', inserted_at)
PARTITION BY toYYYYMM(timestamp)
ORDER BY (tenant_id, project_id, timestamp, trace_id, span_id)
TTL toDateTime(timestamp) + INTERVAL 90 DAY;

CREATE TABLE IF NOT EXISTS `lookout`.`event_generation_completed_v009` ON CLUSTER `lookout_cluster` AS `lookout`.`event_generation_completed_v009_local`
ENGINE = Distributed(`lookout_cluster`, `lookout`, `event_generation_completed_v009_local`, cityHash64(toString(trace_id)));

INSERT INTO `lookout`.`event_generation_completed` (tenant_id, project_id, timestamp, actor, surface, user_id, api_key_id, model, provider, trace_id, span_id, duration_ms, input_tokens, output_tokens, cached_input_tokens, cache_write_input_tokens, tps, error, inserted_at)
SETTINGS distributed_foreground_insert = 1
SELECT tenant_id, project_id, timestamp, actor, surface, user_id, api_key_id, model, provider, toUUID(trace_id), if(toTypeName(span_id) = 'UInt64', toUInt64(span_id), reinterpretAsUInt64(reverse(unhex(span_id)))), duration_ms, input_tokens, output_tokens, cached_input_tokens, cache_write_input_tokens, tps, error, inserted_at
FROM `lookout`.event_generation_completed_v009
WHERE (SELECT count() FROM `lookout`.event_generation_completed_v009) > 0 AND toTypeName(span_id) = 'String' AND inserted_at >= (SELECT max(inserted_at) - INTERVAL 1 HOUR FROM `lookout`.event_generation_completed_v009)
    AND cityHash64(tenant_id, project_id, timestamp, toUUID(trace_id), if(toTypeName(span_id) = 'UInt64', toUInt64(span_id), reinterpretAsUInt64(reverse(unhex(span_id)))), inserted_at) GLOBAL NOT IN (
        SELECT cityHash64(tenant_id, project_id, timestamp, trace_id, span_id, inserted_at) FROM `lookout`.event_generation_completed
        WHERE (SELECT count() FROM `lookout`.event_generation_completed_v009) > 0 AND inserted_at >= (SELECT max(inserted_at) - INTERVAL 1 HOUR FROM `lookout`.event_generation_completed_v009)
    );

DROP TABLE IF EXISTS `lookout`.`event_generation_completed_v009` ON CLUSTER `lookout_cluster` SYNC;

DROP TABLE IF EXISTS `lookout`.`event_generation_completed_v009_local` ON CLUSTER `lookout_cluster` SYNC;

CREATE TABLE IF NOT EXISTS `lookout`.`event_generation_completed_v009_local` ON CLUSTER `lookout_cluster`
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
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{uuid}/{shard}', '{replica}', inserted_at)
PARTITION BY toYYYYMM(timestamp)
ORDER BY (tenant_id, project_id, timestamp, trace_id, span_id)
TTL toDateTime(timestamp) + INTERVAL 90 DAY;

CREATE TABLE IF NOT EXISTS `lookout`.`event_generation_completed_v009` ON CLUSTER `lookout_cluster` AS `lookout`.`event_generation_completed_v009_local`
ENGINE = Distributed(`lookout_cluster`, `lookout`, `event_generation_completed_v009_local`, cityHash64(toString(trace_id)));

INSERT INTO `lookout`.`event_generation_completed_v009` (tenant_id, project_id, timestamp, actor, surface, user_id, api_key_id, model, provider, trace_id, span_id, duration_ms, input_tokens, output_tokens, cached_input_tokens, cache_write_input_tokens, tps, error, inserted_at)
SETTINGS distributed_foreground_insert = 1
SELECT tenant_id, project_id, timestamp, actor, surface, user_id, api_key_id, model, provider, toUUID(trace_id), if(toTypeName(span_id) = 'UInt64', toUInt64(span_id), reinterpretAsUInt64(reverse(unhex(span_id)))), duration_ms, input_tokens, output_tokens, cached_input_tokens, cache_write_input_tokens, tps, error, inserted_at
FROM `lookout`.event_generation_completed;

EXCHANGE TABLES `lookout`.`event_generation_completed_local` AND `lookout`.`event_generation_completed_v009_local` ON CLUSTER `lookout_cluster`;

CREATE OR REPLACE TABLE `lookout`.`event_generation_completed` ON CLUSTER `lookout_cluster` AS `lookout`.`event_generation_completed_local`
ENGINE = Distributed(`lookout_cluster`, `lookout`, `event_generation_completed_local`, cityHash64(toString(trace_id)));

CREATE OR REPLACE TABLE `lookout`.`event_generation_completed_v009` ON CLUSTER `lookout_cluster` AS `lookout`.`event_generation_completed_v009_local`
ENGINE = Distributed(`lookout_cluster`, `lookout`, `event_generation_completed_v009_local`, cityHash64(toString(trace_id)));

INSERT INTO `lookout`.`event_generation_completed` (tenant_id, project_id, timestamp, actor, surface, user_id, api_key_id, model, provider, trace_id, span_id, duration_ms, input_tokens, output_tokens, cached_input_tokens, cache_write_input_tokens, tps, error, inserted_at)
SETTINGS distributed_foreground_insert = 1
SELECT tenant_id, project_id, timestamp, actor, surface, user_id, api_key_id, model, provider, toUUID(trace_id), if(toTypeName(span_id) = 'UInt64', toUInt64(span_id), reinterpretAsUInt64(reverse(unhex(span_id)))), duration_ms, input_tokens, output_tokens, cached_input_tokens, cache_write_input_tokens, tps, error, inserted_at
FROM `lookout`.event_generation_completed_v009
WHERE inserted_at >= (SELECT max(inserted_at) - INTERVAL 1 HOUR FROM `lookout`.event_generation_completed_v009)
    AND cityHash64(tenant_id, project_id, timestamp, toUUID(trace_id), if(toTypeName(span_id) = 'UInt64', toUInt64(span_id), reinterpretAsUInt64(reverse(unhex(span_id)))), inserted_at) GLOBAL NOT IN (
        SELECT cityHash64(tenant_id, project_id, timestamp, trace_id, span_id, inserted_at) FROM `lookout`.event_generation_completed
        WHERE inserted_at >= (SELECT max(inserted_at) - INTERVAL 1 HOUR FROM `lookout`.event_generation_completed_v009)
    );

DROP TABLE IF EXISTS `lookout`.`event_generation_completed_v009` ON CLUSTER `lookout_cluster` SYNC;

DROP TABLE IF EXISTS `lookout`.`event_generation_completed_v009_local` ON CLUSTER `lookout_cluster` SYNC;

CREATE TABLE IF NOT EXISTS `lookout`.`event_tool_called_v009_local` ON CLUSTER `lookout_cluster`
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
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{uuid}/{shard}', '{replica}', inserted_at)
PARTITION BY toYYYYMM(timestamp)
ORDER BY (tenant_id, project_id, timestamp, trace_id, span_id)
TTL toDateTime(timestamp) + INTERVAL 90 DAY;

CREATE TABLE IF NOT EXISTS `lookout`.`event_tool_called_v009` ON CLUSTER `lookout_cluster` AS `lookout`.`event_tool_called_v009_local`
ENGINE = Distributed(`lookout_cluster`, `lookout`, `event_tool_called_v009_local`, cityHash64(toString(trace_id)));

INSERT INTO `lookout`.`event_tool_called` (tenant_id, project_id, timestamp, actor, surface, user_id, api_key_id, tool, agent_name, trace_id, span_id, duration_ms, output_tokens, error, inserted_at)
SETTINGS distributed_foreground_insert = 1
SELECT tenant_id, project_id, timestamp, actor, surface, user_id, api_key_id, tool, agent_name, toUUID(trace_id), if(toTypeName(span_id) = 'UInt64', toUInt64(span_id), reinterpretAsUInt64(reverse(unhex(span_id)))), duration_ms, output_tokens, error, inserted_at
FROM `lookout`.event_tool_called_v009
WHERE (SELECT count() FROM `lookout`.event_tool_called_v009) > 0 AND toTypeName(span_id) = 'String' AND inserted_at >= (SELECT max(inserted_at) - INTERVAL 1 HOUR FROM `lookout`.event_tool_called_v009)
    AND cityHash64(tenant_id, project_id, timestamp, toUUID(trace_id), if(toTypeName(span_id) = 'UInt64', toUInt64(span_id), reinterpretAsUInt64(reverse(unhex(span_id)))), inserted_at) GLOBAL NOT IN (
        SELECT cityHash64(tenant_id, project_id, timestamp, trace_id, span_id, inserted_at) FROM `lookout`.event_tool_called
        WHERE (SELECT count() FROM `lookout`.event_tool_called_v009) > 0 AND inserted_at >= (SELECT max(inserted_at) - INTERVAL 1 HOUR FROM `lookout`.event_tool_called_v009)
    );

DROP TABLE IF EXISTS `lookout`.`event_tool_called_v009` ON CLUSTER `lookout_cluster` SYNC;

DROP TABLE IF EXISTS `lookout`.`event_tool_called_v009_local` ON CLUSTER `lookout_cluster` SYNC;

CREATE TABLE IF NOT EXISTS `lookout`.`event_tool_called_v009_local` ON CLUSTER `lookout_cluster`
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
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{uuid}/{shard}', '{replica}', inserted_at)
PARTITION BY toYYYYMM(timestamp)
ORDER BY (tenant_id, project_id, timestamp, trace_id, span_id)
TTL toDateTime(timestamp) + INTERVAL 90 DAY;

CREATE TABLE IF NOT EXISTS `lookout`.`event_tool_called_v009` ON CLUSTER `lookout_cluster` AS `lookout`.`event_tool_called_v009_local`
ENGINE = Distributed(`lookout_cluster`, `lookout`, `event_tool_called_v009_local`, cityHash64(toString(trace_id)));

INSERT INTO `lookout`.`event_tool_called_v009` (tenant_id, project_id, timestamp, actor, surface, user_id, api_key_id, tool, agent_name, trace_id, span_id, duration_ms, output_tokens, error, inserted_at)
SETTINGS distributed_foreground_insert = 1
SELECT tenant_id, project_id, timestamp, actor, surface, user_id, api_key_id, tool, agent_name, toUUID(trace_id), if(toTypeName(span_id) = 'UInt64', toUInt64(span_id), reinterpretAsUInt64(reverse(unhex(span_id)))), duration_ms, output_tokens, error, inserted_at
FROM `lookout`.event_tool_called;

EXCHANGE TABLES `lookout`.`event_tool_called_local` AND `lookout`.`event_tool_called_v009_local` ON CLUSTER `lookout_cluster`;

CREATE OR REPLACE TABLE `lookout`.`event_tool_called` ON CLUSTER `lookout_cluster` AS `lookout`.`event_tool_called_local`
ENGINE = Distributed(`lookout_cluster`, `lookout`, `event_tool_called_local`, cityHash64(toString(trace_id)));

CREATE OR REPLACE TABLE `lookout`.`event_tool_called_v009` ON CLUSTER `lookout_cluster` AS `lookout`.`event_tool_called_v009_local`
ENGINE = Distributed(`lookout_cluster`, `lookout`, `event_tool_called_v009_local`, cityHash64(toString(trace_id)));

INSERT INTO `lookout`.`event_tool_called` (tenant_id, project_id, timestamp, actor, surface, user_id, api_key_id, tool, agent_name, trace_id, span_id, duration_ms, output_tokens, error, inserted_at)
SETTINGS distributed_foreground_insert = 1
SELECT tenant_id, project_id, timestamp, actor, surface, user_id, api_key_id, tool, agent_name, toUUID(trace_id), if(toTypeName(span_id) = 'UInt64', toUInt64(span_id), reinterpretAsUInt64(reverse(unhex(span_id)))), duration_ms, output_tokens, error, inserted_at
FROM `lookout`.event_tool_called_v009
WHERE inserted_at >= (SELECT max(inserted_at) - INTERVAL 1 HOUR FROM `lookout`.event_tool_called_v009)
    AND cityHash64(tenant_id, project_id, timestamp, toUUID(trace_id), if(toTypeName(span_id) = 'UInt64', toUInt64(span_id), reinterpretAsUInt64(reverse(unhex(span_id)))), inserted_at) GLOBAL NOT IN (
        SELECT cityHash64(tenant_id, project_id, timestamp, trace_id, span_id, inserted_at) FROM `lookout`.event_tool_called
        WHERE inserted_at >= (SELECT max(inserted_at) - INTERVAL 1 HOUR FROM `lookout`.event_tool_called_v009)
    );

DROP TABLE IF EXISTS `lookout`.`event_tool_called_v009` ON CLUSTER `lookout_cluster` SYNC;

DROP TABLE IF EXISTS `lookout`.`event_tool_called_v009_local` ON CLUSTER `lookout_cluster` SYNC;

CREATE TABLE IF NOT EXISTS `lookout`.`event_span_errored_v009_local` ON CLUSTER `lookout_cluster`
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
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{uuid}/{shard}', '{replica}', inserted_at)
PARTITION BY toYYYYMM(timestamp)
ORDER BY (tenant_id, project_id, timestamp, trace_id, span_id)
TTL toDateTime(timestamp) + INTERVAL 90 DAY;

CREATE TABLE IF NOT EXISTS `lookout`.`event_span_errored_v009` ON CLUSTER `lookout_cluster` AS `lookout`.`event_span_errored_v009_local`
ENGINE = Distributed(`lookout_cluster`, `lookout`, `event_span_errored_v009_local`, cityHash64(toString(trace_id)));

INSERT INTO `lookout`.`event_span_errored` (tenant_id, project_id, timestamp, actor, surface, user_id, api_key_id, span_name, trace_id, span_id, inserted_at)
SETTINGS distributed_foreground_insert = 1
SELECT tenant_id, project_id, timestamp, actor, surface, user_id, api_key_id, span_name, toUUID(trace_id), if(toTypeName(span_id) = 'UInt64', toUInt64(span_id), reinterpretAsUInt64(reverse(unhex(span_id)))), inserted_at
FROM `lookout`.event_span_errored_v009
WHERE (SELECT count() FROM `lookout`.event_span_errored_v009) > 0 AND toTypeName(span_id) = 'String' AND inserted_at >= (SELECT max(inserted_at) - INTERVAL 1 HOUR FROM `lookout`.event_span_errored_v009)
    AND cityHash64(tenant_id, project_id, timestamp, toUUID(trace_id), if(toTypeName(span_id) = 'UInt64', toUInt64(span_id), reinterpretAsUInt64(reverse(unhex(span_id)))), inserted_at) GLOBAL NOT IN (
        SELECT cityHash64(tenant_id, project_id, timestamp, trace_id, span_id, inserted_at) FROM `lookout`.event_span_errored
        WHERE (SELECT count() FROM `lookout`.event_span_errored_v009) > 0 AND inserted_at >= (SELECT max(inserted_at) - INTERVAL 1 HOUR FROM `lookout`.event_span_errored_v009)
    );

DROP TABLE IF EXISTS `lookout`.`event_span_errored_v009` ON CLUSTER `lookout_cluster` SYNC;

DROP TABLE IF EXISTS `lookout`.`event_span_errored_v009_local` ON CLUSTER `lookout_cluster` SYNC;

CREATE TABLE IF NOT EXISTS `lookout`.`event_span_errored_v009_local` ON CLUSTER `lookout_cluster`
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
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{uuid}/{shard}', '{replica}', inserted_at)
PARTITION BY toYYYYMM(timestamp)
ORDER BY (tenant_id, project_id, timestamp, trace_id, span_id)
TTL toDateTime(timestamp) + INTERVAL 90 DAY;

CREATE TABLE IF NOT EXISTS `lookout`.`event_span_errored_v009` ON CLUSTER `lookout_cluster` AS `lookout`.`event_span_errored_v009_local`
ENGINE = Distributed(`lookout_cluster`, `lookout`, `event_span_errored_v009_local`, cityHash64(toString(trace_id)));

INSERT INTO `lookout`.`event_span_errored_v009` (tenant_id, project_id, timestamp, actor, surface, user_id, api_key_id, span_name, trace_id, span_id, inserted_at)
SETTINGS distributed_foreground_insert = 1
SELECT tenant_id, project_id, timestamp, actor, surface, user_id, api_key_id, span_name, toUUID(trace_id), if(toTypeName(span_id) = 'UInt64', toUInt64(span_id), reinterpretAsUInt64(reverse(unhex(span_id)))), inserted_at
FROM `lookout`.event_span_errored;

EXCHANGE TABLES `lookout`.`event_span_errored_local` AND `lookout`.`event_span_errored_v009_local` ON CLUSTER `lookout_cluster`;

CREATE OR REPLACE TABLE `lookout`.`event_span_errored` ON CLUSTER `lookout_cluster` AS `lookout`.`event_span_errored_local`
ENGINE = Distributed(`lookout_cluster`, `lookout`, `event_span_errored_local`, cityHash64(toString(trace_id)));

CREATE OR REPLACE TABLE `lookout`.`event_span_errored_v009` ON CLUSTER `lookout_cluster` AS `lookout`.`event_span_errored_v009_local`
ENGINE = Distributed(`lookout_cluster`, `lookout`, `event_span_errored_v009_local`, cityHash64(toString(trace_id)));

INSERT INTO `lookout`.`event_span_errored` (tenant_id, project_id, timestamp, actor, surface, user_id, api_key_id, span_name, trace_id, span_id, inserted_at)
SETTINGS distributed_foreground_insert = 1
SELECT tenant_id, project_id, timestamp, actor, surface, user_id, api_key_id, span_name, toUUID(trace_id), if(toTypeName(span_id) = 'UInt64', toUInt64(span_id), reinterpretAsUInt64(reverse(unhex(span_id)))), inserted_at
FROM `lookout`.event_span_errored_v009
WHERE inserted_at >= (SELECT max(inserted_at) - INTERVAL 1 HOUR FROM `lookout`.event_span_errored_v009)
    AND cityHash64(tenant_id, project_id, timestamp, toUUID(trace_id), if(toTypeName(span_id) = 'UInt64', toUInt64(span_id), reinterpretAsUInt64(reverse(unhex(span_id)))), inserted_at) GLOBAL NOT IN (
        SELECT cityHash64(tenant_id, project_id, timestamp, trace_id, span_id, inserted_at) FROM `lookout`.event_span_errored
        WHERE inserted_at >= (SELECT max(inserted_at) - INTERVAL 1 HOUR FROM `lookout`.event_span_errored_v009)
    );

DROP TABLE IF EXISTS `lookout`.`event_span_errored_v009` ON CLUSTER `lookout_cluster` SYNC;

DROP TABLE IF EXISTS `lookout`.`event_span_errored_v009_local` ON CLUSTER `lookout_cluster` SYNC;

CREATE TABLE IF NOT EXISTS `lookout`.`event_generation_completed_v010_local` ON CLUSTER `lookout_cluster`
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
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{uuid}/{shard}', '{replica}', inserted_at)
PARTITION BY toDate(timestamp)
ORDER BY (tenant_id, project_id, timestamp, trace_id, span_id)
TTL toDateTime(timestamp) + INTERVAL 90 DAY
SETTINGS min_age_to_force_merge_seconds = 3600, min_age_to_force_merge_on_partition_only = 1;

CREATE TABLE IF NOT EXISTS `lookout`.`event_generation_completed_v010` ON CLUSTER `lookout_cluster` AS `lookout`.`event_generation_completed_v010_local`
ENGINE = Distributed(`lookout_cluster`, `lookout`, `event_generation_completed_v010_local`, cityHash64(toString(trace_id)));

INSERT INTO `lookout`.`event_generation_completed` (tenant_id, project_id, timestamp, actor, surface, user_id, api_key_id, model, provider, trace_id, span_id, duration_ms, input_tokens, output_tokens, cached_input_tokens, cache_write_input_tokens, tps, error, inserted_at)
SETTINGS distributed_foreground_insert = 1
SELECT tenant_id, project_id, timestamp, actor, surface, user_id, api_key_id, model, provider, trace_id, span_id, duration_ms, input_tokens, output_tokens, cached_input_tokens, cache_write_input_tokens, tps, error, inserted_at
FROM `lookout`.event_generation_completed_v010
WHERE (SELECT count() FROM `lookout`.event_generation_completed_v010) > 0 AND inserted_at >= (SELECT max(inserted_at) - INTERVAL 1 HOUR FROM `lookout`.event_generation_completed_v010)
    AND cityHash64(tenant_id, project_id, timestamp, trace_id, span_id, inserted_at) GLOBAL NOT IN (
        SELECT cityHash64(tenant_id, project_id, timestamp, trace_id, span_id, inserted_at) FROM `lookout`.event_generation_completed
        WHERE (SELECT count() FROM `lookout`.event_generation_completed_v010) > 0 AND inserted_at >= (SELECT max(inserted_at) - INTERVAL 1 HOUR FROM `lookout`.event_generation_completed_v010)
    );

DROP TABLE IF EXISTS `lookout`.`event_generation_completed_v010` ON CLUSTER `lookout_cluster` SYNC;

DROP TABLE IF EXISTS `lookout`.`event_generation_completed_v010_local` ON CLUSTER `lookout_cluster` SYNC;

CREATE TABLE IF NOT EXISTS `lookout`.`event_generation_completed_v010_local` ON CLUSTER `lookout_cluster`
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
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{uuid}/{shard}', '{replica}', inserted_at)
PARTITION BY toDate(timestamp)
ORDER BY (tenant_id, project_id, timestamp, trace_id, span_id)
TTL toDateTime(timestamp) + INTERVAL 90 DAY
SETTINGS min_age_to_force_merge_seconds = 3600, min_age_to_force_merge_on_partition_only = 1;

CREATE TABLE IF NOT EXISTS `lookout`.`event_generation_completed_v010` ON CLUSTER `lookout_cluster` AS `lookout`.`event_generation_completed_v010_local`
ENGINE = Distributed(`lookout_cluster`, `lookout`, `event_generation_completed_v010_local`, cityHash64(toString(trace_id)));

INSERT INTO `lookout`.`event_generation_completed_v010` (tenant_id, project_id, timestamp, actor, surface, user_id, api_key_id, model, provider, trace_id, span_id, duration_ms, input_tokens, output_tokens, cached_input_tokens, cache_write_input_tokens, tps, error, inserted_at)
SETTINGS distributed_foreground_insert = 1
SELECT tenant_id, project_id, timestamp, actor, surface, user_id, api_key_id, model, provider, trace_id, span_id, duration_ms, input_tokens, output_tokens, cached_input_tokens, cache_write_input_tokens, tps, error, inserted_at
FROM `lookout`.event_generation_completed;

EXCHANGE TABLES `lookout`.`event_generation_completed_local` AND `lookout`.`event_generation_completed_v010_local` ON CLUSTER `lookout_cluster`;

CREATE OR REPLACE TABLE `lookout`.`event_generation_completed` ON CLUSTER `lookout_cluster` AS `lookout`.`event_generation_completed_local`
ENGINE = Distributed(`lookout_cluster`, `lookout`, `event_generation_completed_local`, cityHash64(toString(trace_id)));

CREATE OR REPLACE TABLE `lookout`.`event_generation_completed_v010` ON CLUSTER `lookout_cluster` AS `lookout`.`event_generation_completed_v010_local`
ENGINE = Distributed(`lookout_cluster`, `lookout`, `event_generation_completed_v010_local`, cityHash64(toString(trace_id)));

INSERT INTO `lookout`.`event_generation_completed` (tenant_id, project_id, timestamp, actor, surface, user_id, api_key_id, model, provider, trace_id, span_id, duration_ms, input_tokens, output_tokens, cached_input_tokens, cache_write_input_tokens, tps, error, inserted_at)
SETTINGS distributed_foreground_insert = 1
SELECT tenant_id, project_id, timestamp, actor, surface, user_id, api_key_id, model, provider, trace_id, span_id, duration_ms, input_tokens, output_tokens, cached_input_tokens, cache_write_input_tokens, tps, error, inserted_at
FROM `lookout`.event_generation_completed_v010
WHERE inserted_at >= (SELECT max(inserted_at) - INTERVAL 1 HOUR FROM `lookout`.event_generation_completed_v010)
    AND cityHash64(tenant_id, project_id, timestamp, trace_id, span_id, inserted_at) GLOBAL NOT IN (
        SELECT cityHash64(tenant_id, project_id, timestamp, trace_id, span_id, inserted_at) FROM `lookout`.event_generation_completed
        WHERE inserted_at >= (SELECT max(inserted_at) - INTERVAL 1 HOUR FROM `lookout`.event_generation_completed_v010)
    );

DROP TABLE IF EXISTS `lookout`.`event_generation_completed_v010` ON CLUSTER `lookout_cluster` SYNC;

DROP TABLE IF EXISTS `lookout`.`event_generation_completed_v010_local` ON CLUSTER `lookout_cluster` SYNC;

CREATE TABLE IF NOT EXISTS `lookout`.`event_tool_called_v010_local` ON CLUSTER `lookout_cluster`
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
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{uuid}/{shard}', '{replica}', inserted_at)
PARTITION BY toDate(timestamp)
ORDER BY (tenant_id, project_id, timestamp, trace_id, span_id)
TTL toDateTime(timestamp) + INTERVAL 90 DAY
SETTINGS min_age_to_force_merge_seconds = 3600, min_age_to_force_merge_on_partition_only = 1;

CREATE TABLE IF NOT EXISTS `lookout`.`event_tool_called_v010` ON CLUSTER `lookout_cluster` AS `lookout`.`event_tool_called_v010_local`
ENGINE = Distributed(`lookout_cluster`, `lookout`, `event_tool_called_v010_local`, cityHash64(toString(trace_id)));

INSERT INTO `lookout`.`event_tool_called` (tenant_id, project_id, timestamp, actor, surface, user_id, api_key_id, tool, agent_name, trace_id, span_id, duration_ms, output_tokens, error, inserted_at)
SETTINGS distributed_foreground_insert = 1
SELECT tenant_id, project_id, timestamp, actor, surface, user_id, api_key_id, tool, agent_name, trace_id, span_id, duration_ms, output_tokens, error, inserted_at
FROM `lookout`.event_tool_called_v010
WHERE (SELECT count() FROM `lookout`.event_tool_called_v010) > 0 AND inserted_at >= (SELECT max(inserted_at) - INTERVAL 1 HOUR FROM `lookout`.event_tool_called_v010)
    AND cityHash64(tenant_id, project_id, timestamp, trace_id, span_id, inserted_at) GLOBAL NOT IN (
        SELECT cityHash64(tenant_id, project_id, timestamp, trace_id, span_id, inserted_at) FROM `lookout`.event_tool_called
        WHERE (SELECT count() FROM `lookout`.event_tool_called_v010) > 0 AND inserted_at >= (SELECT max(inserted_at) - INTERVAL 1 HOUR FROM `lookout`.event_tool_called_v010)
    );

DROP TABLE IF EXISTS `lookout`.`event_tool_called_v010` ON CLUSTER `lookout_cluster` SYNC;

DROP TABLE IF EXISTS `lookout`.`event_tool_called_v010_local` ON CLUSTER `lookout_cluster` SYNC;

CREATE TABLE IF NOT EXISTS `lookout`.`event_tool_called_v010_local` ON CLUSTER `lookout_cluster`
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
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{uuid}/{shard}', '{replica}', inserted_at)
PARTITION BY toDate(timestamp)
ORDER BY (tenant_id, project_id, timestamp, trace_id, span_id)
TTL toDateTime(timestamp) + INTERVAL 90 DAY
SETTINGS min_age_to_force_merge_seconds = 3600, min_age_to_force_merge_on_partition_only = 1;

CREATE TABLE IF NOT EXISTS `lookout`.`event_tool_called_v010` ON CLUSTER `lookout_cluster` AS `lookout`.`event_tool_called_v010_local`
ENGINE = Distributed(`lookout_cluster`, `lookout`, `event_tool_called_v010_local`, cityHash64(toString(trace_id)));

INSERT INTO `lookout`.`event_tool_called_v010` (tenant_id, project_id, timestamp, actor, surface, user_id, api_key_id, tool, agent_name, trace_id, span_id, duration_ms, output_tokens, error, inserted_at)
SETTINGS distributed_foreground_insert = 1
SELECT tenant_id, project_id, timestamp, actor, surface, user_id, api_key_id, tool, agent_name, trace_id, span_id, duration_ms, output_tokens, error, inserted_at
FROM `lookout`.event_tool_called;

EXCHANGE TABLES `lookout`.`event_tool_called_local` AND `lookout`.`event_tool_called_v010_local` ON CLUSTER `lookout_cluster`;

CREATE OR REPLACE TABLE `lookout`.`event_tool_called` ON CLUSTER `lookout_cluster` AS `lookout`.`event_tool_called_local`
ENGINE = Distributed(`lookout_cluster`, `lookout`, `event_tool_called_local`, cityHash64(toString(trace_id)));

CREATE OR REPLACE TABLE `lookout`.`event_tool_called_v010` ON CLUSTER `lookout_cluster` AS `lookout`.`event_tool_called_v010_local`
ENGINE = Distributed(`lookout_cluster`, `lookout`, `event_tool_called_v010_local`, cityHash64(toString(trace_id)));

INSERT INTO `lookout`.`event_tool_called` (tenant_id, project_id, timestamp, actor, surface, user_id, api_key_id, tool, agent_name, trace_id, span_id, duration_ms, output_tokens, error, inserted_at)
SETTINGS distributed_foreground_insert = 1
SELECT tenant_id, project_id, timestamp, actor, surface, user_id, api_key_id, tool, agent_name, trace_id, span_id, duration_ms, output_tokens, error, inserted_at
FROM `lookout`.event_tool_called_v010
WHERE inserted_at >= (SELECT max(inserted_at) - INTERVAL 1 HOUR FROM `lookout`.event_tool_called_v010)
    AND cityHash64(tenant_id, project_id, timestamp, trace_id, span_id, inserted_at) GLOBAL NOT IN (
        SELECT cityHash64(tenant_id, project_id, timestamp, trace_id, span_id, inserted_at) FROM `lookout`.event_tool_called
        WHERE inserted_at >= (SELECT max(inserted_at) - INTERVAL 1 HOUR FROM `lookout`.event_tool_called_v010)
    );

DROP TABLE IF EXISTS `lookout`.`event_tool_called_v010` ON CLUSTER `lookout_cluster` SYNC;

DROP TABLE IF EXISTS `lookout`.`event_tool_called_v010_local` ON CLUSTER `lookout_cluster` SYNC;

CREATE TABLE IF NOT EXISTS `lookout`.`event_span_errored_v010_local` ON CLUSTER `lookout_cluster`
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
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{uuid}/{shard}', '{replica}', inserted_at)
PARTITION BY toDate(timestamp)
ORDER BY (tenant_id, project_id, timestamp, trace_id, span_id)
TTL toDateTime(timestamp) + INTERVAL 90 DAY
SETTINGS min_age_to_force_merge_seconds = 3600, min_age_to_force_merge_on_partition_only = 1;

CREATE TABLE IF NOT EXISTS `lookout`.`event_span_errored_v010` ON CLUSTER `lookout_cluster` AS `lookout`.`event_span_errored_v010_local`
ENGINE = Distributed(`lookout_cluster`, `lookout`, `event_span_errored_v010_local`, cityHash64(toString(trace_id)));

INSERT INTO `lookout`.`event_span_errored` (tenant_id, project_id, timestamp, actor, surface, user_id, api_key_id, span_name, trace_id, span_id, inserted_at)
SETTINGS distributed_foreground_insert = 1
SELECT tenant_id, project_id, timestamp, actor, surface, user_id, api_key_id, span_name, trace_id, span_id, inserted_at
FROM `lookout`.event_span_errored_v010
WHERE (SELECT count() FROM `lookout`.event_span_errored_v010) > 0 AND inserted_at >= (SELECT max(inserted_at) - INTERVAL 1 HOUR FROM `lookout`.event_span_errored_v010)
    AND cityHash64(tenant_id, project_id, timestamp, trace_id, span_id, inserted_at) GLOBAL NOT IN (
        SELECT cityHash64(tenant_id, project_id, timestamp, trace_id, span_id, inserted_at) FROM `lookout`.event_span_errored
        WHERE (SELECT count() FROM `lookout`.event_span_errored_v010) > 0 AND inserted_at >= (SELECT max(inserted_at) - INTERVAL 1 HOUR FROM `lookout`.event_span_errored_v010)
    );

DROP TABLE IF EXISTS `lookout`.`event_span_errored_v010` ON CLUSTER `lookout_cluster` SYNC;

DROP TABLE IF EXISTS `lookout`.`event_span_errored_v010_local` ON CLUSTER `lookout_cluster` SYNC;

CREATE TABLE IF NOT EXISTS `lookout`.`event_span_errored_v010_local` ON CLUSTER `lookout_cluster`
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
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{uuid}/{shard}', '{replica}', inserted_at)
PARTITION BY toDate(timestamp)
ORDER BY (tenant_id, project_id, timestamp, trace_id, span_id)
TTL toDateTime(timestamp) + INTERVAL 90 DAY
SETTINGS min_age_to_force_merge_seconds = 3600, min_age_to_force_merge_on_partition_only = 1;

CREATE TABLE IF NOT EXISTS `lookout`.`event_span_errored_v010` ON CLUSTER `lookout_cluster` AS `lookout`.`event_span_errored_v010_local`
ENGINE = Distributed(`lookout_cluster`, `lookout`, `event_span_errored_v010_local`, cityHash64(toString(trace_id)));

INSERT INTO `lookout`.`event_span_errored_v010` (tenant_id, project_id, timestamp, actor, surface, user_id, api_key_id, span_name, trace_id, span_id, inserted_at)
SETTINGS distributed_foreground_insert = 1
SELECT tenant_id, project_id, timestamp, actor, surface, user_id, api_key_id, span_name, trace_id, span_id, inserted_at
FROM `lookout`.event_span_errored;

EXCHANGE TABLES `lookout`.`event_span_errored_local` AND `lookout`.`event_span_errored_v010_local` ON CLUSTER `lookout_cluster`;

CREATE OR REPLACE TABLE `lookout`.`event_span_errored` ON CLUSTER `lookout_cluster` AS `lookout`.`event_span_errored_local`
ENGINE = Distributed(`lookout_cluster`, `lookout`, `event_span_errored_local`, cityHash64(toString(trace_id)));

CREATE OR REPLACE TABLE `lookout`.`event_span_errored_v010` ON CLUSTER `lookout_cluster` AS `lookout`.`event_span_errored_v010_local`
ENGINE = Distributed(`lookout_cluster`, `lookout`, `event_span_errored_v010_local`, cityHash64(toString(trace_id)));

INSERT INTO `lookout`.`event_span_errored` (tenant_id, project_id, timestamp, actor, surface, user_id, api_key_id, span_name, trace_id, span_id, inserted_at)
SETTINGS distributed_foreground_insert = 1
SELECT tenant_id, project_id, timestamp, actor, surface, user_id, api_key_id, span_name, trace_id, span_id, inserted_at
FROM `lookout`.event_span_errored_v010
WHERE inserted_at >= (SELECT max(inserted_at) - INTERVAL 1 HOUR FROM `lookout`.event_span_errored_v010)
    AND cityHash64(tenant_id, project_id, timestamp, trace_id, span_id, inserted_at) GLOBAL NOT IN (
        SELECT cityHash64(tenant_id, project_id, timestamp, trace_id, span_id, inserted_at) FROM `lookout`.event_span_errored
        WHERE inserted_at >= (SELECT max(inserted_at) - INTERVAL 1 HOUR FROM `lookout`.event_span_errored_v010)
    );

DROP TABLE IF EXISTS `lookout`.`event_span_errored_v010` ON CLUSTER `lookout_cluster` SYNC;

DROP TABLE IF EXISTS `lookout`.`event_span_errored_v010_local` ON CLUSTER `lookout_cluster` SYNC;

CREATE TABLE IF NOT EXISTS `lookout`.`span_logs_local` ON CLUSTER `lookout_cluster`
(
    tenant_id LowCardinality(String),
    project_id LowCardinality(String),
    trace_id String,
    otel_trace_id String,
    span_id String,
    record_id String,
    time_ns UInt64,
    seq UInt32,
    event_name String,
    severity_number UInt8,
    severity_text String,
    body String,
    attributes String,
    scope_name String,
    timestamp DateTime64(3, 'UTC'),
    ingested_at DateTime64(3, 'UTC') DEFAULT now64(3)
)
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/lookout/span_logs_local', '{replica}', ingested_at)
PARTITION BY toYYYYMM(timestamp)
ORDER BY (tenant_id, project_id, trace_id, span_id, record_id)
TTL toDateTime(timestamp) + INTERVAL 90 DAY;

CREATE TABLE IF NOT EXISTS `lookout`.`span_logs` ON CLUSTER `lookout_cluster` AS `lookout`.`span_logs_local`
ENGINE = Distributed(`lookout_cluster`, `lookout`, `span_logs_local`, cityHash64(trace_id));

CREATE TABLE IF NOT EXISTS `lookout`.`trace_content_local` ON CLUSTER `lookout_cluster`
(
    tenant_id LowCardinality(String),
    project_id LowCardinality(String),
    trace_id String,
    field LowCardinality(String),
    timestamp DateTime64(3, 'UTC'),
    text String CODEC(ZSTD(3)),
    text_norm String CODEC(ZSTD(3)),
    processed_at DateTime64(3, 'UTC') DEFAULT now64(3),
    INDEX text_norm_bigrams text_norm TYPE text(tokenizer = ngrams(2))
)
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/lookout/trace_content_local', '{replica}', processed_at)
PARTITION BY toYYYYMM(timestamp)
ORDER BY (tenant_id, project_id, trace_id, field)
TTL toDateTime(timestamp) + INTERVAL 90 DAY;

CREATE TABLE IF NOT EXISTS `lookout`.`trace_content` ON CLUSTER `lookout_cluster` AS `lookout`.`trace_content_local`
ENGINE = Distributed(`lookout_cluster`, `lookout`, `trace_content_local`, cityHash64(trace_id));

CREATE TABLE IF NOT EXISTS `lookout`.`retention_settings` ON CLUSTER `lookout_cluster`
(
    tenant_id String,
    project_id String,
    analytics_days UInt8,
    content_days UInt8
)
ENGINE = Join(ANY, LEFT, tenant_id, project_id)
SETTINGS join_any_take_last_row = 1;

ALTER TABLE `lookout`.`spans_local` ON CLUSTER `lookout_cluster`
    ADD COLUMN IF NOT EXISTS analytics_days UInt8 DEFAULT coalesce(joinGetOrNull('lookout.retention_settings', 'analytics_days', CAST(tenant_id, 'String'), CAST(project_id, 'String')), joinGetOrNull('lookout.retention_settings', 'analytics_days', CAST(tenant_id, 'String'), ''), toUInt8(90)),
    ADD COLUMN IF NOT EXISTS content_days UInt8 DEFAULT coalesce(joinGetOrNull('lookout.retention_settings', 'content_days', CAST(tenant_id, 'String'), CAST(project_id, 'String')), joinGetOrNull('lookout.retention_settings', 'content_days', CAST(tenant_id, 'String'), ''), toUInt8(90));

ALTER TABLE `lookout`.`spans` ON CLUSTER `lookout_cluster`
    ADD COLUMN IF NOT EXISTS analytics_days UInt8 DEFAULT coalesce(joinGetOrNull('lookout.retention_settings', 'analytics_days', CAST(tenant_id, 'String'), CAST(project_id, 'String')), joinGetOrNull('lookout.retention_settings', 'analytics_days', CAST(tenant_id, 'String'), ''), toUInt8(90)),
    ADD COLUMN IF NOT EXISTS content_days UInt8 DEFAULT coalesce(joinGetOrNull('lookout.retention_settings', 'content_days', CAST(tenant_id, 'String'), CAST(project_id, 'String')), joinGetOrNull('lookout.retention_settings', 'content_days', CAST(tenant_id, 'String'), ''), toUInt8(90));

ALTER TABLE `lookout`.`spans_local` ON CLUSTER `lookout_cluster`
    MODIFY TTL toDateTime(timestamp) + toIntervalDay(analytics_days)
    SETTINGS materialize_ttl_after_modify = 0;

ALTER TABLE `lookout`.`spans_local` ON CLUSTER `lookout_cluster`
    MODIFY COLUMN attributes String TTL toDateTime(timestamp) + toIntervalDay(content_days),
    MODIFY COLUMN events String TTL toDateTime(timestamp) + toIntervalDay(content_days)
    SETTINGS materialize_ttl_after_modify = 0;

ALTER TABLE `lookout`.`span_logs_local` ON CLUSTER `lookout_cluster`
    ADD COLUMN IF NOT EXISTS analytics_days UInt8 DEFAULT coalesce(joinGetOrNull('lookout.retention_settings', 'analytics_days', CAST(tenant_id, 'String'), CAST(project_id, 'String')), joinGetOrNull('lookout.retention_settings', 'analytics_days', CAST(tenant_id, 'String'), ''), toUInt8(90)),
    ADD COLUMN IF NOT EXISTS content_days UInt8 DEFAULT coalesce(joinGetOrNull('lookout.retention_settings', 'content_days', CAST(tenant_id, 'String'), CAST(project_id, 'String')), joinGetOrNull('lookout.retention_settings', 'content_days', CAST(tenant_id, 'String'), ''), toUInt8(90));

ALTER TABLE `lookout`.`span_logs` ON CLUSTER `lookout_cluster`
    ADD COLUMN IF NOT EXISTS analytics_days UInt8 DEFAULT coalesce(joinGetOrNull('lookout.retention_settings', 'analytics_days', CAST(tenant_id, 'String'), CAST(project_id, 'String')), joinGetOrNull('lookout.retention_settings', 'analytics_days', CAST(tenant_id, 'String'), ''), toUInt8(90)),
    ADD COLUMN IF NOT EXISTS content_days UInt8 DEFAULT coalesce(joinGetOrNull('lookout.retention_settings', 'content_days', CAST(tenant_id, 'String'), CAST(project_id, 'String')), joinGetOrNull('lookout.retention_settings', 'content_days', CAST(tenant_id, 'String'), ''), toUInt8(90));

ALTER TABLE `lookout`.`span_logs_local` ON CLUSTER `lookout_cluster`
    MODIFY TTL toDateTime(timestamp) + toIntervalDay(content_days)
    SETTINGS materialize_ttl_after_modify = 0;

ALTER TABLE `lookout`.`traces_local` ON CLUSTER `lookout_cluster`
    ADD COLUMN IF NOT EXISTS analytics_days UInt8 DEFAULT coalesce(joinGetOrNull('lookout.retention_settings', 'analytics_days', CAST(tenant_id, 'String'), CAST(project_id, 'String')), joinGetOrNull('lookout.retention_settings', 'analytics_days', CAST(tenant_id, 'String'), ''), toUInt8(90)),
    ADD COLUMN IF NOT EXISTS content_days UInt8 DEFAULT coalesce(joinGetOrNull('lookout.retention_settings', 'content_days', CAST(tenant_id, 'String'), CAST(project_id, 'String')), joinGetOrNull('lookout.retention_settings', 'content_days', CAST(tenant_id, 'String'), ''), toUInt8(90));

ALTER TABLE `lookout`.`traces` ON CLUSTER `lookout_cluster`
    ADD COLUMN IF NOT EXISTS analytics_days UInt8 DEFAULT coalesce(joinGetOrNull('lookout.retention_settings', 'analytics_days', CAST(tenant_id, 'String'), CAST(project_id, 'String')), joinGetOrNull('lookout.retention_settings', 'analytics_days', CAST(tenant_id, 'String'), ''), toUInt8(90)),
    ADD COLUMN IF NOT EXISTS content_days UInt8 DEFAULT coalesce(joinGetOrNull('lookout.retention_settings', 'content_days', CAST(tenant_id, 'String'), CAST(project_id, 'String')), joinGetOrNull('lookout.retention_settings', 'content_days', CAST(tenant_id, 'String'), ''), toUInt8(90));

ALTER TABLE `lookout`.`traces_local` ON CLUSTER `lookout_cluster`
    MODIFY TTL toDateTime(timestamp) + toIntervalDay(analytics_days)
    SETTINGS materialize_ttl_after_modify = 0;

ALTER TABLE `lookout`.`traces_local` ON CLUSTER `lookout_cluster`
    MODIFY COLUMN agent_input_display String TTL toDateTime(timestamp) + toIntervalDay(content_days),
    MODIFY COLUMN agent_input Nullable(String) TTL toDateTime(timestamp) + toIntervalDay(content_days),
    MODIFY COLUMN agent_output Nullable(String) TTL toDateTime(timestamp) + toIntervalDay(content_days),
    MODIFY COLUMN tool_calls String TTL toDateTime(timestamp) + toIntervalDay(content_days)
    SETTINGS materialize_ttl_after_modify = 0;

ALTER TABLE `lookout`.`trace_content_local` ON CLUSTER `lookout_cluster`
    ADD COLUMN IF NOT EXISTS analytics_days UInt8 DEFAULT coalesce(joinGetOrNull('lookout.retention_settings', 'analytics_days', CAST(tenant_id, 'String'), CAST(project_id, 'String')), joinGetOrNull('lookout.retention_settings', 'analytics_days', CAST(tenant_id, 'String'), ''), toUInt8(90)),
    ADD COLUMN IF NOT EXISTS content_days UInt8 DEFAULT coalesce(joinGetOrNull('lookout.retention_settings', 'content_days', CAST(tenant_id, 'String'), CAST(project_id, 'String')), joinGetOrNull('lookout.retention_settings', 'content_days', CAST(tenant_id, 'String'), ''), toUInt8(90));

ALTER TABLE `lookout`.`trace_content` ON CLUSTER `lookout_cluster`
    ADD COLUMN IF NOT EXISTS analytics_days UInt8 DEFAULT coalesce(joinGetOrNull('lookout.retention_settings', 'analytics_days', CAST(tenant_id, 'String'), CAST(project_id, 'String')), joinGetOrNull('lookout.retention_settings', 'analytics_days', CAST(tenant_id, 'String'), ''), toUInt8(90)),
    ADD COLUMN IF NOT EXISTS content_days UInt8 DEFAULT coalesce(joinGetOrNull('lookout.retention_settings', 'content_days', CAST(tenant_id, 'String'), CAST(project_id, 'String')), joinGetOrNull('lookout.retention_settings', 'content_days', CAST(tenant_id, 'String'), ''), toUInt8(90));

ALTER TABLE `lookout`.`trace_content_local` ON CLUSTER `lookout_cluster`
    MODIFY TTL toDateTime(timestamp) + toIntervalDay(content_days)
    SETTINGS materialize_ttl_after_modify = 0;

ALTER TABLE `lookout`.`event_trace_processed_local` ON CLUSTER `lookout_cluster`
    ADD COLUMN IF NOT EXISTS analytics_days UInt8 DEFAULT coalesce(joinGetOrNull('lookout.retention_settings', 'analytics_days', CAST(tenant_id, 'String'), CAST(project_id, 'String')), joinGetOrNull('lookout.retention_settings', 'analytics_days', CAST(tenant_id, 'String'), ''), toUInt8(90)),
    ADD COLUMN IF NOT EXISTS content_days UInt8 DEFAULT coalesce(joinGetOrNull('lookout.retention_settings', 'content_days', CAST(tenant_id, 'String'), CAST(project_id, 'String')), joinGetOrNull('lookout.retention_settings', 'content_days', CAST(tenant_id, 'String'), ''), toUInt8(90));

ALTER TABLE `lookout`.`event_trace_processed` ON CLUSTER `lookout_cluster`
    ADD COLUMN IF NOT EXISTS analytics_days UInt8 DEFAULT coalesce(joinGetOrNull('lookout.retention_settings', 'analytics_days', CAST(tenant_id, 'String'), CAST(project_id, 'String')), joinGetOrNull('lookout.retention_settings', 'analytics_days', CAST(tenant_id, 'String'), ''), toUInt8(90)),
    ADD COLUMN IF NOT EXISTS content_days UInt8 DEFAULT coalesce(joinGetOrNull('lookout.retention_settings', 'content_days', CAST(tenant_id, 'String'), CAST(project_id, 'String')), joinGetOrNull('lookout.retention_settings', 'content_days', CAST(tenant_id, 'String'), ''), toUInt8(90));

ALTER TABLE `lookout`.`event_trace_processed_local` ON CLUSTER `lookout_cluster`
    MODIFY TTL toDateTime(timestamp) + toIntervalDay(analytics_days)
    SETTINGS materialize_ttl_after_modify = 0;

ALTER TABLE `lookout`.`event_generation_completed_local` ON CLUSTER `lookout_cluster`
    ADD COLUMN IF NOT EXISTS analytics_days UInt8 DEFAULT coalesce(joinGetOrNull('lookout.retention_settings', 'analytics_days', CAST(tenant_id, 'String'), CAST(project_id, 'String')), joinGetOrNull('lookout.retention_settings', 'analytics_days', CAST(tenant_id, 'String'), ''), toUInt8(90)),
    ADD COLUMN IF NOT EXISTS content_days UInt8 DEFAULT coalesce(joinGetOrNull('lookout.retention_settings', 'content_days', CAST(tenant_id, 'String'), CAST(project_id, 'String')), joinGetOrNull('lookout.retention_settings', 'content_days', CAST(tenant_id, 'String'), ''), toUInt8(90));

ALTER TABLE `lookout`.`event_generation_completed` ON CLUSTER `lookout_cluster`
    ADD COLUMN IF NOT EXISTS analytics_days UInt8 DEFAULT coalesce(joinGetOrNull('lookout.retention_settings', 'analytics_days', CAST(tenant_id, 'String'), CAST(project_id, 'String')), joinGetOrNull('lookout.retention_settings', 'analytics_days', CAST(tenant_id, 'String'), ''), toUInt8(90)),
    ADD COLUMN IF NOT EXISTS content_days UInt8 DEFAULT coalesce(joinGetOrNull('lookout.retention_settings', 'content_days', CAST(tenant_id, 'String'), CAST(project_id, 'String')), joinGetOrNull('lookout.retention_settings', 'content_days', CAST(tenant_id, 'String'), ''), toUInt8(90));

ALTER TABLE `lookout`.`event_generation_completed_local` ON CLUSTER `lookout_cluster`
    MODIFY TTL toDateTime(timestamp) + toIntervalDay(analytics_days)
    SETTINGS materialize_ttl_after_modify = 0;

ALTER TABLE `lookout`.`event_tool_called_local` ON CLUSTER `lookout_cluster`
    ADD COLUMN IF NOT EXISTS analytics_days UInt8 DEFAULT coalesce(joinGetOrNull('lookout.retention_settings', 'analytics_days', CAST(tenant_id, 'String'), CAST(project_id, 'String')), joinGetOrNull('lookout.retention_settings', 'analytics_days', CAST(tenant_id, 'String'), ''), toUInt8(90)),
    ADD COLUMN IF NOT EXISTS content_days UInt8 DEFAULT coalesce(joinGetOrNull('lookout.retention_settings', 'content_days', CAST(tenant_id, 'String'), CAST(project_id, 'String')), joinGetOrNull('lookout.retention_settings', 'content_days', CAST(tenant_id, 'String'), ''), toUInt8(90));

ALTER TABLE `lookout`.`event_tool_called` ON CLUSTER `lookout_cluster`
    ADD COLUMN IF NOT EXISTS analytics_days UInt8 DEFAULT coalesce(joinGetOrNull('lookout.retention_settings', 'analytics_days', CAST(tenant_id, 'String'), CAST(project_id, 'String')), joinGetOrNull('lookout.retention_settings', 'analytics_days', CAST(tenant_id, 'String'), ''), toUInt8(90)),
    ADD COLUMN IF NOT EXISTS content_days UInt8 DEFAULT coalesce(joinGetOrNull('lookout.retention_settings', 'content_days', CAST(tenant_id, 'String'), CAST(project_id, 'String')), joinGetOrNull('lookout.retention_settings', 'content_days', CAST(tenant_id, 'String'), ''), toUInt8(90));

ALTER TABLE `lookout`.`event_tool_called_local` ON CLUSTER `lookout_cluster`
    MODIFY TTL toDateTime(timestamp) + toIntervalDay(analytics_days)
    SETTINGS materialize_ttl_after_modify = 0;

ALTER TABLE `lookout`.`event_span_errored_local` ON CLUSTER `lookout_cluster`
    ADD COLUMN IF NOT EXISTS analytics_days UInt8 DEFAULT coalesce(joinGetOrNull('lookout.retention_settings', 'analytics_days', CAST(tenant_id, 'String'), CAST(project_id, 'String')), joinGetOrNull('lookout.retention_settings', 'analytics_days', CAST(tenant_id, 'String'), ''), toUInt8(90)),
    ADD COLUMN IF NOT EXISTS content_days UInt8 DEFAULT coalesce(joinGetOrNull('lookout.retention_settings', 'content_days', CAST(tenant_id, 'String'), CAST(project_id, 'String')), joinGetOrNull('lookout.retention_settings', 'content_days', CAST(tenant_id, 'String'), ''), toUInt8(90));

ALTER TABLE `lookout`.`event_span_errored` ON CLUSTER `lookout_cluster`
    ADD COLUMN IF NOT EXISTS analytics_days UInt8 DEFAULT coalesce(joinGetOrNull('lookout.retention_settings', 'analytics_days', CAST(tenant_id, 'String'), CAST(project_id, 'String')), joinGetOrNull('lookout.retention_settings', 'analytics_days', CAST(tenant_id, 'String'), ''), toUInt8(90)),
    ADD COLUMN IF NOT EXISTS content_days UInt8 DEFAULT coalesce(joinGetOrNull('lookout.retention_settings', 'content_days', CAST(tenant_id, 'String'), CAST(project_id, 'String')), joinGetOrNull('lookout.retention_settings', 'content_days', CAST(tenant_id, 'String'), ''), toUInt8(90));

ALTER TABLE `lookout`.`event_span_errored_local` ON CLUSTER `lookout_cluster`
    MODIFY TTL toDateTime(timestamp) + toIntervalDay(analytics_days)
    SETTINGS materialize_ttl_after_modify = 0;

ALTER TABLE `lookout`.`event_issue_local` ON CLUSTER `lookout_cluster`
    ADD COLUMN IF NOT EXISTS analytics_days UInt8 DEFAULT coalesce(joinGetOrNull('lookout.retention_settings', 'analytics_days', CAST(tenant_id, 'String'), CAST(project_id, 'String')), joinGetOrNull('lookout.retention_settings', 'analytics_days', CAST(tenant_id, 'String'), ''), toUInt8(90)),
    ADD COLUMN IF NOT EXISTS content_days UInt8 DEFAULT coalesce(joinGetOrNull('lookout.retention_settings', 'content_days', CAST(tenant_id, 'String'), CAST(project_id, 'String')), joinGetOrNull('lookout.retention_settings', 'content_days', CAST(tenant_id, 'String'), ''), toUInt8(90));

ALTER TABLE `lookout`.`event_issue` ON CLUSTER `lookout_cluster`
    ADD COLUMN IF NOT EXISTS analytics_days UInt8 DEFAULT coalesce(joinGetOrNull('lookout.retention_settings', 'analytics_days', CAST(tenant_id, 'String'), CAST(project_id, 'String')), joinGetOrNull('lookout.retention_settings', 'analytics_days', CAST(tenant_id, 'String'), ''), toUInt8(90)),
    ADD COLUMN IF NOT EXISTS content_days UInt8 DEFAULT coalesce(joinGetOrNull('lookout.retention_settings', 'content_days', CAST(tenant_id, 'String'), CAST(project_id, 'String')), joinGetOrNull('lookout.retention_settings', 'content_days', CAST(tenant_id, 'String'), ''), toUInt8(90));

ALTER TABLE `lookout`.`event_issue_local` ON CLUSTER `lookout_cluster`
    MODIFY TTL toDateTime(timestamp) + toIntervalDay(analytics_days)
    SETTINGS materialize_ttl_after_modify = 0;

CREATE TABLE IF NOT EXISTS `lookout`.`trace_content_v017_local` ON CLUSTER `lookout_cluster`
(
    tenant_id LowCardinality(String),
    project_id LowCardinality(String),
    trace_id String,
    field LowCardinality(String),
    timestamp DateTime64(3, 'UTC'),
    text String CODEC(ZSTD(3)),
    text_norm String CODEC(ZSTD(3)),
    processed_at DateTime64(3, 'UTC') DEFAULT now64(3),
    analytics_days UInt8 DEFAULT coalesce(joinGetOrNull('lookout.retention_settings', 'analytics_days', CAST(tenant_id, 'String'), CAST(project_id, 'String')), joinGetOrNull('lookout.retention_settings', 'analytics_days', CAST(tenant_id, 'String'), ''), toUInt8(90)),
    content_days UInt8 DEFAULT coalesce(joinGetOrNull('lookout.retention_settings', 'content_days', CAST(tenant_id, 'String'), CAST(project_id, 'String')), joinGetOrNull('lookout.retention_settings', 'content_days', CAST(tenant_id, 'String'), ''), toUInt8(90)),
    INDEX text_norm_bigrams text_norm TYPE text(tokenizer = ngrams(2))
)
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{uuid}/{shard}', '{replica}', processed_at)
PARTITION BY toYYYYMM(timestamp)
ORDER BY (tenant_id, project_id, trace_id, field)
TTL toDateTime(timestamp) + toIntervalDay(content_days)
SETTINGS index_granularity = 256;

CREATE TABLE IF NOT EXISTS `lookout`.`trace_content_v017` ON CLUSTER `lookout_cluster` AS `lookout`.`trace_content_v017_local`
ENGINE = Distributed(`lookout_cluster`, `lookout`, `trace_content_v017_local`, cityHash64(trace_id));

INSERT INTO `lookout`.`trace_content` (tenant_id, project_id, trace_id, field, timestamp, text, text_norm, processed_at, analytics_days, content_days)
SETTINGS distributed_foreground_insert = 1
SELECT tenant_id, project_id, trace_id, field, timestamp, text, text_norm, processed_at, analytics_days, content_days
FROM `lookout`.trace_content_v017
WHERE (SELECT count() FROM `lookout`.trace_content_v017) > 0 AND processed_at >= (SELECT max(processed_at) - INTERVAL 1 HOUR FROM `lookout`.trace_content_v017)
    AND cityHash64(tenant_id, project_id, trace_id, field, processed_at) GLOBAL NOT IN (
        SELECT cityHash64(tenant_id, project_id, trace_id, field, processed_at) FROM `lookout`.trace_content
        WHERE (SELECT count() FROM `lookout`.trace_content_v017) > 0 AND processed_at >= (SELECT max(processed_at) - INTERVAL 1 HOUR FROM `lookout`.trace_content_v017)
    );

DROP TABLE IF EXISTS `lookout`.`trace_content_v017` ON CLUSTER `lookout_cluster` SYNC;

DROP TABLE IF EXISTS `lookout`.`trace_content_v017_local` ON CLUSTER `lookout_cluster` SYNC;

CREATE TABLE IF NOT EXISTS `lookout`.`trace_content_v017_local` ON CLUSTER `lookout_cluster`
(
    tenant_id LowCardinality(String),
    project_id LowCardinality(String),
    trace_id String,
    field LowCardinality(String),
    timestamp DateTime64(3, 'UTC'),
    text String CODEC(ZSTD(3)),
    text_norm String CODEC(ZSTD(3)),
    processed_at DateTime64(3, 'UTC') DEFAULT now64(3),
    analytics_days UInt8 DEFAULT coalesce(joinGetOrNull('lookout.retention_settings', 'analytics_days', CAST(tenant_id, 'String'), CAST(project_id, 'String')), joinGetOrNull('lookout.retention_settings', 'analytics_days', CAST(tenant_id, 'String'), ''), toUInt8(90)),
    content_days UInt8 DEFAULT coalesce(joinGetOrNull('lookout.retention_settings', 'content_days', CAST(tenant_id, 'String'), CAST(project_id, 'String')), joinGetOrNull('lookout.retention_settings', 'content_days', CAST(tenant_id, 'String'), ''), toUInt8(90)),
    INDEX text_norm_bigrams text_norm TYPE text(tokenizer = ngrams(2))
)
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{uuid}/{shard}', '{replica}', processed_at)
PARTITION BY toYYYYMM(timestamp)
ORDER BY (tenant_id, project_id, trace_id, field)
TTL toDateTime(timestamp) + toIntervalDay(content_days)
SETTINGS index_granularity = 256;

CREATE TABLE IF NOT EXISTS `lookout`.`trace_content_v017` ON CLUSTER `lookout_cluster` AS `lookout`.`trace_content_v017_local`
ENGINE = Distributed(`lookout_cluster`, `lookout`, `trace_content_v017_local`, cityHash64(trace_id));

INSERT INTO `lookout`.`trace_content_v017` (tenant_id, project_id, trace_id, field, timestamp, text, text_norm, processed_at, analytics_days, content_days)
SETTINGS distributed_foreground_insert = 1
SELECT tenant_id, project_id, trace_id, field, timestamp, text, text_norm, processed_at, analytics_days, content_days
FROM `lookout`.trace_content;

EXCHANGE TABLES `lookout`.`trace_content_local` AND `lookout`.`trace_content_v017_local` ON CLUSTER `lookout_cluster`;

CREATE OR REPLACE TABLE `lookout`.`trace_content` ON CLUSTER `lookout_cluster` AS `lookout`.`trace_content_local`
ENGINE = Distributed(`lookout_cluster`, `lookout`, `trace_content_local`, cityHash64(trace_id));

CREATE OR REPLACE TABLE `lookout`.`trace_content_v017` ON CLUSTER `lookout_cluster` AS `lookout`.`trace_content_v017_local`
ENGINE = Distributed(`lookout_cluster`, `lookout`, `trace_content_v017_local`, cityHash64(trace_id));

INSERT INTO `lookout`.`trace_content` (tenant_id, project_id, trace_id, field, timestamp, text, text_norm, processed_at, analytics_days, content_days)
SETTINGS distributed_foreground_insert = 1
SELECT tenant_id, project_id, trace_id, field, timestamp, text, text_norm, processed_at, analytics_days, content_days
FROM `lookout`.trace_content_v017
WHERE processed_at >= (SELECT max(processed_at) - INTERVAL 1 HOUR FROM `lookout`.trace_content_v017)
    AND cityHash64(tenant_id, project_id, trace_id, field, processed_at) GLOBAL NOT IN (
        SELECT cityHash64(tenant_id, project_id, trace_id, field, processed_at) FROM `lookout`.trace_content
        WHERE processed_at >= (SELECT max(processed_at) - INTERVAL 1 HOUR FROM `lookout`.trace_content_v017)
    );

DROP TABLE IF EXISTS `lookout`.`trace_content_v017` ON CLUSTER `lookout_cluster` SYNC;

DROP TABLE IF EXISTS `lookout`.`trace_content_v017_local` ON CLUSTER `lookout_cluster` SYNC;

ALTER TABLE `lookout`.`traces_local` ON CLUSTER `lookout_cluster`
    ADD COLUMN IF NOT EXISTS preview UInt8 DEFAULT 0 AFTER estimated_cost_usd;

ALTER TABLE `lookout`.`traces` ON CLUSTER `lookout_cluster`
    ADD COLUMN IF NOT EXISTS preview UInt8 DEFAULT 0 AFTER estimated_cost_usd;

CREATE TABLE IF NOT EXISTS `lookout`.`traces_v019_local` ON CLUSTER `lookout_cluster`
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
    analytics_days UInt8 DEFAULT coalesce(joinGetOrNull('lookout.retention_settings', 'analytics_days', CAST(tenant_id, 'String'), CAST(project_id, 'String')), joinGetOrNull('lookout.retention_settings', 'analytics_days', CAST(tenant_id, 'String'), ''), toUInt8(90)),
    content_days UInt8 DEFAULT coalesce(joinGetOrNull('lookout.retention_settings', 'content_days', CAST(tenant_id, 'String'), CAST(project_id, 'String')), joinGetOrNull('lookout.retention_settings', 'content_days', CAST(tenant_id, 'String'), ''), toUInt8(90))
)
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{uuid}/{shard}', '{replica}', processed_at)
PARTITION BY toYYYYMM(timestamp)
ORDER BY (tenant_id, project_id, trace_id)
TTL toDateTime(timestamp) + toIntervalDay(analytics_days)
SETTINGS index_granularity = 256;

CREATE TABLE IF NOT EXISTS `lookout`.`traces_v019` ON CLUSTER `lookout_cluster` AS `lookout`.`traces_v019_local`
ENGINE = Distributed(`lookout_cluster`, `lookout`, `traces_v019_local`, cityHash64(trace_id));

INSERT INTO `lookout`.`traces` (tenant_id, project_id, trace_id, otel_trace_id, timestamp, service_name, agent_name, thread_id, release, agent_input_display, agent_input, agent_output, tool_calls, interaction, has_error, total_duration_ms, span_count, total_tokens, error_count, models_used, stats_tool_calls, estimated_cost_usd, preview, processed_at, analytics_days, content_days)
SETTINGS distributed_foreground_insert = 1
SELECT tenant_id, project_id, trace_id, otel_trace_id, timestamp, service_name, agent_name, thread_id, release, agent_input_display, agent_input, agent_output, tool_calls, interaction, has_error, total_duration_ms, span_count, total_tokens, error_count, models_used, stats_tool_calls, estimated_cost_usd, preview, processed_at, analytics_days, content_days
FROM `lookout`.traces_v019
WHERE (SELECT count() FROM `lookout`.traces_v019) > 0 AND processed_at >= (SELECT max(processed_at) - INTERVAL 1 HOUR FROM `lookout`.traces_v019)
    AND cityHash64(tenant_id, project_id, trace_id, processed_at) GLOBAL NOT IN (
        SELECT cityHash64(tenant_id, project_id, trace_id, processed_at) FROM `lookout`.traces
        WHERE (SELECT count() FROM `lookout`.traces_v019) > 0 AND processed_at >= (SELECT max(processed_at) - INTERVAL 1 HOUR FROM `lookout`.traces_v019)
    );

DROP TABLE IF EXISTS `lookout`.`traces_v019` ON CLUSTER `lookout_cluster` SYNC;

DROP TABLE IF EXISTS `lookout`.`traces_v019_local` ON CLUSTER `lookout_cluster` SYNC;

CREATE TABLE IF NOT EXISTS `lookout`.`traces_v019_local` ON CLUSTER `lookout_cluster`
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
    analytics_days UInt8 DEFAULT coalesce(joinGetOrNull('lookout.retention_settings', 'analytics_days', CAST(tenant_id, 'String'), CAST(project_id, 'String')), joinGetOrNull('lookout.retention_settings', 'analytics_days', CAST(tenant_id, 'String'), ''), toUInt8(90)),
    content_days UInt8 DEFAULT coalesce(joinGetOrNull('lookout.retention_settings', 'content_days', CAST(tenant_id, 'String'), CAST(project_id, 'String')), joinGetOrNull('lookout.retention_settings', 'content_days', CAST(tenant_id, 'String'), ''), toUInt8(90))
)
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{uuid}/{shard}', '{replica}', processed_at)
PARTITION BY toYYYYMM(timestamp)
ORDER BY (tenant_id, project_id, trace_id)
TTL toDateTime(timestamp) + toIntervalDay(analytics_days)
SETTINGS index_granularity = 256;

CREATE TABLE IF NOT EXISTS `lookout`.`traces_v019` ON CLUSTER `lookout_cluster` AS `lookout`.`traces_v019_local`
ENGINE = Distributed(`lookout_cluster`, `lookout`, `traces_v019_local`, cityHash64(trace_id));

INSERT INTO `lookout`.`traces_v019` (tenant_id, project_id, trace_id, otel_trace_id, timestamp, service_name, agent_name, thread_id, release, agent_input_display, agent_input, agent_output, tool_calls, interaction, has_error, total_duration_ms, span_count, total_tokens, error_count, models_used, stats_tool_calls, estimated_cost_usd, preview, processed_at, analytics_days, content_days)
SETTINGS distributed_foreground_insert = 1
SELECT tenant_id, project_id, trace_id, otel_trace_id, timestamp, service_name, agent_name, thread_id, release, agent_input_display, agent_input, agent_output, tool_calls, interaction, has_error, total_duration_ms, span_count, total_tokens, error_count, models_used, stats_tool_calls, estimated_cost_usd, preview, processed_at, analytics_days, content_days
FROM `lookout`.traces;

EXCHANGE TABLES `lookout`.`traces_local` AND `lookout`.`traces_v019_local` ON CLUSTER `lookout_cluster`;

CREATE OR REPLACE TABLE `lookout`.`traces` ON CLUSTER `lookout_cluster` AS `lookout`.`traces_local`
ENGINE = Distributed(`lookout_cluster`, `lookout`, `traces_local`, cityHash64(trace_id));

CREATE OR REPLACE TABLE `lookout`.`traces_v019` ON CLUSTER `lookout_cluster` AS `lookout`.`traces_v019_local`
ENGINE = Distributed(`lookout_cluster`, `lookout`, `traces_v019_local`, cityHash64(trace_id));

INSERT INTO `lookout`.`traces` (tenant_id, project_id, trace_id, otel_trace_id, timestamp, service_name, agent_name, thread_id, release, agent_input_display, agent_input, agent_output, tool_calls, interaction, has_error, total_duration_ms, span_count, total_tokens, error_count, models_used, stats_tool_calls, estimated_cost_usd, preview, processed_at, analytics_days, content_days)
SETTINGS distributed_foreground_insert = 1
SELECT tenant_id, project_id, trace_id, otel_trace_id, timestamp, service_name, agent_name, thread_id, release, agent_input_display, agent_input, agent_output, tool_calls, interaction, has_error, total_duration_ms, span_count, total_tokens, error_count, models_used, stats_tool_calls, estimated_cost_usd, preview, processed_at, analytics_days, content_days
FROM `lookout`.traces_v019
WHERE processed_at >= (SELECT max(processed_at) - INTERVAL 1 HOUR FROM `lookout`.traces_v019)
    AND cityHash64(tenant_id, project_id, trace_id, processed_at) GLOBAL NOT IN (
        SELECT cityHash64(tenant_id, project_id, trace_id, processed_at) FROM `lookout`.traces
        WHERE processed_at >= (SELECT max(processed_at) - INTERVAL 1 HOUR FROM `lookout`.traces_v019)
    );

DROP TABLE IF EXISTS `lookout`.`traces_v019` ON CLUSTER `lookout_cluster` SYNC;

DROP TABLE IF EXISTS `lookout`.`traces_v019_local` ON CLUSTER `lookout_cluster` SYNC;

ALTER TABLE `lookout`.`spans_local` ON CLUSTER `lookout_cluster`
    ADD INDEX IF NOT EXISTS ingested_at_minmax ingested_at TYPE minmax GRANULARITY 1;

ALTER TABLE `lookout`.`spans_local` ON CLUSTER `lookout_cluster`
    MATERIALIZE INDEX ingested_at_minmax;

ALTER TABLE `lookout`.`traces_local` ON CLUSTER `lookout_cluster`
    ADD INDEX IF NOT EXISTS thread_id_bloom thread_id TYPE bloom_filter(0.01) GRANULARITY 1;

ALTER TABLE `lookout`.`traces_local` ON CLUSTER `lookout_cluster`
    MATERIALIZE INDEX thread_id_bloom;
