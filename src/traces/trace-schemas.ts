/**
 * OpenAPI schemas of the traces API (registered into the document by trace-routes.ts; the query
 * schemas are also what ajv validates). docs/traces.md describes the shapes.
 */
import { FRESHNESS_PROPERTIES } from '../ingest/freshness.js';

export const traceDetailQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    expand: { type: 'string', enum: ['context'] },
    project_id: { type: 'string', minLength: 1 },
    spans_limit: { type: 'integer', minimum: 1, maximum: 500 },
    spans_offset: { type: 'integer', minimum: 0 },
    span_limit: {
      type: 'integer', minimum: 1, maximum: 10000,
      description: 'Default form only: spans per page (default 2000). A trace with more spans answers one page with spans_total and next_span_cursor.',
    },
    span_cursor: { type: 'string', minLength: 1, maxLength: 200, description: 'Default form only: next_span_cursor of the previous page.' },
    include_attributes: { type: 'boolean' },
    include_events: { type: 'boolean' },
  },
};

/** The trace list's query parameters as traceListQuery validates them (REST and the MCP search tool). */
export interface TraceListParams {
  agent_name?: string;
  has_error?: boolean;
  thread_id?: string;
  start?: string;
  end?: string;
  cursor?: string;
  limit?: number;
  q?: string;
}

export const traceListQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    agent_name: { type: 'string' },
    has_error: { type: 'boolean' },
    thread_id: { type: 'string' },
    start: { type: 'string', description: 'ISO 8601, inclusive' },
    end: { type: 'string', description: 'ISO 8601, exclusive' },
    cursor: { type: 'string', description: 'next_cursor of the previous page' },
    limit: { type: 'integer', minimum: 1, maximum: 200 },
    q: {
      type: 'string',
      maxLength: 1000,
      description:
        'Search the traces\' content (docs/search.md): words are ANDed, "a phrase" in quotes, -word excludes, ' +
        'field:word looks in one field (input, output, tool, error, name, attribute). Case-insensitive; a word is found inside longer words too; at least 2 characters per word.',
    },
  },
};

const span = {
  type: 'object',
  properties: {
    id: { type: 'string', description: 'absent in the context bundle' },
    otel_span_id: { type: 'string' },
    parent_otel_span_id: { type: ['string', 'null'] },
    name: { type: 'string' },
    kind: { type: 'string', enum: ['unspecified', 'internal', 'server', 'client', 'producer', 'consumer'] },
    start_time_ns: { type: ['string', 'integer'], description: 'string in the default form, exact integer in the context bundle' },
    end_time_ns: { type: ['string', 'integer'] },
    duration_ms: { type: 'number' },
    status_code: { type: 'string', enum: ['UNSET', 'OK', 'ERROR'] },
    status_description: { type: 'string' },
    span_class: { type: 'string', enum: ['generation', 'tool', 'agent', 'other'] },
    input_tokens: { type: 'number' },
    output_tokens: { type: 'number' },
    model_name: { type: 'string' },
    tps: { type: ['number', 'null'] },
    attributes: { type: 'object', description: 'dropped with include_attributes=false' },
    events: {
      type: 'array',
      description: 'dropped with include_events=false',
      items: {
        type: 'object',
        properties: { name: { type: 'string' }, time_ns: { type: ['string', 'integer'] }, timestamp: { type: 'string' }, attributes: { type: 'object' } },
      },
    },
  },
};

const toolCall = {
  type: 'object',
  properties: {
    span_id: { type: 'string' },
    name: { type: 'string' },
    duration_ms: { type: 'number' },
    is_error: { type: 'boolean' },
    user_facing_message: { type: 'string' },
    user_facing_message_truncated: { type: 'boolean' },
    user_facing_messages_omitted: { type: 'integer' },
  },
};

const stats = {
  type: 'object',
  properties: {
    span_count: { type: 'number' },
    total_tokens: { type: 'number' },
    total_duration_ms: { type: 'number' },
    error_count: { type: 'number' },
    tool_calls: {
      type: 'array',
      items: { type: 'object', properties: { name: { type: 'string' }, otel_span_id: { type: 'string' }, status: { type: 'string', enum: ['ok', 'error'] } } },
    },
    models_used: { type: 'array', items: { type: 'string' } },
  },
};

export const traceSchema = {
  type: 'object',
  description: 'Default form: the trace with its spans. With expand=context: {id, project_id, project_name, otel_trace_id, service_name, created_at, trace, stats, spans, spans_total, spans_limit, spans_offset, issue_occurrences}.',
  required: ['id', 'project_id', 'project_name', 'spans', 'stats'],
  properties: {
    id: { type: 'string' },
    otel_trace_id: { type: ['string', 'null'] },
    project_id: { type: 'string' },
    project_name: { type: 'string' },
    service_name: { type: ['string', 'null'] },
    agent_name: { type: 'string' },
    thread_id: { type: 'string' },
    thread_trace_count: { type: 'integer' },
    agent_input_display: { type: 'string' },
    agent_input: {},
    agent_output: {},
    release: { type: 'string' },
    tool_calls: { type: 'array', items: toolCall },
    interaction: {
      type: 'object',
      properties: {
        has_input: { type: 'boolean' },
        has_output: { type: 'boolean' },
        input_kind: { type: 'string', enum: ['none', 'text', 'messages', 'json'] },
        has_user_message_tools: { type: 'boolean' },
      },
    },
    has_error: { type: 'boolean' },
    total_duration_ms: { type: 'number' },
    timestamp: { type: 'string', format: 'date-time' },
    estimated_cost_usd: { type: ['number', 'null'], description: 'Estimated cost stored when the trace was processed (list prices × observed tokens); null when nothing could be priced' },
    estimated_cost_basis: {
      type: 'string', enum: ['stored', 'partial', 'unpriced', 'unavailable', 'pending'],
      description: 'stored: every model priced; partial: some models unpriced (a lower bound); unpriced: none priced; unavailable: no price catalog at processing time; pending: not processed yet',
    },
    cost_unpriced_models: { type: 'array', items: { type: 'string' } },
    created_at: { type: ['string', 'null'] },
    spans: { type: 'array', items: span },
    spans_total: { type: 'integer', description: 'Context bundle; in the default form only when the spans are paged' },
    next_span_cursor: {
      type: ['string', 'null'],
      description: 'Default form, only when the spans are paged: pass as span_cursor for the next page; null on the last page',
    },
    stats,
    issue_extraction: {
      type: 'object',
      properties: {
        status: { type: 'string' },
        reason: { type: 'string' },
        issue_count: { type: 'integer' },
        occurrence_count: { type: 'integer' },
        completed_at: { type: ['string', 'null'], format: 'date-time' },
      },
    },
    issue_occurrences: { type: 'array', items: { type: 'object' } },
  },
};

export const traceListSchema = {
  type: 'object',
  required: ['traces', 'next_cursor'],
  properties: {
    traces: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          id: { type: 'string' },
          otel_trace_id: { type: 'string' },
          project_id: { type: 'string' },
          timestamp: { type: 'string', format: 'date-time' },
          service_name: { type: 'string' },
          agent_name: { type: 'string' },
          thread_id: { type: 'string' },
          release: { type: 'string' },
          agent_input_display: { type: 'string' },
          has_error: { type: 'boolean' },
          total_duration_ms: { type: 'number' },
          span_count: { type: 'integer' },
          total_tokens: { type: 'integer' },
          error_count: { type: 'integer' },
          tool_call_count: { type: 'integer' },
          models_used: { type: 'array', items: { type: 'string' } },
          estimated_cost_usd: { type: ['number', 'null'] },
          match: {
            type: ['object', 'null'],
            description: 'Only with q: where the trace matched. snippet is HTML-escaped text with each searched word in <mark>…</mark>.',
            required: ['field', 'snippet'],
            properties: {
              field: { type: 'string', enum: ['input', 'output', 'tool', 'error', 'name', 'attribute'] },
              snippet: { type: 'string' },
            },
          },
        },
      },
    },
    next_cursor: { type: ['string', 'null'] },
    ...FRESHNESS_PROPERTIES,
  },
};
