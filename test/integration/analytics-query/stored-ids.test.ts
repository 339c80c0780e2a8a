/**
 * The query DSL over ids stored as ids (clickhouse/009: trace_id UUID, span_id UInt64 in the
 * per-span tables): answers carry the same text ingestion wrote — span ids with their leading zeros,
 * the largest span id, trace ids whose order as UUIDs differs from their text order — and filters
 * answer as they did on the text: a canonical value matches its row, any other text (upper case,
 * short, not an id) matches none, ranges compare the text. References are computed here from the rows.
 */
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { runAnalyticsQuery } from '../../../src/analytics/query/run.js';
import { openClickHouse, type ClickHouseStore } from '../../../src/platform/clickhouse/clickhouse.js';
import { migrateClickHouse } from '../../../src/platform/migrations.js';
import { tempDataDir } from '../../helpers/temp-dir.js';
import { DAY, insertGenerations, insertSpanErrors, isoSecond, type GenerationRow } from './seed.js';

const T = 'tenant-ids';
const P = 'project-ids';
const NOW = Date.UTC(2026, 10, 20, 12);
const window = { start: isoSecond(NOW - DAY), end_exclusive: isoSecond(NOW + DAY) };
// As UUIDs these order by their halves (the second sorts first); as text the first does.
const TRACES = ['00000000-0000-5000-8000-ff0000000000', '00000000-0001-5000-8000-000000000000', 'ffffffff-ffff-5fff-bfff-ffffffffffff'];
const SPANS = ['0000000000000001', '00000000000000ff', '00ff00ff00ff00ff', '7fffffffffffffff', '8000000000000000', 'ffffffffffffffff'];
const rows: GenerationRow[] = SPANS.map((span_id, i) => ({
  tenant_id: T, project_id: P, ts: NOW - i * 1000, model: 'm', trace_id: TRACES[i % 3], span_id,
  duration_ms: i + 1, input_tokens: 10 * i, output_tokens: i, tps: null, error: 0,
}));

let store: ClickHouseStore;
let dataDir: string;
const run = (body: Record<string, unknown>) => runAnalyticsQuery({ ch: store, config: { queryTimeoutSeconds: 15 } }, T, P, { ...window, ...body });
const count = async (filters: unknown[]) => (await run({ from: 'generation.completed', measures: [{ as: 'n', agg: 'count' }], filters })).rows[0].n;
const matching = (keep: (r: GenerationRow) => boolean) => rows.filter(keep).length;

beforeAll(async () => {
  dataDir = tempDataDir('lookout-aq-ids-');
  store = await openClickHouse({ url: null, user: '', password: '', database: 'lookout', cluster: null, dataDir });
  await migrateClickHouse(store, 'clickhouse');
  await insertGenerations(store, rows);
  await insertSpanErrors(store, rows.slice(0, 2).map((r) => ({ tenant_id: T, project_id: P, ts: r.ts, span_name: 'x', trace_id: r.trace_id, span_id: r.span_id })));
});
afterAll(async () => {
  await store?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

describe('ids stored as ids read back as their text', () => {
  test('span ids keep leading zeros and the largest value; grouped in text order', async () => {
    const result = await run({ from: 'generation.completed', measures: [{ as: 'n', agg: 'count' }], group_by: [{ field: 'span_id' }] });
    expect(result.rows).toEqual([...SPANS].sort().map((span_id) => ({ span_id, n: 1 })));
  });

  test('trace ids group, order and count as their text, and join on it', async () => {
    const result = await run({
      from: 'generation.completed',
      measures: [{ as: 'n', agg: 'count' }],
      group_by: [{ field: 'trace_id' }],
      join: { from: 'span.errored', on: 'trace_id', measures: [{ as: 'errors', agg: 'count' }] },
    });
    const expected = [...TRACES].sort().map((trace_id) => ({
      trace_id,
      n: matching((r) => r.trace_id === trace_id),
      errors: rows.slice(0, 2).some((r) => r.trace_id === trace_id) ? 1 : null,
    }));
    expect(result.rows).toEqual(expected);
    const distinct = await run({ from: 'generation.completed', measures: [{ as: 'traces', agg: 'uniqExact', field: 'trace_id' }, { as: 'spans', agg: 'uniqExact', field: 'span_id' }] });
    expect(distinct.rows).toEqual([{ traces: TRACES.length, spans: SPANS.length }]);
  });
});

describe('filters on stored ids answer as on the text', () => {
  test('eq and neq: a canonical value matches its rows; other text matches none', async () => {
    expect(await count([{ field: 'span_id', op: 'eq', value: '00000000000000ff' }])).toBe(1);
    expect(await count([{ field: 'span_id', op: 'eq', value: 'ffffffffffffffff' }])).toBe(1);
    for (const other of ['FFFFFFFFFFFFFFFF', 'ff', '255', '', 'zzzzzzzzzzzzzzzz', '00000000000000ff ']) {
      expect([other, await count([{ field: 'span_id', op: 'eq', value: other }])]).toEqual([other, 0]);
      expect([other, await count([{ field: 'span_id', op: 'neq', value: other }])]).toEqual([other, rows.length]);
    }
    expect(await count([{ field: 'span_id', op: 'neq', value: '0000000000000001' }])).toBe(rows.length - 1);
    expect(await count([{ field: 'trace_id', op: 'eq', value: TRACES[1] }])).toBe(matching((r) => r.trace_id === TRACES[1]));
    for (const other of [TRACES[2].toUpperCase(), TRACES[1].replaceAll('-', ''), `{${TRACES[1]}}`, 'not-a-uuid']) {
      expect([other, await count([{ field: 'trace_id', op: 'eq', value: other }])]).toEqual([other, 0]);
      expect([other, await count([{ field: 'trace_id', op: 'neq', value: other }])]).toEqual([other, rows.length]);
    }
  });

  test('in keeps the canonical values; none left matches nothing', async () => {
    expect(await count([{ field: 'span_id', op: 'in', value: ['8000000000000000', 'FFFFFFFFFFFFFFFF', '0000000000000001'] }])).toBe(2);
    expect(await count([{ field: 'span_id', op: 'in', value: ['A', 'B'] }])).toBe(0);
    expect(await count([{ field: 'trace_id', op: 'in', value: [TRACES[0], TRACES[2].toUpperCase()] }])).toBe(matching((r) => r.trace_id === TRACES[0]));
  });

  test('ranges compare the text', async () => {
    for (const [op, value, keep] of [
      ['gt', '7', (s: string) => s > '7'],
      ['gte', '8000000000000000', (s: string) => s >= '8000000000000000'],
      ['lt', '00ff', (s: string) => s < '00ff'],
      ['lte', 'F', (s: string) => s <= 'F'],
    ] as const) {
      expect([op, value, await count([{ field: 'span_id', op, value }])]).toEqual([op, value, matching((r) => keep(r.span_id))]);
    }
    // As UUIDs TRACES[1] sorts before TRACES[0]; as text after.
    expect(await count([{ field: 'trace_id', op: 'gt', value: TRACES[0] }])).toBe(matching((r) => r.trace_id > TRACES[0]));
  });

  test('a measure filter on an id (the -If combinator) follows the same rules', async () => {
    const result = await run({
      from: 'generation.completed',
      measures: [
        { as: 'one', agg: 'count', filter: { field: 'span_id', op: 'eq', value: '7fffffffffffffff' } },
        { as: 'none', agg: 'count', filter: { field: 'span_id', op: 'eq', value: '7FFFFFFFFFFFFFFF' } },
        { as: 'all', agg: 'count', filter: { field: 'trace_id', op: 'neq', value: 'x' } },
      ],
    });
    expect(result.rows).toEqual([{ one: 1, none: 0, all: rows.length }]);
  });
});
