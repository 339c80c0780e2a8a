/**
 * The insert formats row-formats.ts compares Lookout's (JSONCompactEachRow, encoded-rows.ts) with:
 * JSONEachRow as Lookout wrote it before (the row objects, jsonLine) and TabSeparated (named
 * columns in the rows' order), each with a decoder of the `spans` lines back to spans, written as
 * the compute pool would run them.
 */
import { jsonLine, spanKey, type EncodedRows } from '../../src/ingest/write/encoded-rows.js';
import { storedSpanId } from '../../src/platform/clickhouse/sql/event-ids.js';
import type { SpanEventRows } from '../../src/spans/event-rows.js';
import type { NormalizedSpan } from '../../src/spans/normalized-span.js';
import { spanFromStoredRow, storedRowsFromBytes, type StoredSpanRow } from '../../src/spans/stored-spans.js';

type Table = 'spans' | 'event_generation_completed' | 'event_tool_called' | 'event_span_errored';

export interface FormatCodec {
  name: string;
  format: 'JSONEachRow' | 'JSONCompactEachRow' | 'TabSeparated';
  columns?: (table: Table) => string[];
  /** Insert settings of this variant. */
  settings?: Record<string, number>;
  encode(rows: SpanEventRows): Record<Table, EncodedRows>;
  decodeSpans(bytes: Uint8Array): NormalizedSpan[];
}

/** s: string, n: number, N: nullable number, j: JSON value stored as its text. */
type Kind = 's' | 'n' | 'N' | 'j';
const ORIGIN: [string, Kind][] = [['tenant_id', 's'], ['project_id', 's'], ['timestamp', 's'], ['actor', 's'], ['surface', 's'], ['user_id', 's'], ['api_key_id', 's'], ['trace_id', 's'], ['span_id', 's']];
const SCHEMAS: Record<Table, [string, Kind][]> = {
  spans: [
    ['tenant_id', 's'], ['project_id', 's'], ['trace_id', 's'], ['otel_trace_id', 's'], ['span_id', 's'], ['parent_span_id', 's'], ['name', 's'],
    ['kind', 's'], ['start_time_ns', 's'], ['end_time_ns', 's'], ['duration_ms', 'n'], ['status_code', 's'], ['status_description', 's'],
    ['service_name', 's'], ['span_class', 's'], ['model', 's'], ['provider', 's'], ['input_tokens', 'n'], ['output_tokens', 'n'],
    ['cached_input_tokens', 'n'], ['agent_name', 's'], ['tool_name', 's'], ['thread_id', 's'], ['attributes', 'j'], ['events', 'j'],
    ['resource', 'j'], ['scope_name', 's'], ['scope_version', 's'], ['timestamp', 's'],
  ],
  event_generation_completed: [
    ...ORIGIN, ['model', 's'], ['provider', 's'], ['duration_ms', 'n'], ['input_tokens', 'n'], ['output_tokens', 'n'],
    ['cached_input_tokens', 'n'], ['cache_write_input_tokens', 'n'], ['tps', 'N'], ['error', 'n'],
  ],
  event_tool_called: [...ORIGIN, ['tool', 's'], ['agent_name', 's'], ['duration_ms', 'n'], ['output_tokens', 'n'], ['error', 'n']],
  event_span_errored: [...ORIGIN, ['span_name', 's']],
};
const columns = (t: Table) => SCHEMAS[t].map(([c]) => c);
const SPAN_INDEX = new Map(SCHEMAS.spans.map(([c], i) => [c, i]));

const LONE_SURROGATE_ESCAPE = /\\(?:\\|u(d[89a-f][0-9a-f]{2}))/g;
const fixSurrogates = (text: string) => (text.includes('\\ud') ? text.replace(LONE_SURROGATE_ESCAPE, (e, s) => (s ? '\ufffd' : e)) : text);

let scratch = Buffer.allocUnsafe(0);
function encodeLines(rows: Record<string, unknown>[], line: (row: Record<string, unknown>) => string): EncodedRows {
  const keys = new Array<string>(rows.length);
  const ends = new Uint32Array(rows.length);
  let body = scratch.byteLength >= rows.length * 1024 ? scratch : Buffer.allocUnsafe(rows.length * 1024);
  let at = 0;
  for (let i = 0; i < rows.length; i++) {
    keys[i] = spanKey(rows[i] as never);
    const text = line(rows[i]);
    const most = text.length * 3 + 1;
    if (at + most > body.byteLength) {
      const grown = Buffer.allocUnsafe(Math.max(body.byteLength * 2, at + most));
      body.copy(grown, 0, 0, at);
      body = grown;
    }
    at += body.write(text, at, 'utf8');
    body[at++] = 0x0a;
    ends[i] = at;
  }
  const owned = new Uint8Array(body.subarray(0, at));
  scratch = body.byteLength <= 4 * 1024 * 1024 ? body : scratch;
  return { keys, body: owned, ends };
}

function encodeAll(rows: SpanEventRows, line: (table: Table) => (row: Record<string, unknown>) => string): Record<Table, EncodedRows> {
  const as = (r: object[]) => r as unknown as Record<string, unknown>[];
  // The per-span event tables store span_id as a UInt64 (clickhouse/009): every format sends it as
  // encoded-rows.ts does, the decimal of the UInt64 its hex spells.
  const event = (table: Table) => {
    const write = line(table);
    return (row: Record<string, unknown>) => write({ ...row, span_id: storedSpanId(String(row.span_id)) });
  };
  return {
    spans: encodeLines(as(rows.spans), line('spans')),
    event_generation_completed: encodeLines(as(rows.generations), event('event_generation_completed')),
    event_tool_called: encodeLines(as(rows.tools), event('event_tool_called')),
    event_span_errored: encodeLines(as(rows.errors), event('event_span_errored')),
  };
}

function linesOf(bytes: Uint8Array): string[] {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  return lines;
}

// ---- JSONEachRow, as Lookout wrote it before

export const JSON_EACH_ROW: FormatCodec = {
  name: 'JSONEachRow (before)',
  format: 'JSONEachRow',
  encode: (rows) => encodeAll(rows, () => jsonLine),
  decodeSpans: (bytes) => storedRowsFromBytes(bytes).map(spanFromStoredRow),
};

function storedFromValues(v: unknown[]): StoredSpanRow {
  const at = (c: string) => v[SPAN_INDEX.get(c)!];
  return {
    tenant_id: at('tenant_id'), project_id: at('project_id'), trace_id: at('trace_id'), otel_trace_id: at('otel_trace_id'), span_id: at('span_id'),
    parent_span_id: at('parent_span_id'), name: at('name'), kind: at('kind'), start_time_ns: at('start_time_ns'), end_time_ns: at('end_time_ns'),
    duration_ms: at('duration_ms'), status_code: at('status_code'), status_description: at('status_description'), service_name: at('service_name'),
    scope_name: at('scope_name'), scope_version: at('scope_version'), agent_name: at('agent_name'), attributes: at('attributes'), events: at('events'),
    resource: at('resource'),
  } as StoredSpanRow;
}

// ---- TabSeparated

const TSV_SPECIAL = /[\t\n\r\\]/;
const TSV_ESCAPES: Record<string, string> = { '\t': '\\t', '\n': '\\n', '\r': '\\r', '\\': '\\\\' };
const tsvText = (s: string) => (TSV_SPECIAL.test(s) ? s.replace(/[\t\n\r\\]/g, (c) => TSV_ESCAPES[c]) : s);
const tsvNumber = (n: unknown) => (typeof n === 'number' && Number.isFinite(n) ? String(n) : '\\N');

const tsvLine = (table: Table) => {
  const schema = SCHEMAS[table];
  return (row: Record<string, unknown>) => {
    let line = '';
    for (let i = 0; i < schema.length; i++) {
      const [name, kind] = schema[i];
      const v = row[name];
      const field = kind === 's' ? tsvText(v as string) : kind === 'j' ? fixSurrogates(JSON.stringify(v)).replaceAll('\\', '\\\\') : tsvNumber(v);
      line = i === 0 ? field : `${line}\t${field}`;
    }
    return line;
  };
};

const UNESCAPES: Record<string, string> = { t: '\t', n: '\n', r: '\r', '\\': '\\', '0': '\0', b: '\b', f: '\f' };
const unescapeTsv = (s: string) => (s.includes('\\') ? s.replace(/\\(.)/g, (_, c: string) => UNESCAPES[c] ?? c) : s);

export const TAB_SEPARATED: FormatCodec = {
  name: 'TabSeparated',
  format: 'TabSeparated',
  columns,
  encode: (rows) => encodeAll(rows, tsvLine),
  decodeSpans: (bytes) =>
    linesOf(bytes).map((l) => {
      const f = l.split('\t');
      const values = f.map((x, i) => {
        const kind = SCHEMAS.spans[i][1];
        const text = unescapeTsv(x);
        return kind === 'j' ? JSON.parse(text) : kind === 'n' ? Number(text) : text;
      });
      return spanFromStoredRow(storedFromValues(values));
    }),
};

