import type { NormalizedSpan } from './normalized-span.js';
import { traceTiming, type TraceRow } from './trace-summary.js';

/**
 * A trace's row in the trace list from the moment its first spans are stored. Settling waits
 * TRACE_SETTLE_MS for the rest of a trace's spans before it writes the summary; until then the list
 * shows this preview, built from the spans of the request that first brought the trace: its ids,
 * time, service, agent, thread and release, and what those spans say of errors and duration. Token,
 * cost, input and tool figures wait for the summary (zero and empty here; the list item says
 * `settled: false`).
 *
 * The row carries the oldest possible processed_at, so the settled summary, written with the
 * settling time, always replaces it in the traces table (ReplacingMergeTree keeps the latest
 * processed_at), whichever of the two lands first (clickhouse/018_trace_previews.sql).
 */

export const PREVIEW_PROCESSED_AT = '1970-01-01 00:00:00.000';

/** The columns of a summary (TraceRow) a preview fills; the others keep their defaults. */
export type TracePreviewRow = Pick<
  TraceRow,
  | 'tenant_id' | 'project_id' | 'trace_id' | 'otel_trace_id' | 'timestamp' | 'service_name' | 'agent_name' | 'thread_id' | 'release'
  | 'tool_calls' | 'stats_tool_calls' | 'has_error' | 'total_duration_ms' | 'span_count' | 'error_count' | 'processed_at'
> & { preview: 1 };

/** The preview of one trace from its spans in a request (never empty), named as the summary names them. */
export function tracePreviewRow(spans: readonly NormalizedSpan[], agentName: string): TracePreviewRow {
  const first = spans[0];
  const root = spans.find((s) => s.parentSpanId === '');
  const { timestamp, totalDurationMs } = traceTiming(spans, root);
  const errorCount = spans.filter((s) => s.statusCode === 'ERROR').length;
  const pick = (get: (s: NormalizedSpan) => string) => spans.map(get).find((v) => v !== '') ?? '';
  return {
    tenant_id: first.tenantId,
    project_id: first.projectId,
    trace_id: first.traceId,
    otel_trace_id: first.otelTraceId,
    timestamp,
    service_name: root?.serviceName || pick((s) => s.serviceName),
    agent_name: agentName,
    thread_id: pick((s) => s.threadId),
    release: pick((s) => s.release),
    // Tool calls are counted once the summary fills these lists.
    tool_calls: '[]',
    stats_tool_calls: '[]',
    has_error: errorCount > 0 ? 1 : 0,
    total_duration_ms: totalDurationMs,
    span_count: spans.length,
    error_count: errorCount,
    preview: 1,
    processed_at: PREVIEW_PROCESSED_AT,
  };
}
