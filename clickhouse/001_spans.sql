-- Raw spans as received over OTLP, one row per (trace, span). Re-sent spans carry the same key
-- and collapse on merge (ReplacingMergeTree); the ingest writer also skips spans already stored.
-- trace_id is Lookout's trace UUID, derived from (project_id, otel_trace_id).
CREATE TABLE IF NOT EXISTS {db}.spans {on_cluster}
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
ENGINE = {replicated}ReplacingMergeTree(ingested_at)
PARTITION BY toYYYYMM(timestamp)
ORDER BY (tenant_id, project_id, trace_id, span_id)
TTL toDateTime(timestamp) + INTERVAL 90 DAY;
