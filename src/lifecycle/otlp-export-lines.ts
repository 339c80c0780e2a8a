/**
 * Stored spans back into OTLP/JSON (OpenTelemetry protocol specification, "JSON Protobuf
 * Encoding"): one ExportTraceServiceRequest per trace, one trace per line, so the lines replay
 * into Lookout (POST /v1/traces, application/json) or any OTLP receiver. Runs on the compute pool,
 * a batch of rows at a time (trace-export.ts): the rows arrive as JSONEachRow bytes ordered by
 * trace, a trace's rows may continue in the next batch, so the rows of the batch's last trace are
 * handed back to be read again with the next one.
 *
 * What comes back is what the `spans` row keeps: resource attributes, scope name and version, ids
 * in hex, name, kind, times, status, attributes and events (clickhouse/001_spans.sql). Links and
 * trace state are not stored, so they are not exported; neither are log records sent to /v1/logs.
 */
import { computeTask } from '../platform/compute/compute-task.js';
import type { SpanRow } from '../spans/event-rows.js';
import type { AttributeValue, Attributes, DecodedEvent } from '../spans/otlp-types.js';

/** The `spans` columns an export reads (trace-export.ts selects exactly these); the JSON columns as the text ClickHouse returns. */
export type ExportSpanRow = Pick<
  SpanRow,
  'trace_id' | 'otel_trace_id' | 'span_id' | 'parent_span_id' | 'name' | 'kind' | 'start_time_ns' | 'end_time_ns' | 'status_code' | 'status_description' | 'scope_name' | 'scope_version'
> & { attributes: string; events: string; resource: string };

export const EXPORT_SPAN_COLUMNS: readonly (keyof ExportSpanRow)[] = [
  'trace_id', 'otel_trace_id', 'span_id', 'parent_span_id', 'name', 'kind', 'start_time_ns', 'end_time_ns',
  'status_code', 'status_description', 'attributes', 'events', 'resource', 'scope_name', 'scope_version',
];

export interface OtlpBatchInput {
  /** Whole JSONEachRow lines of ExportSpanRow of whole traces, ordered by trace id (then span id, newest copy first). */
  rows: Uint8Array;
  /** The window as epoch nanoseconds (decimal text): a trace is exported when its first span starts inside. */
  startNs: string;
  endNs: string;
}

export interface OtlpBatchOutput {
  /** OTLP/JSON lines of the batch's traces, each ending in a newline. */
  text: string;
  traces: number;
}

const KINDS: Record<string, number> = { unspecified: 0, internal: 1, server: 2, client: 3, producer: 4, consumer: 5 };
const STATUS: Record<string, number> = { UNSET: 0, OK: 1, ERROR: 2 };

type AnyValue = Record<string, unknown>;

/**
 * An attribute value as an OTLP AnyValue. Ingestion keeps int64 as a number when it is a safe
 * integer (else a decimal string, which comes back as a string), doubles as numbers, kvlists as
 * objects and null for the empty value; a whole number comes back as intValue.
 */
export function anyValue(value: AttributeValue): AnyValue {
  if (value === null) return {};
  if (typeof value === 'string') return { stringValue: value };
  if (typeof value === 'boolean') return { boolValue: value };
  if (typeof value === 'number') return Number.isInteger(value) ? { intValue: String(value) } : { doubleValue: value };
  if (Array.isArray(value)) return { arrayValue: { values: value.map(anyValue) } };
  return { kvlistValue: { values: keyValues(value) } };
}

export function keyValues(attributes: Attributes): { key: string; value: AnyValue }[] {
  return Object.entries(attributes).map(([key, value]) => ({ key, value: anyValue(value) }));
}

function parsed<T>(text: string, fallback: T): T {
  if (text === '') return fallback;
  try {
    return (JSON.parse(text) as T) ?? fallback;
  } catch {
    return fallback;
  }
}

function otlpSpan(row: ExportSpanRow): Record<string, unknown> {
  const events = parsed<DecodedEvent[]>(row.events, []);
  const span: Record<string, unknown> = {
    traceId: row.otel_trace_id,
    spanId: row.span_id,
    name: row.name,
    kind: KINDS[row.kind] ?? 0,
    startTimeUnixNano: String(row.start_time_ns),
    endTimeUnixNano: String(row.end_time_ns),
    attributes: keyValues(parsed<Attributes>(row.attributes, {})),
    events: events.map((e) => ({ timeUnixNano: String(e.timeNs), name: e.name, attributes: keyValues(e.attributes ?? {}) })),
    status: row.status_description === '' ? { code: STATUS[row.status_code] ?? 0 } : { code: STATUS[row.status_code] ?? 0, message: row.status_description },
  };
  if (row.parent_span_id !== '') span.parentSpanId = row.parent_span_id;
  return span;
}

/** One trace's spans as an ExportTraceServiceRequest: spans grouped by resource, then by scope, in their order. */
export function traceRequest(rows: readonly ExportSpanRow[]): Record<string, unknown> {
  type Scope = { scope: { name: string; version: string }; spans: unknown[] };
  const resources = new Map<string, Map<string, Scope>>();
  for (const row of rows) {
    let scopes = resources.get(row.resource);
    if (!scopes) resources.set(row.resource, (scopes = new Map<string, Scope>()));
    const scopeKey = JSON.stringify([row.scope_name, row.scope_version]);
    let scope = scopes.get(scopeKey);
    if (!scope) scopes.set(scopeKey, (scope = { scope: { name: row.scope_name, version: row.scope_version }, spans: [] }));
    scope.spans.push(otlpSpan(row));
  }
  return {
    resourceSpans: [...resources].map(([resource, scopes]) => ({
      resource: { attributes: keyValues(parsed<Attributes>(resource, {})) },
      scopeSpans: [...scopes.values()].map((s) => ({ scope: s.scope, spans: s.spans })),
    })),
  };
}

const NEWLINE = 0x0a;
const decoder = new TextDecoder();

/** Parses the batch's lines and writes the traces whose first span starts in the window. */
export function otlpBatch(input: OtlpBatchInput): OtlpBatchOutput {
  const bytes = input.rows;
  const start = BigInt(input.startNs);
  const end = BigInt(input.endNs);
  const out: string[] = [];
  let traces = 0;
  let current: ExportSpanRow[] = [];
  const flush = () => {
    if (current.length === 0) return;
    let first = BigInt(current[0].start_time_ns);
    for (const row of current) if (BigInt(row.start_time_ns) < first) first = BigInt(row.start_time_ns);
    // The statement finds traces with any span in the window; one that began before it is the previous window's.
    if (first >= start && first < end) {
      out.push(`${JSON.stringify(traceRequest(current))}\n`);
      traces++;
    }
    current = [];
  };
  let lastSpan = '';
  for (let at = 0; at < bytes.length; ) {
    let next = bytes.indexOf(NEWLINE, at);
    if (next === -1) next = bytes.length;
    if (next > at) {
      const row = JSON.parse(decoder.decode(bytes.subarray(at, next))) as ExportSpanRow;
      if (current.length > 0 && row.trace_id !== current[0].trace_id) {
        flush();
        lastSpan = '';
      }
      // Copies of a span not merged yet (a re-sent export) are adjacent, newest first: keep that one.
      if (row.span_id !== lastSpan) current.push(row);
      lastSpan = row.span_id;
    }
    at = next + 1;
  }
  flush();
  return { text: out.join(''), traces };
}

/**
 * Where the rows of the batch's last trace begin: each line starts with `{"trace_id":"<id>"`
 * (trace-export.ts selects trace_id first; the id is a UUID, never escaped), so the boundary is
 * found by comparing line starts from the end, without parsing a row. 0 when every row is that trace's.
 */
export function lastTraceStart(bytes: Uint8Array, end = bytes.length): number {
  const idAt = (lineStart: number) => {
    const from = lineStart + TRACE_ID_PREFIX.length;
    return decoder.decode(bytes.subarray(from, bytes.indexOf(QUOTE, from)));
  };
  const lineStarts: number[] = [];
  // The start of the last line, then of each line before it.
  let lineEnd = end > 0 && bytes[end - 1] === NEWLINE ? end - 1 : end;
  let lastId: string | null = null;
  while (lineEnd > 0) {
    const lineStart = bytes.lastIndexOf(NEWLINE, lineEnd - 1) + 1;
    const id = idAt(lineStart);
    if (lastId !== null && id !== lastId) return lineStarts[lineStarts.length - 1];
    lastId = id;
    lineStarts.push(lineStart);
    lineEnd = lineStart - 1;
  }
  return 0;
}

const TRACE_ID_PREFIX = '{"trace_id":"';
const QUOTE = 0x22;

export const otlpBatchTask = computeTask<OtlpBatchInput, OtlpBatchOutput>('otlp-export-batch');
