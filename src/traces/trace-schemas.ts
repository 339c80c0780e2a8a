/**
 * The traces API's requests and answers, declared once as TypeBox schemas: the OpenAPI components
 * (registered by trace-routes.ts; the query schemas are what ajv validates), and the types
 * (`Static`) of the two detail forms, the list and their parts that the dashboard imports.
 * docs/traces.md describes the shapes. This file imports nothing of the server but shape files, so
 * the dashboard's type check can read it.
 */
import { Type, type Static } from 'typebox';
import { FRESHNESS_PROPERTIES } from '../ingest/freshness-shapes.js';
import { IssueExtraction, TraceIssueOccurrence } from '../ingest/trace-hook-shapes.js';

export type { TraceIssueOccurrence };
import { anyObject, dateTime, nullable, stringEnum } from '../platform/http/shape-kit.js';

export const TraceDetailQuery = Type.Object(
  {
    expand: Type.Optional(stringEnum(['context'])),
    project_id: Type.Optional(Type.String({ minLength: 1 })),
    spans_limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500 })),
    spans_offset: Type.Optional(Type.Integer({ minimum: 0 })),
    span_limit: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 10000,
        description: 'Default form only: spans per page (default 2000). A trace with more spans answers one page with spans_total and next_span_cursor.',
      }),
    ),
    span_cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Default form only: next_span_cursor of the previous page.' })),
    include_attributes: Type.Optional(Type.Boolean()),
    include_events: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export type TraceDetailQuery = Static<typeof TraceDetailQuery>;

/** The largest duration (ms) or cost (USD) bound the list takes: far above any real trace, and finite. */
const LIST_BOUND_MAX = 1e12;

export const TraceListQuery = Type.Object(
  {
    agent_name: Type.Optional(Type.String()),
    has_error: Type.Optional(Type.Boolean()),
    thread_id: Type.Optional(Type.String()),
    start: Type.Optional(Type.String({ description: 'ISO 8601, inclusive' })),
    end: Type.Optional(Type.String({ description: 'ISO 8601, exclusive' })),
    model: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Only traces that called this model (one of models_used, exact).' })),
    tool: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Only traces that called this tool (the name of one of their tool calls, exact).' })),
    release: Type.Optional(Type.String({ maxLength: 200, description: 'Only traces of this release (exact; empty: traces without one).' })),
    min_duration_ms: Type.Optional(Type.Number({ minimum: 0, maximum: LIST_BOUND_MAX, description: 'Only traces whose total_duration_ms is at least this (inclusive).' })),
    max_duration_ms: Type.Optional(Type.Number({ minimum: 0, maximum: LIST_BOUND_MAX, description: 'Only traces whose total_duration_ms is at most this (inclusive).' })),
    min_cost_usd: Type.Optional(
      Type.Number({ minimum: 0, maximum: LIST_BOUND_MAX, description: 'Only traces whose estimated_cost_usd is at least this (inclusive); traces without a cost never match a cost bound.' }),
    ),
    max_cost_usd: Type.Optional(
      Type.Number({ minimum: 0, maximum: LIST_BOUND_MAX, description: 'Only traces whose estimated_cost_usd is at most this (inclusive); traces without a cost never match a cost bound.' }),
    ),
    include_total: Type.Optional(Type.Boolean({ description: 'Also answer `total`: how many traces match the filters (every page, not only this one).' })),
    cursor: Type.Optional(Type.String({ description: 'next_cursor of the previous page' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200 })),
    include_unsettled: Type.Optional(
      Type.Boolean({
        description:
          'Also list traces whose spans are stored but not settled yet (listed within about a second of their first spans; `settled: false`, figures partial until they settle). Default false: settled traces only.',
      }),
    ),
    q: Type.Optional(
      Type.String({
        maxLength: 1000,
        description:
          'Search the traces\' content (docs/search.md): words are ANDed, "a phrase" in quotes, -word excludes, ' +
          'field:word looks in one field (input, output, tool, error, name, attribute). Case-insensitive; a word is found inside longer words too; at least 2 characters per word.',
      }),
    ),
  },
  { additionalProperties: false },
);
/** The trace list's query parameters as TraceListQuery validates them (REST and the MCP search tool). */
export type TraceListQuery = Static<typeof TraceListQuery>;

/** GET /traces/agent-names: the query string and the answer. */
export const AgentNamesQuery = Type.Object({ project_id: Type.Optional(Type.String({ description: 'Only this project\'s agents.' })) }, { additionalProperties: false });
export type AgentNamesQuery = Static<typeof AgentNamesQuery>;
export const AgentNames = Type.Object({ agent_names: Type.Array(Type.String()) });

/** A nanosecond time: a string in the default form, an exact JSON integer in the context bundle. */
const nanoseconds = (description?: string) => Type.Unsafe<string | number>({ type: ['string', 'integer'], ...(description ? { description } : {}) });

/** Span `events` (a shape we chose): [{name, time_ns, timestamp, attributes}]. */
export const SpanEvent = Type.Object({ name: Type.Optional(Type.String()), time_ns: Type.Optional(nanoseconds()), timestamp: Type.Optional(Type.String()), attributes: Type.Optional(anyObject()) });
export type SpanEvent = Static<typeof SpanEvent>;

export const Span = Type.Object({
  id: Type.Optional(Type.String({ description: 'absent in the context bundle' })),
  otel_span_id: Type.String(),
  parent_otel_span_id: nullable(Type.String()),
  name: Type.String(),
  kind: stringEnum(['unspecified', 'internal', 'server', 'client', 'producer', 'consumer']),
  start_time_ns: nanoseconds('string in the default form, exact integer in the context bundle'),
  end_time_ns: nanoseconds(),
  duration_ms: Type.Number(),
  status_code: stringEnum(['UNSET', 'OK', 'ERROR']),
  status_description: Type.String(),
  span_class: stringEnum(['generation', 'tool', 'agent', 'other']),
  input_tokens: Type.Number(),
  output_tokens: Type.Number(),
  model_name: Type.String(),
  tps: nullable(Type.Number()),
  attributes: Type.Optional(anyObject({ description: 'dropped with include_attributes=false' })),
  events: Type.Optional(Type.Array(SpanEvent, { description: 'dropped with include_events=false' })),
});
export type Span = Static<typeof Span>;

/** A tool call of the trace; the user-facing message fields are set for tools that talk to the user. */
export const TraceToolCall = Type.Object({
  span_id: Type.String(),
  name: Type.String(),
  duration_ms: Type.Number(),
  is_error: Type.Boolean(),
  user_facing_message: Type.Optional(Type.String()),
  user_facing_message_truncated: Type.Optional(Type.Boolean()),
  user_facing_messages_omitted: Type.Optional(Type.Integer()),
});
export type TraceToolCall = Static<typeof TraceToolCall>;

export const TraceStats = Type.Object({
  span_count: Type.Number(),
  total_tokens: Type.Number(),
  total_duration_ms: Type.Number(),
  error_count: Type.Number(),
  tool_calls: Type.Array(Type.Object({ name: Type.String(), otel_span_id: Type.String(), status: stringEnum(['ok', 'error']) })),
  models_used: Type.Array(Type.String()),
});
export type TraceStats = Static<typeof TraceStats>;

/** The trace-level fields both forms carry (trace-view.ts traceFields). */
const traceFields = {
  otel_trace_id: Type.String(),
  service_name: Type.String(),
  agent_name: Type.String(),
  thread_id: Type.String(),
  thread_trace_count: Type.Integer(),
  agent_input_display: Type.String(),
  agent_input: Type.Unknown(),
  agent_output: Type.Unknown(),
  content_expired: Type.Boolean({
    description:
      "The trace's raw content is past its project's retention (content_days, docs/data-lifecycle.md): agent_input and agent_output are null, agent_input_display and the tool calls' messages empty, spans' attributes {} and events []",
  }),
  release: Type.String(),
  tool_calls: Type.Array(TraceToolCall),
  interaction: Type.Object({
    has_input: Type.Optional(Type.Boolean()),
    has_output: Type.Optional(Type.Boolean()),
    input_kind: Type.Optional(stringEnum(['none', 'text', 'messages', 'json'])),
    has_user_message_tools: Type.Optional(Type.Boolean()),
  }),
  has_error: Type.Boolean(),
  total_duration_ms: Type.Number(),
  timestamp: dateTime,
  estimated_cost_usd: nullable(
    Type.Number({ description: 'Estimated cost stored when the trace was processed (list prices × observed tokens); null when nothing could be priced' }),
  ),
  estimated_cost_basis: stringEnum(['stored', 'partial', 'unpriced', 'unavailable', 'pending'], {
    description: 'stored: every model priced; partial: some models unpriced (a lower bound); unpriced: none priced; unavailable: no price catalog at processing time; pending: not processed yet',
  }),
  cost_unpriced_models: Type.Array(Type.String()),
};

/** The default form: the trace with (a page of) its spans. */
export const TraceDetail = Type.Object(
  {
    id: Type.String(),
    project_id: Type.String(),
    project_name: Type.String(),
    ...traceFields,
    spans: Type.Array(Span),
    spans_total: Type.Optional(Type.Integer({ description: 'Only when the spans are paged: every span of the trace' })),
    next_span_cursor: Type.Optional(
      nullable(Type.String({ description: 'Only when the spans are paged: pass as span_cursor for the next page; null on the last page' })),
    ),
    stats: TraceStats,
    issue_extraction: IssueExtraction,
  },
  { description: 'Default form: the trace with its spans.' },
);
export type TraceDetail = Static<typeof TraceDetail>;

/** The context bundle (expand=context): the trace's fields under `trace`, a page of spans, its issue occurrences. */
export const TraceContextBundle = Type.Object(
  {
    id: Type.String(),
    project_id: Type.String(),
    project_name: Type.String(),
    otel_trace_id: Type.String(),
    service_name: Type.String(),
    created_at: dateTime,
    trace: Type.Object({ id: Type.String(), project_id: Type.String(), ...traceFields, issue_extraction: IssueExtraction }),
    stats: TraceStats,
    spans: Type.Array(Span),
    spans_total: Type.Integer(),
    spans_limit: Type.Integer(),
    spans_offset: Type.Integer(),
    issue_occurrences: Type.Array(TraceIssueOccurrence),
  },
  { description: 'With expand=context: the context bundle.' },
);
export type TraceContextBundle = Static<typeof TraceContextBundle>;

/** GET /traces/{trace_id} answers one of the two forms. */
export const Trace = Type.Union([TraceDetail, TraceContextBundle], {
  description:
    'Default form: the trace with its spans. With expand=context: {id, project_id, project_name, otel_trace_id, service_name, created_at, trace, stats, spans, spans_total, spans_limit, spans_offset, issue_occurrences}.',
});

/** A row of GET /projects/{project_id}/traces. */
export const TraceListItem = Type.Object({
  id: Type.String(),
  otel_trace_id: Type.String(),
  project_id: Type.String(),
  timestamp: dateTime,
  service_name: Type.String(),
  agent_name: Type.String(),
  thread_id: Type.String(),
  release: Type.String(),
  agent_input_display: Type.String(),
  content_expired: Type.Boolean({ description: "The trace's raw content is past its project's retention: agent_input_display is empty" }),
  has_error: Type.Boolean(),
  total_duration_ms: Type.Number(),
  span_count: Type.Integer(),
  total_tokens: Type.Integer(),
  error_count: Type.Integer(),
  tool_call_count: Type.Integer(),
  models_used: Type.Array(Type.String()),
  estimated_cost_usd: nullable(Type.Number()),
  settled: Type.Boolean({
    description:
      'false while the trace is listed from its first stored spans, before it settles: tokens, cost, input and tool calls are then zero or empty, and the other figures cover only those spans.',
  }),
  match: Type.Optional(
    nullable(
      Type.Object(
        { field: stringEnum(['input', 'output', 'tool', 'error', 'name', 'attribute']), snippet: Type.String() },
        { description: 'Only with q: where the trace matched. snippet is HTML-escaped text with each searched word in <mark>…</mark>.' },
      ),
    ),
  ),
});
export type TraceListItem = Static<typeof TraceListItem>;

export const TraceListPage = Type.Object({
  traces: Type.Array(TraceListItem),
  next_cursor: nullable(Type.String()),
  total: Type.Optional(Type.Integer({ description: 'Only with include_total=true: the traces matching the filters and q, on every page together.' })),
});
export type TraceListPage = Static<typeof TraceListPage>;

/** The list's REST answer: the page with the freshness fields beside (additive, so not required). */
export const TraceList = Type.Object({ ...TraceListPage.properties, ...FRESHNESS_PROPERTIES });
export type TraceList = Static<typeof TraceList>;
