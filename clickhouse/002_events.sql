-- Analytics events of SPEC.md "Events". Every event table carries tenant_id, project_id,
-- timestamp, actor, surface, user_id and api_key_id; missing strings are ''.
-- Per-span events are keyed by their span so a re-sent span collapses onto its first row.

CREATE TABLE IF NOT EXISTS {db}.event_generation_completed {on_cluster}
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
ENGINE = {replicated}ReplacingMergeTree(inserted_at)
PARTITION BY toYYYYMM(timestamp)
ORDER BY (tenant_id, project_id, timestamp, trace_id, span_id)
TTL toDateTime(timestamp) + INTERVAL 90 DAY;

CREATE TABLE IF NOT EXISTS {db}.event_tool_called {on_cluster}
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
ENGINE = {replicated}ReplacingMergeTree(inserted_at)
PARTITION BY toYYYYMM(timestamp)
ORDER BY (tenant_id, project_id, timestamp, trace_id, span_id)
TTL toDateTime(timestamp) + INTERVAL 90 DAY;

CREATE TABLE IF NOT EXISTS {db}.event_span_errored {on_cluster}
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
ENGINE = {replicated}ReplacingMergeTree(inserted_at)
PARTITION BY toYYYYMM(timestamp)
ORDER BY (tenant_id, project_id, timestamp, trace_id, span_id)
TTL toDateTime(timestamp) + INTERVAL 90 DAY;

-- One row per processed trace. A re-processed trace (late span) writes a newer row with the same
-- key and a larger processed_at; readers take the newest row (FINAL), so nothing counts twice.
-- The key leaves out timestamp because a late root span may move the trace's start.
CREATE TABLE IF NOT EXISTS {db}.event_trace_processed {on_cluster}
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
ENGINE = {replicated}ReplacingMergeTree(processed_at)
PARTITION BY toYYYYMM(timestamp)
ORDER BY (tenant_id, project_id, trace_id)
TTL toDateTime(timestamp) + INTERVAL 90 DAY;

-- The eight issue.* lifecycle events share one table; `name` says which one.
CREATE TABLE IF NOT EXISTS {db}.event_issue {on_cluster}
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
ENGINE = {replicated}ReplacingMergeTree(inserted_at)
PARTITION BY toYYYYMM(timestamp)
ORDER BY (tenant_id, project_id, timestamp, event_id)
TTL toDateTime(timestamp) + INTERVAL 90 DAY;
