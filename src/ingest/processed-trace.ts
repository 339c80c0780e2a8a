import type { ProcessedTrace } from '../trace-hooks.js';
import { isoFromDateTime64, nsToDateTime64 } from '../stores/clickhouse-time.js';
import type { NormalizedSpan } from './normalized-span.js';
import type { TraceSummary } from './trace-summary.js';

/** The hook payload (src/trace-hooks.ts) for the issues and monitors modules. */
export function processedTrace(summary: Pick<TraceSummary, 'trace'>, spans: NormalizedSpan[]): ProcessedTrace {
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
        span_name: s.name,
        error_type: typeof exceptionType === 'string' ? exceptionType : typeof errorType === 'string' ? errorType : '',
        message: s.statusDescription || (typeof exceptionMessage === 'string' ? exceptionMessage : ''),
        tool_name: s.spanClass === 'tool' ? s.toolName || s.name : '',
        timestamp: isoFromDateTime64(nsToDateTime64(s.startNs)),
      };
    });
  const toolCalls = spans
    .filter((s) => s.spanClass === 'tool')
    .map((s) => ({
      span_id: s.spanId,
      name: s.toolName || s.name,
      is_error: s.statusCode === 'ERROR',
      duration_ms: s.durationMs,
      input: s.toolArguments ?? '',
      output: s.toolResult ?? '',
    }));
  // Spans without attributes add nothing a monitor could match, only bytes to copy back.
  const spanAttributes: Record<string, Record<string, unknown>> = {};
  for (const s of spans) {
    for (const _key in s.attributes) {
      spanAttributes[s.spanId] = s.attributes;
      break;
    }
  }
  return {
    tenantId: trace.tenant_id,
    projectId: trace.project_id,
    traceId: trace.trace_id,
    otelTraceId: trace.otel_trace_id,
    timestamp: isoFromDateTime64(trace.timestamp),
    agentName: trace.agent_name,
    hasError: trace.has_error === 1,
    failures,
    toolCalls,
    agentInput: trace.agent_input,
    agentOutput: trace.agent_output,
    spanAttributes,
  };
}
