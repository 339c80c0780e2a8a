import { randomBytes } from 'node:crypto';
import { parseRecordedValue } from '../spans/agent-io.js';
import { tokensPerSecond } from '../spans/event-rows.js';
import { compareNs, type NormalizedSpan } from '../spans/normalized-span.js';
import { lookoutSpanId } from '../spans/trace-id.js';
import type { SpanTree } from '../spans/span-tree.js';
import type { TraceRow } from '../spans/trace-summary.js';
import type { IssueExtraction, TraceIssueOccurrence } from '../ingest/trace-hooks.js';
import { ExactInteger, stringifyExact } from './exact-json.js';
import type { StoredTraceCostView } from './trace-store.js';
import { isoFromDateTime64, nsToMs } from '../platform/clickhouse/clickhouse-time.js';
import { contentExpired, type ContentCutoff } from '../spans/content-expiry.js';

/**
 * The two trace-detail forms (default and expand=context), built from a trace's spans and their summary
 * (the same summarizeTrace the settler stores, so detail and stored summary agree). The spans
 * part is built on the compute pool (trace-detail-build.ts) and spliced into the envelope here:
 *
 * - the default payload: every field of the Trace table; spans with `id` and nanosecond times as
 *   strings;
 * - the context bundle (expand=context): {id, project_id, project_name, otel_trace_id,
 *   service_name, created_at, trace, stats, spans, spans_total, issue_occurrences}; spans without
 *   `id`, nanosecond times as exact JSON numbers (ExactInteger), a page of spans_limit from
 *   spans_offset.
 *
 * Span `events` (a shape we chose): [{name, time_ns, timestamp, attributes}].
 *
 * Content past its project's retention (src/spans/content-expiry.ts) is absent from both forms, never
 * an error: a span's attributes `{}` and events `[]`, the trace's agent input and output null, its
 * input display '' and its tool calls' messages '', with `content_expired: true` on the trace.
 */

export interface SpanViewOptions {
  includeAttributes: boolean;
  includeEvents: boolean;
  /** When content expires per project (retention); absent: nothing has. */
  contentCutoff?: ContentCutoff | null;
}

export interface TraceContext {
  projectName: string;
  threadTraceCount: number;
  issueExtraction: IssueExtraction;
  occurrences: TraceIssueOccurrence[];
  cost: StoredTraceCostView;
  /** When content expires per project (retention). */
  contentCutoff: ContentCutoff | null;
}

/** Until the issues module reports, a trace's extraction is pending. */
export const PENDING_EXTRACTION: IssueExtraction = {
  status: 'pending',
  reason: 'awaiting_processing',
  issue_count: 0,
  occurrence_count: 0,
  completed_at: null,
};

function nsToIso(ns: string): string {
  return new Date(ns.length > 6 ? Number(ns.slice(0, -6)) : 0).toISOString();
}

/** Spans by start time; a parent before a child that started in the same nanosecond; then by span id. */
export function orderSpans(spans: NormalizedSpan[], tree: SpanTree): NormalizedSpan[] {
  return [...spans].sort(
    (a, b) => compareNs(a.startNs, b.startNs) || tree.depth(a) - tree.depth(b) || (a.spanId < b.spanId ? -1 : a.spanId > b.spanId ? 1 : 0),
  );
}

function spanView(span: NormalizedSpan, options: SpanViewOptions, exactNumbers: boolean): Record<string, unknown> {
  const ns = (value: string) => (exactNumbers ? new ExactInteger(value) : value);
  const view: Record<string, unknown> = {
    otel_span_id: span.spanId,
    parent_otel_span_id: span.parentSpanId === '' ? null : span.parentSpanId,
    name: span.name,
    kind: span.kind,
    start_time_ns: ns(span.startNs),
    end_time_ns: ns(span.endNs),
    duration_ms: span.durationMs,
    status_code: span.statusCode,
    status_description: span.statusDescription,
    span_class: span.spanClass,
    input_tokens: span.inputTokens ?? 0,
    output_tokens: span.outputTokens ?? 0,
    model_name: span.model,
    tps: span.spanClass === 'generation' ? tokensPerSecond(span.outputTokens, span.durationMs) : null,
  };
  const expired = contentExpired(options.contentCutoff, span.projectId, nsToMs(span.startNs));
  if (options.includeAttributes) view.attributes = expired ? {} : span.attributes;
  if (options.includeEvents) {
    view.events = expired ? [] : span.events.map((e) => ({ name: e.name, time_ns: ns(e.timeNs), timestamp: nsToIso(e.timeNs), attributes: e.attributes }));
  }
  return view;
}

/** The trace-level fields shared by both forms (the Trace table minus spans, stats and id/project). */
function traceFields(t: TraceRow, context: TraceContext) {
  const expired = contentExpired(context.contentCutoff, t.project_id, Date.parse(isoFromDateTime64(t.timestamp)));
  // The column TTL empties tool_calls to '' (clickhouse/015_retention.sql).
  const toolCalls = (t.tool_calls === '' ? [] : JSON.parse(t.tool_calls)) as Record<string, unknown>[];
  return {
    otel_trace_id: t.otel_trace_id,
    service_name: t.service_name,
    agent_name: t.agent_name,
    thread_id: t.thread_id,
    thread_trace_count: context.threadTraceCount,
    agent_input_display: expired ? '' : t.agent_input_display,
    agent_input: expired ? null : parseRecordedValue(t.agent_input),
    agent_output: expired ? null : parseRecordedValue(t.agent_output),
    content_expired: expired,
    release: t.release,
    tool_calls: expired ? toolCalls.map((c) => ({ ...c, user_facing_message: '', user_facing_message_truncated: false, user_facing_messages_omitted: 0 })) : toolCalls,
    interaction: JSON.parse(t.interaction) as Record<string, unknown>,
    has_error: t.has_error === 1,
    total_duration_ms: t.total_duration_ms,
    timestamp: isoFromDateTime64(t.timestamp),
    // The estimate processing stored, as the trace list shows it, with how it was decided.
    estimated_cost_usd: context.cost.estimated_cost_usd,
    estimated_cost_basis: context.cost.estimated_cost_basis,
    cost_unpriced_models: context.cost.cost_unpriced_models,
  };
}

export function traceStats(t: TraceRow) {
  return {
    span_count: t.span_count,
    total_tokens: t.total_tokens,
    total_duration_ms: t.total_duration_ms,
    error_count: t.error_count,
    tool_calls: JSON.parse(t.stats_tool_calls) as unknown[],
    models_used: t.models_used,
  };
}

/** A page of the default form's spans (spans with `id`, nanosecond times as strings), as JSON text. */
export function defaultSpansJson(spans: NormalizedSpan[], traceId: string, options: SpanViewOptions): string {
  return JSON.stringify(spans.map((s) => ({ id: lookoutSpanId(traceId, s.spanId), ...spanView(s, options, false) })));
}

/** A page of the context bundle's spans (no `id`, nanosecond times as exact numbers), as JSON text. */
export function contextSpansJson(spans: NormalizedSpan[], options: SpanViewOptions): string {
  return stringifyExact(spans.map((s) => spanView(s, options, true)));
}

/** Paging of the default form, present only when the trace has more spans than one page or the caller paged. */
export interface SpanPage {
  spans_total: number;
  next_span_cursor: string | null;
}

/**
 * `spansJson` (built on the compute pool) spliced into an envelope as is: the envelope carries a
 * random token in its place, replaced after stringify, so the spans are never parsed again here.
 */
function withSplicedSpans(spansJson: string, envelope: (token: string) => object): string {
  const token = `@spans-${randomBytes(12).toString('hex')}`;
  return JSON.stringify(envelope(token)).replace(`"${token}"`, () => spansJson);
}

/** The default payload as JSON text, its page of spans spliced in (withSplicedSpans). */
export function defaultPayloadJson(t: TraceRow, spansJson: string, context: TraceContext, page: SpanPage | null): string {
  return withSplicedSpans(spansJson, (token) => ({
    id: t.trace_id,
    project_id: t.project_id,
    project_name: context.projectName,
    ...traceFields(t, context),
    spans: token,
    ...(page ?? {}),
    stats: traceStats(t),
    issue_extraction: context.issueExtraction,
  }));
}

/** The context bundle (expand=context) as JSON text, its page of spans spliced in (withSplicedSpans). */
export function contextBundleJson(
  t: TraceRow,
  spansJson: string,
  context: TraceContext,
  page: { total: number; limit: number; offset: number },
): string {
  return withSplicedSpans(spansJson, (token) => ({
    id: t.trace_id,
    project_id: t.project_id,
    project_name: context.projectName,
    otel_trace_id: t.otel_trace_id,
    service_name: t.service_name,
    created_at: isoFromDateTime64(t.timestamp),
    trace: { id: t.trace_id, project_id: t.project_id, ...traceFields(t, context), issue_extraction: context.issueExtraction },
    stats: traceStats(t),
    spans: token,
    spans_total: page.total,
    spans_limit: page.limit,
    spans_offset: page.offset,
    issue_occurrences: context.occurrences,
  }));
}
