/**
 * The compiler against the engine itself: the catalog matches the live table columns, every golden
 * query runs, the time limit answers 504, integers past 2^53 come back as numeric strings, and
 * hostile values travel as data.
 */
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { openClickHouse, type ClickHouseStore } from '../../../src/platform/clickhouse/clickhouse.js';
import { migrateClickHouse } from '../../../src/platform/migrations.js';
import { runAnalyticsQuery } from '../../../src/analytics/query/run.js';
import { QueryTimeoutError } from '../../../src/platform/http/errors.js';
import { allEvents, COMMON_DIMENSIONS } from '../../../src/analytics/catalog.js';
import { tempDataDir } from '../../helpers/temp-dir.js';
import { GOLDEN_CASES, GOLDEN_PROJECT, GOLDEN_TENANT } from '../../golden/analytics-query/cases.js';
import { chTime, DAY, insertGenerations, insertTools, isoSecond } from './seed.js';
import { spanIdFor, traceIdFor } from '../../helpers/event-ids.js';

let store: ClickHouseStore;
let dataDir: string;
const NOW = Date.now();
const window = { start: isoSecond(NOW - 7 * DAY), end_exclusive: isoSecond(NOW + DAY) };

beforeAll(async () => {
  dataDir = tempDataDir('lookout-aq-');
  const binding = process.env.CLICKHOUSE_PARAM_BINDING;
  store = await openClickHouse({ url: null, user: '', password: '', database: 'lookout', cluster: null, dataDir, paramBinding: binding === 'server' || binding === 'literal' ? binding : null });
  await migrateClickHouse(store, 'clickhouse');
});

afterAll(async () => {
  await store?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

describe('catalog and DDL', () => {
  test('every catalog field is a column of its table with a matching type', async () => {
    const result = await store.client.query({
      query: `SELECT table, name, type FROM system.columns WHERE database = {db:String}`,
      query_params: { db: store.database },
      format: 'JSONEachRow',
    });
    const columns = new Map((await result.json<{ table: string; name: string; type: string }>()).map((c) => [`${c.table}.${c.name}`, c.type]));
    for (const event of allEvents()) {
      for (const column of ['tenant_id', 'project_id', 'timestamp']) expect(columns.has(`${event.table}.${column}`), `${event.table}.${column}`).toBe(true);
      if (event.discriminator) expect(columns.get(`${event.table}.${event.discriminator.column}`)).toMatch(/String/);
      // A dimension is text, or an id stored as an id (clickhouse/009) that the compiler reads as text.
      const STORED: Record<string, RegExp> = { uuid: /^UUID$/, hex64: /^UInt64$/ };
      for (const d of event.dimensions) expect(columns.get(`${event.table}.${d.column}`), `${event.name}.${d.field}`).toMatch(d.stored ? STORED[d.stored] : /^(LowCardinality\()?String\)?$/);
      for (const m of event.measures) {
        const type = columns.get(`${event.table}.${m.column}`);
        expect(type, `${event.name}.${m.field}`).toMatch(m.storage === 'integer' ? /^U?Int(8|16|32|64)$/ : /^(Nullable\()?Float64\)?$/);
        expect(type!.startsWith('Nullable('), `${event.name}.${m.field} nullability`).toBe(m.nullable);
      }
      for (const d of COMMON_DIMENSIONS) expect(event.dimensions).toContainEqual(d);
    }
    // The other direction: a column the catalog does not expose is a decision written down here, so
    // a new DDL column cannot silently stay out of (or slip into) the DSL.
    // analytics_days, content_days: each row's retention, which its TTL reads (clickhouse/015), on every table.
    const RETENTION = ['analytics_days', 'content_days'];
    const notExposed: Record<string, string[]> = {
      // trace_id: not a query dimension; cost bookkeeping is read by trace_cost, not the DSL.
      // generations, generations_with_provider, tool_calls: the window view's coverage counts (005), not queryable fields.
      // first_processing: a column of 006 that nothing writes or reads any more (its default, 0).
      event_trace_processed: ['trace_id', 'has_root', 'estimated_cost_basis', 'cost_priced_tokens', 'cost_unpriced_models', 'cost_priced_at', 'cost_model_costs', 'models', 'processed_at', 'generations', 'generations_with_provider', 'tool_calls', 'first_processing', ...RETENTION],
      // Neither provider nor cached tokens are queryable fields of generation.completed.
      // cache_write_input_tokens: cost bookkeeping (004_cache_write_tokens.sql), read by generation_cost / trace_cost only.
      event_generation_completed: ['provider', 'cached_input_tokens', 'cache_write_input_tokens', 'inserted_at', ...RETENTION],
      event_tool_called: ['inserted_at', ...RETENTION],
      event_span_errored: ['inserted_at', ...RETENTION],
      // name is the discriminator; issue.* events carry "only the fields every event has".
      event_issue: ['name', 'issue_id', 'event_id', 'inserted_at', ...RETENTION],
    };
    for (const [table, hidden] of Object.entries(notExposed)) {
      const exposed = new Set(allEvents().filter((e) => e.table === table).flatMap((e) => [...e.dimensions, ...e.measures].map((f) => f.column)));
      const actual = [...columns.keys()].filter((k) => k.startsWith(`${table}.`)).map((k) => k.slice(table.length + 1));
      const rest = actual.filter((c) => !exposed.has(c) && !['tenant_id', 'project_id', 'timestamp'].includes(c));
      expect(rest.sort(), table).toEqual([...hidden].sort());
    }
  });
});

describe('golden queries', () => {
  for (const [name, body] of Object.entries(GOLDEN_CASES)) {
    test(`${name} runs on ClickHouse`, async () => {
      const result = await runAnalyticsQuery({ ch: store, config: { queryTimeoutSeconds: 15 } }, GOLDEN_TENANT, GOLDEN_PROJECT, body);
      expect(Array.isArray(result.rows)).toBe(true);
    });
  }
});

describe('large integers', () => {
  test('sums past 2^53 are exact numeric strings; small integers stay numbers', async () => {
    const big = 2n ** 62n;
    const base = { tenant_id: 'big', project_id: 'big', ts: NOW - DAY, model: 'm', trace_id: traceIdFor('t'), duration_ms: 1, output_tokens: 1, tps: null, error: 0 as const };
    await insertGenerations(store, [0, 1, 2].map((i) => ({ ...base, span_id: spanIdFor(`s${i}`), input_tokens: big.toString() })));
    const result = await runAnalyticsQuery({ ch: store, config: { queryTimeoutSeconds: 15 } }, 'big', 'big', {
      from: 'generation.completed',
      ...window,
      measures: [
        { as: 'calls', agg: 'count' },
        { as: 'input', agg: 'sum', field: 'input_tokens' },
        { as: 'max_input', agg: 'max', field: 'input_tokens' },
        { as: 'output', agg: 'sum', field: 'output_tokens' },
      ],
    });
    expect(result.rows).toEqual([{ calls: 3, input: (3n * big).toString(), max_input: big.toString(), output: 3 }]);
  });
});

describe('time limit', () => {
  test('a query past the limit fails with query_timeout (504)', async () => {
    await store.client.command({
      query: `INSERT INTO ${store.table('event_generation_completed')} (tenant_id, project_id, timestamp, model, trace_id, span_id, duration_ms, input_tokens)
        SELECT 'slow', 'slow', toDateTime64({ts:String}, 3, 'UTC'), toString(number % 97), toUUID(concat('00000000-0000-5000-8000-', leftPad(toString(number % 50000), 12, '0'))), number + 1, number % 1000, number
        FROM numbers(2000000)`,
      query_params: { ts: chTime(NOW - DAY) },
    });
    const body = { from: 'generation.completed', ...window, measures: [{ as: 'p99', agg: 'p99', field: 'duration_ms' }, { as: 'traces', agg: 'uniqExact', field: 'trace_id' }], group_by: [{ field: 'model' }] };
    const error = await runAnalyticsQuery({ ch: store, config: { queryTimeoutSeconds: 0.001 } }, 'slow', 'slow', body).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(QueryTimeoutError);
    expect(error).toMatchObject({ status: 504, code: 'query_timeout' });
    // The same query under the normal limit answers.
    const ok = await runAnalyticsQuery({ ch: store, config: { queryTimeoutSeconds: 15 } }, 'slow', 'slow', body);
    expect(ok.rows).toHaveLength(97);
  });
});

describe('hostile values are data', () => {
  const hostile = [
    "x' OR 1=1 --",
    "'); DROP TABLE lookout.event_tool_called; --",
    'back\\slash\\',
    '\\\'',
    'semi;colon;',
    'nul\u0000byte',
    'tab\tnew\nline\r',
    '雪だるま ☃ \u{1F600} \u202e',
    '{p0:String}',
    '`backtick`',
    '"double"',
    '',
  ];

  test('each value matches exactly the row that holds it, and the table is still there', async () => {
    // Which binding path this run exercises (vitest projects "default" and "server-params").
    expect(store.binding).toBe(process.env.CLICKHOUSE_PARAM_BINDING === 'server' ? 'server' : 'literal');
    const rows = hostile.map((tool, i) => ({ tenant_id: 'hostile', project_id: 'hostile', ts: NOW - DAY, tool, agent_name: tool, trace_id: traceIdFor('t'), span_id: spanIdFor(`s${i}`), duration_ms: 1, output_tokens: 1, error: 0 as const }));
    await insertTools(store, rows);
    const run = (body: Record<string, unknown>) => runAnalyticsQuery({ ch: store, config: { queryTimeoutSeconds: 15 } }, 'hostile', 'hostile', { from: 'tool.called', ...window, ...body });
    for (const value of hostile) {
      const result = await run({ measures: [{ as: 'n', agg: 'count' }], filters: [{ field: 'tool', op: 'eq', value }] });
      expect(result.rows, JSON.stringify(value)).toEqual([{ n: 1 }]);
    }
    const all = await run({ measures: [{ as: 'n', agg: 'count' }], filters: [{ field: 'agent_name', op: 'in', value: hostile }] });
    expect(all.rows).toEqual([{ n: hostile.length }]);
    const grouped = await run({ measures: [{ as: 'n', agg: 'count' }], group_by: [{ field: 'tool' }] });
    expect(grouped.rows.map((r) => r.tool).sort()).toEqual([...hostile].sort());
    const huge = await run({ measures: [{ as: 'n', agg: 'count' }], filters: [{ field: 'duration_ms', op: 'lt', value: 1.7976931348623157e308 }, { field: 'output_tokens', op: 'gt', value: -1e300 }] });
    expect(huge.rows).toEqual([{ n: hostile.length }]);
    const exists = await store.client.query({ query: `EXISTS TABLE ${store.table('event_tool_called')}`, format: 'JSONEachRow' });
    expect(await exists.json()).toEqual([{ result: 1 }]);
  });
});
