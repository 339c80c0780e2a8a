/**
 * traceKeyAfter (trace-key-after.ts): paging a table sorted by (tenant_id, project_id, trace_id).
 * It must select exactly the keys after the cursor — compared here with the same order computed in
 * JS, for cursors on every boundary (inside a project, at a project's last key, at a tenant's last
 * key, before everything, after everything) — and prune the primary key, which the tuple comparison
 * it replaces does not (EXPLAIN indexes = 1, both forms, one part of many granules).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openClickHouse, type ClickHouseStore } from '../../../src/platform/clickhouse/clickhouse.js';
import { param, raw, sql, type Fragment } from '../../../src/platform/clickhouse/sql/fragment.js';
import { traceKeyAfter, type TraceKeyCursor } from '../../../src/platform/clickhouse/sql/trace-key-after.js';
import { tempDataDir } from '../../helpers/temp-dir.js';

const TENANTS = ['t1', 't2', 't3'];
const PROJECTS = ['pa', 'pb'];
const TRACES = 500;
/** 3,000 keys in one part, granules of 64 rows: 47 granules. */
const GRANULE = 64;

const keys: TraceKeyCursor[] = [];
for (const tenant_id of TENANTS)
  for (const project_id of PROJECTS)
    for (let i = 0; i < TRACES; i++) keys.push({ tenant_id, project_id, trace_id: String(i).padStart(6, '0') });

const order = (a: TraceKeyCursor, b: TraceKeyCursor) =>
  a.tenant_id.localeCompare(b.tenant_id) || a.project_id.localeCompare(b.project_id) || a.trace_id.localeCompare(b.trace_id);
const after = (c: TraceKeyCursor) => keys.filter((k) => order(k, c) > 0);

let store: ClickHouseStore;
const table = () => store.table('key_pages');

beforeAll(async () => {
  store = await openClickHouse({ url: null, user: 'default', password: '', database: 'trace_key_after_test', cluster: null, dataDir: tempDataDir() });
  await store.command(raw(`CREATE DATABASE IF NOT EXISTS trace_key_after_test`), 'system');
  await store.command(
    raw(`CREATE TABLE ${table()} (tenant_id String, project_id String, trace_id String) ENGINE = MergeTree
         ORDER BY (tenant_id, project_id, trace_id) SETTINGS index_granularity = ${GRANULE}`),
    'system',
  );
  await store.insert(table(), keys, 'system');
});
afterAll(async () => {
  await store?.close();
});

async function page(condition: Fragment): Promise<TraceKeyCursor[]> {
  return store.read<TraceKeyCursor>(sql`SELECT tenant_id, project_id, trace_id FROM ${raw(table())} WHERE ${condition} ORDER BY tenant_id, project_id, trace_id`, { lane: 'system' });
}

async function granules(condition: Fragment): Promise<{ selected: number; total: number }> {
  const lines = (await store.read<{ explain: string }>(sql`EXPLAIN indexes = 1 SELECT trace_id FROM ${raw(table())} WHERE ${condition}`, { lane: 'system' })).map((r) => r.explain.trim());
  const primaryKey = lines.findIndex((l) => l === 'PrimaryKey');
  const [selected, total] = /Granules: (\d+)\/(\d+)/.exec(lines.slice(primaryKey).find((l) => l.startsWith('Granules:')) ?? '')!.slice(1).map(Number);
  return { selected, total };
}

it('selects exactly the keys after the cursor, on every boundary', async () => {
  const cursors: TraceKeyCursor[] = [
    { tenant_id: '', project_id: '', trace_id: '' },
    { tenant_id: 't1', project_id: 'pa', trace_id: '000250' },
    { tenant_id: 't1', project_id: 'pa', trace_id: '000499' },
    { tenant_id: 't1', project_id: 'pb', trace_id: '000499' },
    { tenant_id: 't2', project_id: 'pb', trace_id: '000007' },
    { tenant_id: 't2', project_id: 'pz', trace_id: '' },
    { tenant_id: 't3', project_id: 'pb', trace_id: '000499' },
  ];
  for (const cursor of cursors) expect(await page(traceKeyAfter(cursor)), JSON.stringify(cursor)).toEqual(after(cursor));
});

it('prunes the primary key where the tuple comparison reads every granule', async () => {
  const late: TraceKeyCursor = { tenant_id: 't3', project_id: 'pb', trace_id: '000100' };
  const tuple = sql`(tenant_id, project_id, trace_id) > (${param('String', late.tenant_id)}, ${param('String', late.project_id)}, ${param('String', late.trace_id)})`;
  expect(await page(tuple)).toEqual(after(late));
  const spelled = await granules(traceKeyAfter(late));
  const compared = await granules(tuple);
  // 400 keys after the cursor: 7 granules of 64, plus the one the cursor falls in.
  expect(spelled.selected).toBeLessThanOrEqual(8);
  expect(compared.selected).toBe(compared.total);
});
