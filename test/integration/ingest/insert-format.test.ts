/**
 * The per-span tables' insert format (encoded-rows.ts: JSONCompactEachRow lines of INSERT_COLUMNS)
 * against the engine: every value the ingest path can produce is stored exactly as the JSONEachRow
 * rows of the same spans store it — text that needs escaping, lone surrogates, control characters,
 * non-ASCII, integers past 2^53, non-finite doubles kept as text, empty and nested attribute values —
 * through chdb's raw insert and through the driver's streamed body (a ClickHouse server's path). And
 * the settler's two paths agree: a summary from the held lines equals one from a read-back, and its
 * bodies insert as they are.
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeSpanEventRows, INSERT_COLUMNS, jsonLine, lineOf, SETTLE_COLUMNS, type InsertTable, type SettleTable } from '../../../src/ingest/write/encoded-rows.js';
import { storedSpanId } from '../../../src/platform/clickhouse/sql/event-ids.js';
import { storedIdText } from '../../../src/platform/clickhouse/sql/event-ids.js';
import { otlpOrigin, type SpanEventRows } from '../../../src/spans/event-rows.js';
import { deriveRequestRows } from '../../../src/ingest/write/ingest-prepare.js';
import { normalizeExport } from '../../../src/spans/normalized-span.js';
import { decodeJsonExport } from '../../../src/ingest/otlp/otlp-decode-json.js';
import { unpackHook } from '../../../src/ingest/settle/packed-hook.js';
import { settleSummaries } from '../../../src/ingest/settle/settle-summaries.js';
import { validateExport } from '../../../src/spans/span-validation.js';
import { readTraceSpansBytes, traceKeyString } from '../../../src/spans/stored-spans.js';
import { openClickHouse, type ClickHouseStore } from '../../../src/platform/clickhouse/clickhouse.js';
import { raw } from '../../../src/platform/clickhouse/sql/fragment.js';
import { StatementRunner } from '../../../src/platform/clickhouse/sql/statement-runner.js';
import { migrateClickHouse } from '../../../src/platform/migrations.js';
import { tempDataDir } from '../../helpers/temp-dir.js';

const tricky =
  'quote " backslash \\ slash / newline \n tab \t cr \r nul \u0000 bell \u0007 esc \u001b é 工具 🔧 {"json":[1,2]} ] } , ' +
  'line sep \u2028 para sep \u2029 lone \ud800 and \udc00 del \u007f c1 \u0085 escaped-looking \\u0041 \\ud800 \\t';

/** What a UTF-8 store can hold: every lone surrogate of a string is U+FFFD (the writer's jsonLine). */
const wellFormedText = (text: string) => text.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd');
const wellFormed = (value: unknown): unknown =>
  JSON.parse(JSON.stringify(value), (_key, v: unknown) => (typeof v === 'string' ? wellFormedText(v) : v));

const attr = (key: string, value: unknown) => ({ key, value });
const ns = (ms: number) => String(BigInt(Date.now() + ms) * 1_000_000n);

/** One trace with a generation, a failing tool call and an agent root, full of values that need care. */
function exportText(traceId: string): string {
  const span = (spanId: string, parentSpanId: string, name: string, at: number, attributes: unknown[], extra: object = {}) => ({
    traceId, spanId, parentSpanId, name, kind: 1, startTimeUnixNano: ns(at), endTimeUnixNano: ns(at + 3), attributes, ...extra,
  });
  return JSON.stringify({
    resourceSpans: [{
      resource: { attributes: [attr('service.name', { stringValue: `svc ${tricky}` }), attr('empty.list', { arrayValue: { values: [] } })] },
      scopeSpans: [{
        scope: { name: `scope\t${tricky}`, version: '1\n2' },
        spans: [
          span('a000000000000001', '', `agent ${tricky}`, 0, [
            attr('gen_ai.operation.name', { stringValue: 'invoke_agent' }),
            attr('gen_ai.agent.name', { stringValue: `agent\t${tricky}` }),
            attr('lookout.agent_input', { stringValue: tricky }),
            attr('big', { intValue: '9007199254740993' }),
            attr('negative', { intValue: '-9223372036854775808' }),
            attr('nan', { doubleValue: 'NaN' }),
            attr('inf', { doubleValue: '-Infinity' }),
            attr('tiny', { doubleValue: 5e-324 }),
            attr('ratio', { doubleValue: 0.1 }),
            attr('flag', { boolValue: false }),
            attr('bytes', { bytesValue: 'AAEC' }),
            attr('list', { arrayValue: { values: [{ stringValue: tricky }, { intValue: '3' }, { arrayValue: { values: [] } }] } }),
            attr('map', { kvlistValue: { values: [attr('inner', { stringValue: '}]"\\' }), attr('empty', { kvlistValue: { values: [] } })] } }),
          ], { events: [{ timeUnixNano: ns(1), name: `event ${tricky}`, attributes: [] }], status: { code: 1, message: '' } }),
          span('a000000000000002', 'a000000000000001', 'chat', 1, [
            attr('gen_ai.operation.name', { stringValue: 'chat' }),
            attr('gen_ai.provider.name', { stringValue: 'openai' }),
            attr('gen_ai.request.model', { stringValue: `gpt-4o\t${tricky}` }),
            attr('gen_ai.usage.input_tokens', { intValue: '9007199254740991' }),
            attr('gen_ai.usage.output_tokens', { doubleValue: 123456789.6 }),
            attr('gen_ai.usage.cache_read.input_tokens', { intValue: '0' }),
          ]),
          span('a000000000000003', 'a000000000000001', 'execute_tool', 2, [
            attr('gen_ai.operation.name', { stringValue: 'execute_tool' }),
            attr('gen_ai.tool.name', { stringValue: `tool\n${tricky}` }),
          ], { status: { code: 2, message: `failed ${tricky}` } }),
          // Counts that are not exact integers count as absent: a count of 1e21 or more was written
          // with an exponent, which the engine refused for a UInt64 column, failing the whole flush.
          span('a000000000000004', 'a000000000000001', 'chat without usable usage', 3, [
            attr('gen_ai.operation.name', { stringValue: 'chat' }),
            attr('gen_ai.usage.input_tokens', { doubleValue: 1e21 }),
            attr('gen_ai.usage.output_tokens', { intValue: '9007199254740993' }),
            attr('gen_ai.usage.cache_read.input_tokens', { stringValue: '100000000000000000000000' }),
          ]),
        ],
      }],
    }],
  });
}

function rowsOf(traceId: string): SpanEventRows {
  const { valid, rejectedSpans } = validateExport(decodeJsonExport(exportText(traceId)));
  expect(rejectedSpans).toBe(0);
  return deriveRequestRows(normalizeExport(valid, { tenantId: 'tenant-f', projectId: 'project-f' }), otlpOrigin('key\t1', 'user "1"')).rows;
}

const TABLES = Object.keys(INSERT_COLUMNS) as InsertTable[];
const rowsFor = (rows: SpanEventRows, table: InsertTable): object[] =>
  table === 'spans' ? rows.spans : table === 'event_generation_completed' ? rows.generations : table === 'event_tool_called' ? rows.tools : rows.errors;
const bodyFor = (rows: SpanEventRows, table: InsertTable) => {
  const encoded = encodeSpanEventRows(rows);
  return (table === 'spans' ? encoded.spans : table === 'event_generation_completed' ? encoded.generations : table === 'event_tool_called' ? encoded.tools : encoded.errors).body;
};

let store: ClickHouseStore;

beforeAll(async () => {
  store = await openClickHouse({ url: null, user: 'default', password: '', database: 'insert_format', cluster: null, dataDir: tempDataDir() });
  await migrateClickHouse(store, path.resolve(__dirname, '../../../clickhouse'));
  for (const table of TABLES) {
    for (const twin of ['json', 'streamed']) {
      await store.command(raw(`CREATE TABLE ${store.table(`${table}_${twin}`)} AS ${store.table(table)}`), 'system');
    }
  }
});
afterAll(async () => {
  await store?.close();
});

/** Every column but the insert time, 64-bit integers as exact text, in key order. */
async function stored(table: string): Promise<Record<string, unknown>[]> {
  const except = table.startsWith('spans') ? 'ingested_at' : 'inserted_at';
  return store.read(raw(`SELECT * EXCEPT (${except}) FROM ${store.table(table)} ORDER BY span_id`), {
    lane: 'system',
    settings: { output_format_json_quote_64bit_integers: 1 },
  });
}

describe('the per-span tables\' insert format', () => {
  const rows = rowsOf(randomBytes(16).toString('hex'));

  it('has rows in every table to compare', () => {
    expect([rows.spans.length, rows.generations.length, rows.tools.length, rows.errors.length]).toEqual([4, 2, 1, 1]);
  });

  it('stores every value as the JSONEachRow rows did, through the raw insert and through a streamed body', async () => {
    const streaming = store.client;
    const runner = new StatementRunner({
      clients: { ingest: [streaming], system: [streaming], analytics: [streaming], interactive: [streaming] },
      binding: 'literal', server: false, gates: store.gates, queryTimeoutSeconds: 15,
    });
    for (const table of TABLES) {
      await store.insertBody(store.table(table), [bodyFor(rows, table)], 'ingest', INSERT_COLUMNS[table]);
      await runner.insertBody(store.table(`${table}_streamed`), [bodyFor(rows, table)], 'ingest', INSERT_COLUMNS[table]);
      // JSONEachRow of the same rows, span ids as the event tables store them (a UInt64, clickhouse/009).
      const asStored = (r: object) => (table === 'spans' ? r : { ...r, span_id: storedSpanId((r as { span_id: string }).span_id) });
      const jsonEachRow = Buffer.from(rowsFor(rows, table).map((r) => `${jsonLine(asStored(r))}\n`).join(''));
      await store.insertBody(store.table(`${table}_json`), [jsonEachRow], 'ingest');
      const compact = await stored(table);
      expect(compact).toHaveLength(rowsFor(rows, table).length);
      expect(compact).toEqual(await stored(`${table}_json`));
      expect(await stored(`${table}_streamed`)).toEqual(compact);
    }
  });

  it('keeps what the rows say: exact JSON text of the attribute values, U+FFFD for lone surrogates, exact big integers', async () => {
    const spans = await stored('spans');
    rows.spans.forEach((row, i) => {
      expect(spans[i].name).toBe(wellFormedText(row.name));
      expect(spans[i].attributes).toBe(JSON.stringify(wellFormed(row.attributes)));
      expect(spans[i].events).toBe(JSON.stringify(wellFormed(row.events)));
      expect(spans[i].resource).toBe(JSON.stringify(wellFormed(row.resource)));
      expect(spans[i].start_time_ns).toBe(row.start_time_ns);
      expect(spans[i].input_tokens).toBe(String(row.input_tokens));
    });
    expect(spans[1].input_tokens).toBe('9007199254740991');
    expect(spans[1].output_tokens).toBe('123456790');
    expect([spans[3].input_tokens, spans[3].output_tokens, spans[3].cached_input_tokens]).toEqual(['0', '0', '0']);
    const [generation] = await stored('event_generation_completed');
    expect(generation.tps).toBeCloseTo(123456790 / 0.003, 0);
    expect((await stored('event_generation_completed'))[1].tps).toBeNull();
  });

  it('round-trips span ids with leading zeros and the largest value, and trace ids, through both insert paths', async () => {
    const spanIds = ['0000000000000001', '00000000000000ff', '00ff00ff00ff00ff', '7fffffffffffffff', '8000000000000000', 'ffffffffffffffff'];
    const traceIds = ['00000000-0000-5000-8000-000000000001', 'ffffffff-ffff-5fff-bfff-ffffffffffff'];
    const tool = rows.tools[0];
    const written = spanIds.map((spanId, i) => ({ ...tool, tenant_id: 'tenant-ids', span_id: spanId, trace_id: traceIds[i % 2] }));
    // The insert path (JSONCompactEachRow lines, ingest's and the settler's) and JSONEachRow objects.
    const compact = encodeSpanEventRows({ spans: [], generations: [], tools: written, errors: [] }).tools.body;
    await store.insertBody(store.table('event_tool_called'), [compact], 'ingest', INSERT_COLUMNS.event_tool_called);
    await store.insertLines(store.table('event_tool_called_json'), written.map((w) => jsonLine({ ...w, span_id: storedSpanId(w.span_id) })), 'ingest');
    for (const table of ['event_tool_called', 'event_tool_called_json']) {
      const back = await store.read<{ trace_id: string; span_id: string }>(
        raw(`SELECT ${storedIdText('uuid', 'trace_id')} AS trace_id, ${storedIdText('hex64', 'span_id')} AS span_id FROM ${store.table(table)}
          WHERE tenant_id = 'tenant-ids' ORDER BY span_id`),
        { lane: 'system' },
      );
      expect([table, back]).toEqual([table, written.map((w) => ({ trace_id: w.trace_id, span_id: w.span_id }))]);
    }
  });

  it('summarizes a trace from its held lines as from a read-back of what was stored', async () => {
    const key = traceKeyString({ tenantId: 'tenant-f', projectId: 'project-f', traceId: rows.spans[0].trace_id });
    const encoded = encodeSpanEventRows(rows);
    const held = Buffer.concat(rows.spans.map((_, i) => lineOf(encoded.spans, i)));
    const origin = otlpOrigin('key\t1', 'user "1"');
    const processedAt = '2026-11-24 19:00:00.000';
    const fromMemory = settleSummaries({ processedAt, traces: [{ key, origin, rows: held, writtenTools: [] }] });
    const stored = await readTraceSpansBytes(store, [{ tenantId: 'tenant-f', projectId: 'project-f', traceId: rows.spans[0].trace_id }]);
    const fromReadBack = settleSummaries({ processedAt, traces: [{ key, origin }], stored });
    // Each settle table's lines as rows named by their columns.
    const rowsOf = (bodies: Record<SettleTable, Uint8Array>, table: SettleTable) =>
      Buffer.from(bodies[table]).toString('utf8').split('\n').filter(Boolean).map((line) => {
        const values = JSON.parse(line) as unknown[];
        return Object.fromEntries(SETTLE_COLUMNS[table].map((c, i) => [c, values[i]]));
      });
    for (const table of ['event_trace_processed', 'traces', 'trace_content'] as const) {
      expect([table, Buffer.from(fromMemory.bodies[table]).toString('utf8')]).toEqual([table, Buffer.from(fromReadBack.bodies[table]).toString('utf8')]);
    }
    expect(fromMemory.traces.map((t) => unpackHook(t.hook))).toEqual(fromReadBack.traces.map((t) => unpackHook(t.hook)));
    // Span attributes go into the hook payload only for the projects named (absent: every one).
    expect(Object.keys(unpackHook(fromMemory.traces[0].hook).spanAttributes ?? {}).length).toBeGreaterThan(0);
    const named = (attributesFor: string[]) => unpackHook(settleSummaries({ processedAt, traces: [{ key, origin, rows: held, writtenTools: [] }], attributesFor }).traces[0].hook);
    expect(named(['tenant-f\u0000other-project']).spanAttributes).toBeNull();
    expect(named(['tenant-f\u0000project-f']).spanAttributes).toEqual(unpackHook(fromMemory.traces[0].hook).spanAttributes);
    // The searchable text (trace-content.ts) holds the agent's input.
    expect(rowsOf(fromMemory.bodies, 'trace_content').find((r) => r.field === 'input')?.text).toContain(wellFormedText(tricky).trim().slice(0, 20));
    // The summary saw the values: the agent's name and input, the failing tool call, the tokens.
    expect(rowsOf(fromMemory.bodies, 'traces')[0]).toMatchObject({ agent_input: wellFormedText(tricky) });
    expect(rowsOf(fromMemory.bodies, 'event_trace_processed')[0]).toMatchObject({ failing_tool_calls: 1, error_count: 1 });
    // And the engine stores them: the bodies insert as the settler sends them.
    for (const table of ['event_trace_processed', 'traces', 'trace_content'] as const) {
      await store.insertBody(store.table(table), [fromMemory.bodies[table]], 'ingest', SETTLE_COLUMNS[table]);
    }
    const [summary] = await store.read<{ agent_input: string; span_count: number }>(
      raw(`SELECT agent_input, span_count FROM ${store.table('traces')} WHERE tenant_id = 'tenant-f'`),
      { lane: 'system' },
    );
    expect(summary).toMatchObject({ agent_input: wellFormedText(tricky), span_count: rows.spans.length });
  });
});
