-- OpenTelemetry log records that carry a span context (POST /v1/logs), kept beside the spans they
-- belong to. A record joins its span when the span is read back (settling and the traces API), so
-- it may arrive before or after the span, in another request or at another process: GenAI content
-- events (gen_ai.user.message, gen_ai.choice, gen_ai.client.inference.operation.details, ...) count
-- as the same content on the span, other records show as the span's events.
--
-- Keyed like spans (tenant, project, trace, span) so a trace's records sit next to each other and
-- shard with its spans; record_id is a hash of the record, so a re-sent export collapses on merge
-- (ReplacingMergeTree) and readers drop a copy not merged yet. `timestamp` is the record's time and
-- gives it the spans' retention.
CREATE TABLE IF NOT EXISTS {db}.span_logs {on_cluster}
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
ENGINE = {replicated}ReplacingMergeTree(ingested_at)
PARTITION BY toYYYYMM(timestamp)
ORDER BY (tenant_id, project_id, trace_id, span_id, record_id)
TTL toDateTime(timestamp) + INTERVAL 90 DAY;
