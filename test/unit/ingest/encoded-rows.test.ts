import { describe, expect, it } from 'vitest';
import {
  contentValues, emptyEncodedRows, encodeBody, encodeLines, encodeSpanEventRows, errorValues, generationRowsToWrite, generationValues, INSERT_COLUMNS, jsonLine, keptParts, lineOf,
  PREVIEW_COLUMNS, previewValues, processedValues, SETTLE_COLUMNS, SPAN_COLUMNS, spanValues, storedRowsFromSpanLines, TOOL_COLUMNS, toolValues, traceValues,
} from '../../../src/ingest/write/encoded-rows.js';
import { storedSpanId } from '../../../src/platform/clickhouse/sql/event-ids.js';
import type { GenerationCompletedRow, SpanEventRows, SpanRow } from '../../../src/spans/event-rows.js';
import { STORED_SPAN_COLUMNS } from '../../../src/spans/stored-spans.js';

/**
 * The insert body built on the compute pool: one JSONCompactEachRow buffer per table (each line the
 * array of the row's values in INSERT_COLUMNS order) with its line ends, so the writer can hand it
 * to the engine whole, or only the lines it keeps, without building strings.
 */

const NAME = SPAN_COLUMNS.indexOf('name');
/** The name column of a `spans` line. */
const nameOf = (line: string | Uint8Array) => (JSON.parse(typeof line === 'string' ? line : Buffer.from(line).toString('utf8')) as unknown[])[NAME];

const span = (id: string, name: string) => ({ tenant_id: 't', project_id: 'p', trace_id: 'tr', span_id: id, name }) as unknown as SpanRow;
const rows = (spans: SpanRow[]): SpanEventRows => ({ spans, generations: [], tools: [], errors: [] });
const text = (parts: Uint8Array[]) => Buffer.concat(parts).toString('utf8');

describe('encoded rows', () => {
  // Multi-byte characters and a newline inside a value: line ends are byte offsets of the real line breaks.
  const names = ['plain', 'línea\nwith an escaped newline', '工具 🔧', 'last'];
  const encoded = encodeSpanEventRows(rows(names.map((n, i) => span(`s${i}`, n)))).spans;

  it('is one JSONCompactEachRow body with the end of every line', () => {
    expect(encoded.keys).toEqual(names.map((_, i) => `t\u0000p\u0000tr\u0000s${i}`));
    expect(encoded.ends).toHaveLength(names.length);
    expect(encoded.ends.at(-1)).toBe(encoded.body.byteLength);
    const lines = names.map((_, i) => Buffer.from(lineOf(encoded, i)).toString('utf8'));
    expect(lines.map((l) => l.endsWith('\n'))).toEqual(names.map(() => true));
    expect(lines.map(nameOf)).toEqual(names);
  });

  it('grows past its first estimate and owns exactly its bytes (a worker answer clones the whole ArrayBuffer)', () => {
    // 3 rows start with 3 KiB; these lines are far longer, with 3- and 4-byte characters.
    const long = ['工'.repeat(5000), '🔧'.repeat(3000), 'x'.repeat(20000)];
    const grown = encodeSpanEventRows(rows(long.map((n, i) => span(`s${i}`, n)))).spans;
    expect(long.map((_, i) => nameOf(lineOf(grown, i)))).toEqual(long);
    expect(grown.body.buffer.byteLength).toBe(grown.body.byteLength);
    expect(grown.body.byteOffset).toBe(0);
    expect(encoded.body.buffer.byteLength).toBe(encoded.body.byteLength);
  });

  it('gives every call a body of its own, though the thread reuses its scratch buffer between calls', () => {
    const first = encodeSpanEventRows(rows(['a'.repeat(3000), 'b'].map((n, i) => span(`s${i}`, n))));
    const before = Buffer.from(first.spans.body).toString('utf8');
    // Later calls (smaller and larger) write over the scratch the first one used.
    encodeSpanEventRows(rows([span('x', 'zzzz')]));
    encodeSpanEventRows(rows(['y'.repeat(9000), 'w'.repeat(9000)].map((n, i) => span(`y${i}`, n))));
    expect(Buffer.from(first.spans.body).toString('utf8')).toBe(before);
    expect(nameOf(lineOf(first.spans, 1))).toBe('b');
  });

  it('keeps the whole body, runs of kept lines, or nothing', () => {
    expect(keptParts(encoded, () => true)).toHaveLength(1);
    expect(text(keptParts(encoded, () => true))).toBe(Buffer.from(encoded.body).toString('utf8'));
    const parts = keptParts(encoded, (i) => i !== 1);
    // Line 0, then lines 2–3 as one run.
    expect(parts).toHaveLength(2);
    expect(text(parts).split('\n').filter(Boolean).map(nameOf)).toEqual(['plain', '工具 🔧', 'last']);
    expect(keptParts(encoded, () => false)).toEqual([]);
    expect(keptParts(emptyEncodedRows().spans, () => true)).toEqual([]);
  });
});

describe('insert columns', () => {
  // A row whose every field holds its own column's name: its values must be the column list.
  const named = (columns: readonly string[]) => Object.fromEntries(columns.map((c) => [c, c])) as never;

  it('lists each table\'s values in the order of its columns', () => {
    expect(spanValues(named(INSERT_COLUMNS.spans))).toEqual([...INSERT_COLUMNS.spans]);
    // The per-span event tables store span_id as a UInt64 (clickhouse/009): its value is the decimal text.
    const SPAN = '00000000000000ff';
    const event = (columns: readonly string[]) => ({ ...(named(columns) as object), span_id: SPAN }) as never;
    const expected = (columns: readonly string[]) => columns.map((c) => (c === 'span_id' ? '255' : c));
    expect(generationValues(event(INSERT_COLUMNS.event_generation_completed))).toEqual(expected(INSERT_COLUMNS.event_generation_completed));
    expect(toolValues(event(INSERT_COLUMNS.event_tool_called))).toEqual(expected(INSERT_COLUMNS.event_tool_called));
    expect(errorValues(event(INSERT_COLUMNS.event_span_errored))).toEqual(expected(INSERT_COLUMNS.event_span_errored));
  });

  it('writes a span id as the exact decimal of the UInt64 its 16 hex characters spell', () => {
    // Leading zeros, the sign bit, and the largest value: past 2^53 a JS number would round.
    expect(storedSpanId('0000000000000001')).toBe('1');
    expect(storedSpanId('00ff00ff00ff00ff')).toBe('71777214294589695');
    expect(storedSpanId('8000000000000000')).toBe('9223372036854775808');
    expect(storedSpanId('ffffffffffffffff')).toBe('18446744073709551615');
    expect(storedSpanId('ffffffffffffffff')).not.toBe(String(Number.parseInt('ffffffffffffffff', 16)));
    const values = toolValues({ ...(named(INSERT_COLUMNS.event_tool_called) as object), span_id: 'fffffffffffffffe' } as never);
    expect(values[TOOL_COLUMNS.indexOf('span_id')]).toBe('18446744073709551614');
  });

  it('names every column once', () => {
    for (const columns of [...Object.values(INSERT_COLUMNS), ...Object.values(SETTLE_COLUMNS), PREVIEW_COLUMNS]) expect(new Set(columns).size).toBe(columns.length);
  });

  it('lists a preview\'s values in the order of its columns, one line per trace with its end', () => {
    expect(previewValues(named(PREVIEW_COLUMNS))).toEqual([...PREVIEW_COLUMNS]);
    const previews = encodeLines([named(PREVIEW_COLUMNS), { ...(named(PREVIEW_COLUMNS) as object), agent_name: 'ág\nent' } as never], previewValues);
    expect(previews.ends).toHaveLength(2);
    expect(previews.ends[1]).toBe(previews.body.byteLength);
    const second = JSON.parse(Buffer.from(lineOf(previews, 1)).toString('utf8')) as unknown[];
    expect(second[PREVIEW_COLUMNS.indexOf('agent_name')]).toBe('ág\nent');
    expect(Buffer.from(lineOf(previews, 0)).toString('utf8')).toBe(`${JSON.stringify(PREVIEW_COLUMNS)}\n`);
    expect(encodeLines([], previewValues).body.byteLength).toBe(0);
  });

  it('lists the settler\'s rows in the order of their columns, as one body of lines', () => {
    expect(processedValues(named(SETTLE_COLUMNS.event_trace_processed))).toEqual([...SETTLE_COLUMNS.event_trace_processed]);
    expect(traceValues(named(SETTLE_COLUMNS.traces))).toEqual([...SETTLE_COLUMNS.traces]);
    expect(contentValues(named(SETTLE_COLUMNS.trace_content))).toEqual([...SETTLE_COLUMNS.trace_content]);
    const body = encodeBody([named(SETTLE_COLUMNS.traces), named(SETTLE_COLUMNS.traces)], traceValues);
    expect(Buffer.from(body).toString('utf8')).toBe(`${JSON.stringify(SETTLE_COLUMNS.traces)}\n`.repeat(2));
    expect(body.buffer.byteLength).toBe(body.byteLength);
    expect(encodeBody([], traceValues).byteLength).toBe(0);
  });

  it('reads held `spans` lines back as the stored row a read-back gives, JSON columns as values', () => {
    const row = named(INSERT_COLUMNS.spans) as SpanRow;
    const full = { ...row, duration_ms: 1.5, attributes: { k: ['v', 1] }, events: [], resource: { 'service.name': 's\n' } } as unknown as SpanRow;
    const body = encodeSpanEventRows({ ...rows([full, { ...full, span_id: 'second' }]) }).spans.body;
    const stored = storedRowsFromSpanLines(body);
    // The figure columns a read-back adds for spans whose content expired are not in held lines,
    // which still carry their attributes (stored-spans.ts, StoredFigures).
    const figures = new Set(['span_class', 'model', 'provider', 'input_tokens', 'output_tokens', 'cached_input_tokens', 'tool_name', 'thread_id']);
    const held = STORED_SPAN_COLUMNS.split(', ').filter((c) => !figures.has(c));
    expect(held.length).toBe(STORED_SPAN_COLUMNS.split(', ').length - figures.size);
    const expected = Object.fromEntries(held.map((c) => [c, full[c as keyof SpanRow]]));
    expect(stored).toEqual([expected, { ...expected, span_id: 'second' }]);
  });
});

describe('jsonLine', () => {
  it('writes lone surrogates as U+FFFD and leaves pairs and backslash-u text alone', () => {
    const row = { a: 'x\ud800y', b: '\udc00', c: 'pair 🔧 \ud83d\udd27', d: 'text \\ud800 stays', e: 'end \ud83d', f: '\\\ud800' };
    const line = jsonLine(row);
    expect(JSON.parse(line)).toEqual({ a: 'x\ufffdy', b: '\ufffd', c: 'pair 🔧 🔧', d: 'text \\ud800 stays', e: 'end \ufffd', f: '\\\ufffd' });
    expect(Buffer.from(line, 'utf8').toString('utf8')).toBe(line);
  });

  it('is JSON.stringify for rows without lone surrogates', () => {
    const row = { s: 'quote " backslash \\ newline \n é 工具', n: 1.5, o: { k: ['v'] } };
    expect(jsonLine(row)).toBe(JSON.stringify(row));
  });
});

describe('generationRowsToWrite', () => {
  const gen = (spanId: string, fields: Partial<GenerationCompletedRow> = {}): GenerationCompletedRow => ({
    tenant_id: 't', project_id: 'p', timestamp: '2026-11-28 09:00:00.000', actor: 'sdk', surface: 'otlp', user_id: '', api_key_id: 'key-1',
    trace_id: 'tr', span_id: spanId, model: 'gpt-4o-mini', provider: 'openai', duration_ms: 812.5, input_tokens: 120, output_tokens: 7,
    cached_input_tokens: 0, cache_write_input_tokens: 0, tps: 7 / 0.8125, error: 0, ...fields,
  });
  /** The lines ingest wrote, as the insert body holds them. */
  const written = (rows: GenerationCompletedRow[]) => encodeSpanEventRows({ spans: [], generations: rows, tools: [], errors: [] }).generations.body;

  it('leaves a row written with the same values, whoever sends the settle', () => {
    const rows = [gen('00000000000000a1'), gen('00000000000000a2', { tps: null, output_tokens: 0 })];
    expect(generationRowsToWrite(rows.map((r) => ({ ...r, api_key_id: 'key-2' })), written(rows))).toEqual([]);
  });

  it('rewrites a row the whole trace changed, keeping who recorded the call, and writes a row never written', () => {
    const before = gen('00000000000000a1', { api_key_id: 'key-1', cached_input_tokens: 0 });
    const settled = [gen('00000000000000a1', { api_key_id: 'key-2', cached_input_tokens: 64 }), gen('00000000000000b2', { api_key_id: 'key-2' })];
    expect(generationRowsToWrite(settled, written([before]))).toEqual([{ ...settled[0], api_key_id: 'key-1' }, settled[1]]);
  });

  it('writes every row when nothing was written', () => {
    const rows = [gen('00000000000000a1')];
    expect(generationRowsToWrite(rows, new Uint8Array(0))).toEqual(rows);
  });
});
