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
ENGINE = Distributed(`lookout_cluster`, `lookout`, `event_generation_completed_local`, cityHash64(trace_id));

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
ENGINE = Distributed(`lookout_cluster`, `lookout`, `event_tool_called_local`, cityHash64(trace_id));

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
ENGINE = Distributed(`lookout_cluster`, `lookout`, `event_span_errored_local`, cityHash64(trace_id));

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
