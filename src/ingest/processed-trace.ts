import type { ProcessedTrace } from '../trace-hooks.js';
import { isoFromDateTime64, nsToDateTime64 } from '../stores/clickhouse-time.js';
import type { SettleSpan } from './settle-records.js';
import type { TraceSummary } from './trace-summary.js';

/**
 * Text as PostgreSQL can store it: its text type refuses NUL, which a span's status message or an
 * exception may hold (binary output, C strings). Written as U+FFFD, as the ClickHouse insert lines
 * write lone surrogates, so such a trace still gets its issues instead of failing extraction at
 * every processing.
 */
const storable = (text: string) => (text.includes('\u0000') ? text.replaceAll('\u0000', '\uFFFD') : text);

/**
 * The hook payload (src/trace-hooks.ts) for the issues and monitors modules, but its span
 * attributes: those travel as JSON text (settle-records.ts spanAttributesJson, packed-hook.ts).
 * Its texts reach PostgreSQL.
 */
export function processedTrace(summary: Pick<TraceSummary<SettleSpan>, 'trace'>, spans: SettleSpan[]): Omit<ProcessedTrace, 'spanAttributes'> {
  const { trace } = summary;
  const failures = spans
    .filter((s) => s.statusCode === 'ERROR')
    .map((s) => ({
      span_id: s.spanId,
      span_name: storable(s.name),
      error_type: storable(s.errorType),
      message: storable(s.statusDescription || s.exceptionMessage),
      tool_name: storable(s.spanClass === 'tool' ? s.toolName || s.name : ''),
      timestamp: isoFromDateTime64(nsToDateTime64(s.startNs)),
    }));
  const toolCalls = spans
    .filter((s) => s.spanClass === 'tool')
    .map((s) => ({
      span_id: s.spanId,
      name: storable(s.toolName || s.name),
      is_error: s.statusCode === 'ERROR',
      duration_ms: s.durationMs,
      input: storable(s.toolArguments ?? ''),
      output: storable(s.toolResult ?? ''),
    }));
  return {
    tenantId: trace.tenant_id,
    projectId: trace.project_id,
    traceId: trace.trace_id,
    otelTraceId: trace.otel_trace_id,
    timestamp: isoFromDateTime64(trace.timestamp),
    agentName: storable(trace.agent_name),
    hasError: trace.has_error === 1,
    failures,
    toolCalls,
    agentInput: trace.agent_input,
    agentOutput: trace.agent_output,
  };
}
