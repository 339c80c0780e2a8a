import type { GenerationCompletedRow, SpanErroredRow, SpanEventRows, SpanRow, ToolCalledRow } from '../../spans/event-rows.js';
import type { TraceProcessedRow, TraceRow } from '../../spans/trace-summary.js';
import type { TraceContentRow } from '../../spans/trace-content.js';
import type { TracePreviewRow } from '../../spans/trace-preview.js';
import { parsedLines, type StoredSpanRow } from '../../spans/stored-spans.js';
import { storedSpanId } from '../../platform/clickhouse/sql/event-ids.js';

/**
 * Rows serialized for the insert where they are built (the compute pool), as the insert body
 * itself: one JSONCompactEachRow byte buffer per table, with the end offset of every line. The
 * event loop never runs JSON.stringify over a flush (a group commit of 50,000 spans encoded on the
 * main thread was a stall of several hundred milliseconds), and it no longer receives thousands of
 * strings per request either: a byte buffer crosses from the worker as one copy, the writer hands
 * it to the engine as it is (or the slices of the lines it keeps), and no string of the body is
 * ever built on the main thread. This file is the one place that knows the row format.
 *
 * JSONCompactEachRow, not JSONEachRow: a line is the JSON array of the row's values in the order of
 * its table's INSERT_COLUMNS (the insert names them), so the field names are neither written here
 * nor matched by the engine per row. Bodies are
 * smaller and cheaper for the engine to parse, and the settler decodes held lines cheaply;
 * TabSeparated would cost more to decode back into spans. The values are the same JSON values as before, parsed by
 * the same JSON readers, so what ClickHouse stores is unchanged (test/integration/ingest/insert-format.test.ts).
 *
 * Each line travels with the key of its span (tenant, project, trace, span), which is all the
 * writer needs to skip duplicates and apply the per-trace span limit.
 */

/** The format of every body built here. */
export const INSERT_FORMAT = 'JSONCompactEachRow';

export interface EncodedRows {
  /** spanKey of the span each line belongs to. */
  keys: string[];
  /** The JSONCompactEachRow body: one JSON array per line (INSERT_COLUMNS order), each ending in '\n'. */
  body: Uint8Array;
  /** ends[i]: the byte offset just past line i's newline (line i starts at ends[i - 1], or 0). */
  ends: Uint32Array;
}

/** Lines of a body that no span key names (a request's trace previews: line i is its trace i's). */
export type EncodedLines = Pick<EncodedRows, 'body' | 'ends'>;

export interface EncodedSpanEventRows {
  spans: EncodedRows;
  generations: EncodedRows;
  tools: EncodedRows;
  errors: EncodedRows;
}

/** Every key of a row type, once: a column list that forgets or repeats one does not compile. */
type AllKeys<Row, List extends readonly (keyof Row)[]> = Exclude<keyof Row, List[number]> extends never ? List : never;
export const columns = <Row>() => <const List extends readonly (keyof Row)[]>(list: AllKeys<Row, List>) => list;

/**
 * Each table's columns in the order its lines list their values (the line functions below write
 * them in this order: test/unit/ingest/encoded-rows.test.ts holds the two together). Columns left
 * out (ingested_at, inserted_at) take their defaults.
 */
export const SPAN_COLUMNS = columns<SpanRow>()([
  'tenant_id', 'project_id', 'trace_id', 'otel_trace_id', 'span_id', 'parent_span_id', 'name', 'kind', 'start_time_ns', 'end_time_ns',
  'duration_ms', 'status_code', 'status_description', 'service_name', 'span_class', 'model', 'provider', 'input_tokens', 'output_tokens',
  'cached_input_tokens', 'agent_name', 'tool_name', 'thread_id', 'attributes', 'events', 'resource', 'scope_name', 'scope_version', 'timestamp',
]);
export const GENERATION_COLUMNS = columns<GenerationCompletedRow>()([
  'tenant_id', 'project_id', 'timestamp', 'actor', 'surface', 'user_id', 'api_key_id', 'trace_id', 'span_id', 'model', 'provider',
  'duration_ms', 'input_tokens', 'output_tokens', 'cached_input_tokens', 'cache_write_input_tokens', 'tps', 'error',
]);
export const TOOL_COLUMNS = columns<ToolCalledRow>()([
  'tenant_id', 'project_id', 'timestamp', 'actor', 'surface', 'user_id', 'api_key_id', 'trace_id', 'span_id', 'tool', 'agent_name',
  'duration_ms', 'output_tokens', 'error',
]);
export const ERROR_COLUMNS = columns<SpanErroredRow>()([
  'tenant_id', 'project_id', 'timestamp', 'actor', 'surface', 'user_id', 'api_key_id', 'trace_id', 'span_id', 'span_name',
]);

/** The per-span tables the ingest writer inserts into, with the columns their bodies hold. */
export const INSERT_COLUMNS = {
  spans: SPAN_COLUMNS,
  event_generation_completed: GENERATION_COLUMNS,
  event_tool_called: TOOL_COLUMNS,
  event_span_errored: ERROR_COLUMNS,
} as const;
export type InsertTable = keyof typeof INSERT_COLUMNS;

// Span ids go into the per-span event tables as stored since migration 009 (storedSpanId); the rows
// keep the hex text (keys, hooks) and only their serialized values carry the number. Ingestion only
// accepts span ids of 16 lower-case hex characters (span-validation.ts), so the value always fits.

// The values of a row in its columns' order, as array literals: ~35 % cheaper to stringify than
// the row object, and cheaper than a loop over the column list.
export const spanValues = (r: SpanRow): unknown[] => [
  r.tenant_id, r.project_id, r.trace_id, r.otel_trace_id, r.span_id, r.parent_span_id, r.name, r.kind, r.start_time_ns, r.end_time_ns,
  r.duration_ms, r.status_code, r.status_description, r.service_name, r.span_class, r.model, r.provider, r.input_tokens, r.output_tokens,
  r.cached_input_tokens, r.agent_name, r.tool_name, r.thread_id, r.attributes, r.events, r.resource, r.scope_name, r.scope_version, r.timestamp,
];
export const generationValues = (r: GenerationCompletedRow): unknown[] => [
  r.tenant_id, r.project_id, r.timestamp, r.actor, r.surface, r.user_id, r.api_key_id, r.trace_id, storedSpanId(r.span_id), r.model, r.provider,
  r.duration_ms, r.input_tokens, r.output_tokens, r.cached_input_tokens, r.cache_write_input_tokens, r.tps, r.error,
];
export const toolValues = (r: ToolCalledRow): unknown[] => [
  r.tenant_id, r.project_id, r.timestamp, r.actor, r.surface, r.user_id, r.api_key_id, r.trace_id, storedSpanId(r.span_id), r.tool, r.agent_name,
  r.duration_ms, r.output_tokens, r.error,
];
export const errorValues = (r: SpanErroredRow): unknown[] => [
  r.tenant_id, r.project_id, r.timestamp, r.actor, r.surface, r.user_id, r.api_key_id, r.trace_id, storedSpanId(r.span_id), r.span_name,
];

/**
 * The settler's tables (settle-summaries.ts builds their bodies with encodeBody on the compute
 * pool): its rewrites of tool.called and generation.completed use the ingest columns above.
 */
export const PROCESSED_COLUMNS = columns<TraceProcessedRow>()([
  'tenant_id', 'project_id', 'timestamp', 'actor', 'surface', 'user_id', 'api_key_id', 'trace_id', 'agent_name', 'root_status_code',
  'has_root', 'root_duration_ms', 'error_count', 'failing_tool_calls', 'input_tokens', 'output_tokens', 'total_tokens',
  'estimated_cost_usd', 'estimated_cost_basis', 'cost_priced_tokens', 'cost_unpriced_models', 'cost_priced_at', 'cost_model_costs',
  'models', 'generations', 'generations_with_provider', 'tool_calls', 'processed_at',
]);
export const TRACE_COLUMNS = columns<TraceRow>()([
  'tenant_id', 'project_id', 'trace_id', 'otel_trace_id', 'timestamp', 'service_name', 'agent_name', 'thread_id', 'release',
  'agent_input_display', 'agent_input', 'agent_output', 'tool_calls', 'interaction', 'has_error', 'total_duration_ms', 'span_count',
  'total_tokens', 'error_count', 'models_used', 'stats_tool_calls', 'estimated_cost_usd', 'processed_at',
]);
export const CONTENT_COLUMNS = columns<TraceContentRow>()(['tenant_id', 'project_id', 'trace_id', 'field', 'timestamp', 'text', 'text_norm', 'processed_at']);

/** Every table the settler writes, with the columns of its body. */
export const SETTLE_COLUMNS = {
  event_tool_called: TOOL_COLUMNS,
  event_generation_completed: GENERATION_COLUMNS,
  event_trace_processed: PROCESSED_COLUMNS,
  traces: TRACE_COLUMNS,
  trace_content: CONTENT_COLUMNS,
} as const;
export type SettleTable = keyof typeof SETTLE_COLUMNS;

export const processedValues = (r: TraceProcessedRow): unknown[] => [
  r.tenant_id, r.project_id, r.timestamp, r.actor, r.surface, r.user_id, r.api_key_id, r.trace_id, r.agent_name, r.root_status_code,
  r.has_root, r.root_duration_ms, r.error_count, r.failing_tool_calls, r.input_tokens, r.output_tokens, r.total_tokens,
  r.estimated_cost_usd, r.estimated_cost_basis, r.cost_priced_tokens, r.cost_unpriced_models, r.cost_priced_at, r.cost_model_costs,
  r.models, r.generations, r.generations_with_provider, r.tool_calls, r.processed_at,
];
export const traceValues = (r: TraceRow): unknown[] => [
  r.tenant_id, r.project_id, r.trace_id, r.otel_trace_id, r.timestamp, r.service_name, r.agent_name, r.thread_id, r.release,
  r.agent_input_display, r.agent_input, r.agent_output, r.tool_calls, r.interaction, r.has_error, r.total_duration_ms, r.span_count,
  r.total_tokens, r.error_count, r.models_used, r.stats_tool_calls, r.estimated_cost_usd, r.processed_at,
];
export const contentValues = (r: TraceContentRow): unknown[] => [r.tenant_id, r.project_id, r.trace_id, r.field, r.timestamp, r.text, r.text_norm, r.processed_at];

/**
 * A trace preview's columns (trace-preview.ts): the ingest writer inserts a request's preview lines
 * into `traces` with this list, the other columns of a summary taking their defaults.
 */
export const PREVIEW_COLUMNS = columns<TracePreviewRow>()([
  'tenant_id', 'project_id', 'trace_id', 'otel_trace_id', 'timestamp', 'service_name', 'agent_name', 'thread_id', 'release', 'tool_calls',
  'stats_tool_calls', 'has_error', 'total_duration_ms', 'span_count', 'error_count', 'preview', 'processed_at',
]);
export const previewValues = (r: TracePreviewRow): unknown[] => [
  r.tenant_id, r.project_id, r.trace_id, r.otel_trace_id, r.timestamp, r.service_name, r.agent_name, r.thread_id, r.release, r.tool_calls,
  r.stats_tool_calls, r.has_error, r.total_duration_ms, r.span_count, r.error_count, r.preview, r.processed_at,
];

const GENERATION_SPAN = GENERATION_COLUMNS.indexOf('span_id');
const GENERATION_ORIGIN = (['actor', 'surface', 'user_id', 'api_key_id'] as const).map((c) => GENERATION_COLUMNS.indexOf(c));
const [G_ACTOR, G_SURFACE, G_USER, G_KEY] = GENERATION_ORIGIN;

/**
 * Of the generation.completed rows a whole trace decides (`rows`), those the lines this process
 * wrote at ingest (`written`: its JSONCompactEachRow insert lines for the trace) do not already hold
 * as they are: a row written with the same values is left alone; one written with other values is
 * rewritten, keeping who recorded the call (only the derived fields change, as for tool.called);
 * one never written is written.
 */
export function generationRowsToWrite(rows: GenerationCompletedRow[], written: Uint8Array): GenerationCompletedRow[] {
  if (rows.length === 0 || written.byteLength === 0) return rows;
  const bySpan = new Map<unknown, unknown[]>();
  for (const values of parsedLines(written, (v: unknown[]) => v)) bySpan.set(values[GENERATION_SPAN], values);
  const out: GenerationCompletedRow[] = [];
  for (const row of rows) {
    const values = generationValues(row);
    const before = bySpan.get(values[GENERATION_SPAN]);
    if (!before) {
      out.push(row);
      continue;
    }
    let same = true;
    for (let i = 0; i < values.length && same; i++) if (values[i] !== before[i] && !GENERATION_ORIGIN.includes(i)) same = false;
    if (!same) out.push({ ...row, actor: before[G_ACTOR] as string, surface: before[G_SURFACE] as string, user_id: before[G_USER] as string, api_key_id: before[G_KEY] as string });
  }
  return out;
}

type Keyed = { tenant_id: string; project_id: string; trace_id: string; span_id: string };

export const traceKeyOf = (r: { tenant_id: string; project_id: string; trace_id: string }) => `${r.tenant_id}\u0000${r.project_id}\u0000${r.trace_id}`;
/** A span's key from its trace's key (traceKeyOf / traceKeyString: the same text). */
export const spanKeyIn = (traceKey: string, spanId: string) => `${traceKey}\u0000${spanId}`;
export const spanKey = (r: Keyed) => spanKeyIn(traceKeyOf(r), r.span_id);
/** The trace part of a spanKey. */
export const traceKeyOfSpanKey = (key: string) => key.slice(0, key.lastIndexOf('\u0000'));
/** The span id part of a spanKey. */
export const spanIdOfSpanKey = (key: string) => key.slice(key.lastIndexOf('\u0000') + 1);

const NEWLINE = 0x0a;

/** A lone-surrogate escape as JSON.stringify writes it, or an escaped backslash (consumed in pairs, so `\\ud800` text is left alone). */
const LONE_SURROGATE_ESCAPE = /\\(?:\\|u(d[89a-f][0-9a-f]{2}))/g;

/**
 * One JSON line of a row: the array of its values (JSONCompactEachRow: the per-span tables and the
 * settler's) or an object (JSONEachRow). A string holding a lone surrogate (an OTLP/JSON
 * `\ud800` escape, or one inside an attribute's JSON text) is written by JSON.stringify as that escape, which
 * ClickHouse refuses ("missing second part of surrogate pair"): the whole insert would fail, every
 * request of the flush with it, and the exporter would retry it forever. It becomes U+FFFD, as
 * any UTF-8 encoder writes it. JSON.stringify escapes only lone surrogates this way (pairs are
 * written as they are), so a line without `\ud` needs no second look.
 */
export function jsonLine(row: unknown): string {
  const line = JSON.stringify(row);
  return line.includes('\\ud') ? line.replace(LONE_SURROGATE_ESCAPE, (escape, surrogate) => (surrogate ? '\ufffd' : escape)) : line;
}

/**
 * The buffer lines are written into, kept by this thread between calls: the body leaves as an exact
 * copy anyway (below), so a fresh megabyte-sized scratch per table per request was only garbage
 * (external memory, which also hastens V8's collections). One that grew for an unusually large
 * request is let go afterwards rather than held by the thread for good.
 */
let scratch = Buffer.allocUnsafe(0);
const KEEP_SCRATCH_BYTES = 4 * 1024 * 1024;

/**
 * Each line is written straight into one growing byte buffer, which gives its end offset as it
 * goes: no joined string of the whole body, no second pass looking for line breaks (JSON escapes
 * newlines inside values, so a line is exactly its JSON text plus '\n').
 */
function encode<Row extends Keyed>(rows: Row[], values: (row: Row) => unknown[]): EncodedRows {
  const keys = new Array<string>(rows.length);
  const ends = new Uint32Array(rows.length);
  for (let i = 0; i < rows.length; i++) keys[i] = spanKey(rows[i]);
  return { keys, body: writeLines(rows, values, ends), ends };
}

/**
 * A JSONCompactEachRow body of `rows` (each line the array `values` gives, in its table's column
 * order), written as encode() writes: the settler's rows leave the compute pool as one byte buffer
 * per table, not as a string per row to join and encode again on the event loop.
 */
export function encodeBody<Row>(rows: readonly Row[], values: (row: Row) => unknown[]): Uint8Array {
  return rows.length === 0 ? new Uint8Array(0) : writeLines(rows, values, null);
}

/** Writes the lines into the thread's scratch (`ends[i]`: the offset past line i) and returns an exact copy of them. */
function writeLines<Row>(rows: readonly Row[], values: (row: Row) => unknown[], ends: Uint32Array | null): Uint8Array {
  let body = scratch.byteLength >= rows.length * 1024 ? scratch : Buffer.allocUnsafe(rows.length * 1024);
  let at = 0;
  for (let i = 0; i < rows.length; i++) {
    const line = jsonLine(values(rows[i]));
    // At most 3 bytes per UTF-16 unit (a surrogate pair is 4 bytes for 2 units), plus the newline.
    const most = line.length * 3 + 1;
    if (at + most > body.byteLength) {
      const grown = Buffer.allocUnsafe(Math.max(body.byteLength * 2, at + most));
      body.copy(grown, 0, 0, at);
      body = grown;
    }
    at += body.write(line, at, 'utf8');
    body[at++] = NEWLINE;
    if (ends) ends[i] = at;
  }
  // An exact copy in a plain Uint8Array that owns its ArrayBuffer: a worker's answer clones the
  // whole ArrayBuffer behind a view, so the unused tail must not travel (nor stay alive in the
  // settle cache's line views); and it is what an answer arrives as, so inline and pooled runs agree.
  const owned = new Uint8Array(body.subarray(0, at));
  scratch = body.byteLength <= KEEP_SCRATCH_BYTES ? body : scratch;
  return owned;
}

/** The lines of `rows` with the end of each (encodeBody's body, for a writer that takes some lines of it). */
export function encodeLines<Row>(rows: readonly Row[], values: (row: Row) => unknown[]): EncodedLines {
  const ends = new Uint32Array(rows.length);
  return { body: rows.length === 0 ? new Uint8Array(0) : writeLines(rows, values, ends), ends };
}

export function encodeSpanEventRows(rows: SpanEventRows): EncodedSpanEventRows {
  return {
    spans: encode(rows.spans, spanValues),
    generations: encode(rows.generations, generationValues),
    tools: encode(rows.tools, toolValues),
    errors: encode(rows.errors, errorValues),
  };
}

const empty = (): EncodedRows => ({ keys: [], body: new Uint8Array(0), ends: new Uint32Array(0) });

export const emptyEncodedRows = (): EncodedSpanEventRows => ({ spans: empty(), generations: empty(), tools: empty(), errors: empty() });

/** Line i of an encoded body (a view, newline included). */
export function lineOf(rows: EncodedLines, i: number): Uint8Array {
  return rows.body.subarray(i === 0 ? 0 : rows.ends[i - 1], rows.ends[i]);
}

/**
 * The parts of the body whose lines pass `keep`, as few views as possible: the whole body when
 * every line is kept (the common case: nothing to copy), else one view per run of kept lines.
 */
export function keptParts(rows: EncodedRows, keep: (i: number) => boolean): Uint8Array[] {
  const parts: Uint8Array[] = [];
  let runStart = -1;
  for (let i = 0; i <= rows.keys.length; i++) {
    const kept = i < rows.keys.length && keep(i);
    if (kept && runStart === -1) runStart = i;
    if (!kept && runStart !== -1) {
      parts.push(rows.body.subarray(runStart === 0 ? 0 : rows.ends[runStart - 1], rows.ends[i - 1]));
      runStart = -1;
    }
  }
  return parts;
}

const at = (column: (typeof SPAN_COLUMNS)[number]) => SPAN_COLUMNS.indexOf(column);
const TENANT = at('tenant_id'), PROJECT = at('project_id'), TRACE = at('trace_id'), OTEL_TRACE = at('otel_trace_id'), SPAN = at('span_id');
const PARENT = at('parent_span_id'), NAME = at('name'), KIND = at('kind'), START = at('start_time_ns'), END = at('end_time_ns');
const DURATION = at('duration_ms'), STATUS = at('status_code'), STATUS_DESCRIPTION = at('status_description'), SERVICE = at('service_name');
const SCOPE = at('scope_name'), SCOPE_VERSION = at('scope_version'), AGENT = at('agent_name'), ATTRIBUTES = at('attributes'), EVENTS = at('events');
const RESOURCE = at('resource');

/**
 * The `spans` lines this process encoded (held by the settle cache, handed to the settle task as
 * one buffer) as the rows a read-back of STORED_SPAN_COLUMNS gives, except that the JSON columns
 * are already values: the same spanFromStoredRow serves both.
 */
export function storedRowsFromSpanLines(bytes: Uint8Array): StoredSpanRow[] {
  return parsedLines(bytes, (v: never[]): StoredSpanRow => ({
    tenant_id: v[TENANT], project_id: v[PROJECT], trace_id: v[TRACE], otel_trace_id: v[OTEL_TRACE], span_id: v[SPAN], parent_span_id: v[PARENT],
    name: v[NAME], kind: v[KIND], start_time_ns: v[START], end_time_ns: v[END], duration_ms: v[DURATION], status_code: v[STATUS],
    status_description: v[STATUS_DESCRIPTION], service_name: v[SERVICE], attributes: v[ATTRIBUTES], events: v[EVENTS], resource: v[RESOURCE],
    scope_name: v[SCOPE], scope_version: v[SCOPE_VERSION], agent_name: v[AGENT],
  }));
}
