import type { NormalizedSpan } from './normalized-span.js';
import type { SpanTree } from './span-tree.js';
import type { Origin } from './origin.js';
import type { Attributes, DecodedEvent } from './otlp-types.js';
import { resolveModelCalls, type CallUsage } from './model-calls.js';

/**
 * Per-span rows written at ingest: the raw `spans` row
 * and the `generation.completed`, `tool.called` and `span.errored` events. Column names and types
 * are those of clickhouse/001_spans.sql and 002_events.sql. UInt64 nanosecond times are written as
 * decimal strings (ClickHouse parses them exactly); DateTime64(3) as 'YYYY-MM-DD hh:mm:ss.sss' UTC.
 */

/** Spans sent by an SDK over OTLP with an API key. */
export function otlpOrigin(apiKeyId: string, userId: string): Origin {
  return { actor: 'sdk', surface: 'otlp', user_id: userId, api_key_id: apiKeyId };
}

export interface SpanRow {
  tenant_id: string;
  project_id: string;
  trace_id: string;
  otel_trace_id: string;
  span_id: string;
  parent_span_id: string;
  name: string;
  kind: string;
  start_time_ns: string;
  end_time_ns: string;
  duration_ms: number;
  status_code: string;
  status_description: string;
  service_name: string;
  span_class: string;
  model: string;
  provider: string;
  input_tokens: number;
  output_tokens: number;
  cached_input_tokens: number;
  agent_name: string;
  tool_name: string;
  thread_id: string;
  /**
   * The JSON columns (String in ClickHouse) as their values, not as text: JSON.stringify of the row
   * writes them as JSON values once, where text would be escaped a second time (36 % of
   * prepare-ingest was JSON.stringify of rows). ClickHouse stores the raw text of an object or array
   * read into a String column (input_format_json_read_objects_as_strings / _arrays_as_strings), byte
   * for byte what JSON.stringify of the value gives; read back, the columns are that text.
   */
  attributes: Attributes;
  events: DecodedEvent[];
  resource: Attributes;
  scope_name: string;
  scope_version: string;
  timestamp: string;
}

interface EventBase extends Origin {
  tenant_id: string;
  project_id: string;
  timestamp: string;
  trace_id: string;
  span_id: string;
}

export interface GenerationCompletedRow extends EventBase {
  model: string;
  provider: string;
  duration_ms: number;
  input_tokens: number;
  output_tokens: number;
  cached_input_tokens: number;
  /** Prompt tokens written to a provider cache (clickhouse/004_cache_write_tokens.sql); 0 when not reported. */
  cache_write_input_tokens: number;
  tps: number | null;
  error: number;
}

export interface ToolCalledRow extends EventBase {
  tool: string;
  agent_name: string;
  duration_ms: number;
  output_tokens: number;
  error: number;
}

export interface SpanErroredRow extends EventBase {
  span_name: string;
}

export interface SpanEventRows {
  spans: SpanRow[];
  generations: GenerationCompletedRow[];
  tools: ToolCalledRow[];
  errors: SpanErroredRow[];
}

/** Output tokens per second of a generation; null when unknown (no output count or no duration). */
export function tokensPerSecond(outputTokens: number | null, durationMs: number): number | null {
  if (outputTokens === null || outputTokens <= 0 || durationMs <= 0) return null;
  return outputTokens / (durationMs / 1000);
}

export function spanRow(span: NormalizedSpan, tree: SpanTree): SpanRow {
  return {
    tenant_id: span.tenantId,
    project_id: span.projectId,
    trace_id: span.traceId,
    otel_trace_id: span.otelTraceId,
    span_id: span.spanId,
    parent_span_id: span.parentSpanId,
    name: span.name,
    kind: span.kind,
    start_time_ns: span.startNs,
    end_time_ns: span.endNs,
    duration_ms: span.durationMs,
    status_code: span.statusCode,
    status_description: span.statusDescription,
    service_name: span.serviceName,
    span_class: span.spanClass,
    model: span.model,
    provider: span.provider,
    input_tokens: span.inputTokens ?? 0,
    output_tokens: span.outputTokens ?? 0,
    cached_input_tokens: span.cachedInputTokens ?? 0,
    agent_name: tree.agentNameOf(span),
    tool_name: span.toolName,
    thread_id: span.threadId,
    attributes: span.attributes,
    events: span.events,
    resource: span.resource,
    scope_name: span.scopeName,
    scope_version: span.scopeVersion,
    timestamp: span.timestamp,
  };
}

// Event rows are written as object literals with every field named, not spread from a shared base
// and the origin: ingest builds them for every span, and spreading costs several times as much.

/**
 * The tool.called row of a tool span. Its agent falls back to `traceAgentName` (the trace's agent,
 * see trace-summary) when no ancestor names one, so tool.called and trace.processed agree on
 * agent_name and can be joined on it (a useful join pair of the analytics query).
 */
export function toolCalledRow(span: NormalizedSpan, tree: SpanTree, origin: Origin, traceAgentName: string): ToolCalledRow {
  return {
    tenant_id: span.tenantId,
    project_id: span.projectId,
    timestamp: span.timestamp,
    actor: origin.actor,
    surface: origin.surface,
    user_id: origin.user_id,
    api_key_id: origin.api_key_id,
    trace_id: span.traceId,
    span_id: span.spanId,
    tool: span.toolName || span.name,
    agent_name: tree.agentNameOf(span) || traceAgentName,
    duration_ms: span.durationMs,
    output_tokens: tree.toolOutputTokens(span),
    error: span.statusCode === 'ERROR' ? 1 : 0,
  };
}

/**
 * The generation.completed row of one model call: keyed by the span holding the call (its outermost
 * span, model-calls.ts), with the usage completed across the call's spans.
 */
export function generationRow(holder: NormalizedSpan, call: CallUsage, origin: Origin): GenerationCompletedRow {
  return {
    tenant_id: holder.tenantId,
    project_id: holder.projectId,
    timestamp: holder.timestamp,
    actor: origin.actor,
    surface: origin.surface,
    user_id: origin.user_id,
    api_key_id: origin.api_key_id,
    trace_id: holder.traceId,
    span_id: holder.spanId,
    model: call.model,
    provider: call.provider,
    duration_ms: call.durationMs,
    input_tokens: call.inputTokens ?? 0,
    output_tokens: call.outputTokens ?? 0,
    cached_input_tokens: call.cachedInputTokens ?? 0,
    cache_write_input_tokens: call.cacheWriteInputTokens ?? 0,
    tps: tokensPerSecond(call.outputTokens, call.durationMs),
    error: call.error ? 1 : 0,
  };
}

/**
 * All rows for the spans of one request. `tree` covers those spans (possibly a partial trace);
 * `fallbackAgentName(span)` is the trace-level agent used when the tree names none. A model call
 * gets its generation.completed row here when the request decides it (model-calls.ts); a call
 * whose outermost span's ancestry is open in this request gets it at settling.
 */
export function deriveSpanEventRows(
  spans: NormalizedSpan[],
  tree: SpanTree,
  origin: Origin,
  fallbackAgentName: (span: NormalizedSpan) => string,
): SpanEventRows {
  const rows: SpanEventRows = { spans: [], generations: [], tools: [], errors: [] };
  const calls = resolveModelCalls(tree, true);
  for (const span of spans) {
    rows.spans.push(spanRow(span, tree));
    const timestamp = span.timestamp;
    const error = span.statusCode === 'ERROR' ? 1 : 0;
    if (span.spanClass === 'generation') {
      const call = calls.holders.get(span);
      if (call !== undefined && !calls.undecided.has(span)) rows.generations.push(generationRow(span, call, origin));
    } else if (span.spanClass === 'tool') {
      rows.tools.push(toolCalledRow(span, tree, origin, fallbackAgentName(span)));
    }
    if (error) {
      rows.errors.push({
        tenant_id: span.tenantId,
        project_id: span.projectId,
        timestamp,
        actor: origin.actor,
        surface: origin.surface,
        user_id: origin.user_id,
        api_key_id: origin.api_key_id,
        trace_id: span.traceId,
        span_id: span.spanId,
        span_name: span.name,
      });
    }
  }
  return rows;
}
