import type { ProcessedTrace } from '../trace-hooks.js';
import { isoFromDateTime64, nsToDateTime64 } from '../../platform/clickhouse/clickhouse-time.js';
import type { NormalizedSpan } from '../../spans/normalized-span.js';
import type { TraceSummary } from '../../spans/trace-summary.js';

/**
 * Text as PostgreSQL can store it: its text type refuses NUL, which a span's status message or an
 * exception may hold (binary output, C strings). Written as U+FFFD, as the ClickHouse insert lines
 * write lone surrogates, so such a trace still gets its issues instead of failing extraction at
 * every processing.
 */
const storable = (text: string) => (text.includes('\u0000') ? text.replaceAll('\u0000', '\uFFFD') : text);

/**
 * The hook payload (src/ingest/trace-hooks.ts) for the issues and monitors modules; its texts reach
 * PostgreSQL. `withAttributes`: whether a listener wants the span attributes (else null).
 */
export function processedTrace(summary: Pick<TraceSummary, 'trace'>, spans: NormalizedSpan[], withAttributes = true): ProcessedTrace {
  const { trace } = summary;
  const failures = spans
    .filter((s) => s.statusCode === 'ERROR')
    .map((s) => {
      const exception = s.events.find((e) => e.name === 'exception');
      const exceptionType = exception?.attributes['exception.type'];
      const errorType = s.attributes['error.type'];
      const exceptionMessage = exception?.attributes['exception.message'];
      return {
        span_id: s.spanId,
        span_name: storable(s.name),
        error_type: storable(typeof exceptionType === 'string' ? exceptionType : typeof errorType === 'string' ? errorType : ''),
        message: storable(s.statusDescription || (typeof exceptionMessage === 'string' ? exceptionMessage : '')),
        tool_name: storable(s.spanClass === 'tool' ? s.toolName || s.name : ''),
        timestamp: isoFromDateTime64(nsToDateTime64(s.startNs)),
      };
    });
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
  // Spans without attributes add nothing a monitor could match, only bytes to copy back.
  let spanAttributes: Record<string, Record<string, unknown>> | null = null;
  if (withAttributes) {
    spanAttributes = {};
    for (const s of spans) {
      for (const _key in s.attributes) {
        spanAttributes[s.spanId] = s.attributes;
        break;
      }
    }
  }
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
    spanAttributes,
  };
}
