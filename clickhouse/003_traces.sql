-- Trace summaries for the traces API: one row per trace, replaced by newer processing.
CREATE TABLE IF NOT EXISTS {db}.traces {on_cluster}
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
ENGINE = {replicated}ReplacingMergeTree(processed_at)
PARTITION BY toYYYYMM(timestamp)
ORDER BY (tenant_id, project_id, trace_id)
TTL toDateTime(timestamp) + INTERVAL 90 DAY;
