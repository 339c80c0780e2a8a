/**
 * The SQL layer's runner on chdb: a scoped read carries its tenant's guard on every table it names
 * (HogQL's printer rule, checked without parsing SQL), reads are read-only on every lane, values
 * combined from separately built fragments keep their own names, raw-byte reads and pre-encoded
 * JSON-line inserts (the compute pool's paths) go through the same checks and lanes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openClickHouse, type ClickHouseStore } from '../../../src/platform/clickhouse/clickhouse.js';
import { fromText, param, raw, sql } from '../../../src/platform/clickhouse/sql/fragment.js';
import { StatementRunner } from '../../../src/platform/clickhouse/sql/statement-runner.js';
import { scopedTable, tenantGuard } from '../../../src/platform/clickhouse/sql/tenant-guard.js';
import { tempDataDir } from '../../helpers/temp-dir.js';

let store: ClickHouseStore;
const A = { tenantId: 'tenant-a', projectId: 'p' };
const B = { tenantId: 'tenant-b', projectId: 'p' };

beforeAll(async () => {
  store = await openClickHouse({ url: null, user: 'default', password: '', database: 'runner_test', cluster: null, dataDir: tempDataDir() });
  await store.command(raw(`CREATE TABLE ${store.table('rows')} (tenant_id String, project_id String, v String) ENGINE = MergeTree ORDER BY tenant_id`), 'system');
  await store.insert(store.table('rows'), [{ tenant_id: 'tenant-a', project_id: 'p', v: 'a' }, { tenant_id: 'tenant-b', project_id: 'p', v: 'b' }], 'system');
});
afterAll(async () => {
  await store?.close();
});

const rows = () => scopedTable(store.table('rows'));

describe('statement runner', () => {
  it('answers a guarded read with the tenant\'s rows only', async () => {
    expect(await store.read(sql`SELECT v FROM ${rows()} WHERE ${tenantGuard(A)}`, { lane: 'analytics', scope: A })).toEqual([{ v: 'a' }]);
  });

  it('refuses a scoped read without a guard, with another tenant\'s guard, or with fewer guards than tables', async () => {
    await expect(store.read(sql`SELECT v FROM ${rows()}`, { lane: 'analytics', scope: A })).rejects.toThrow(/guard/);
    await expect(store.read(sql`SELECT v FROM ${rows()} WHERE ${tenantGuard(B)}`, { lane: 'analytics', scope: A })).rejects.toThrow(/guard/);
    await expect(
      store.read(sql`SELECT v FROM ${rows()} WHERE ${tenantGuard(A)} UNION ALL SELECT v FROM ${rows()}`, { lane: 'analytics', scope: A }),
    ).rejects.toThrow(/guard/);
    await expect(store.read(sql`SELECT 1 AS x`, { lane: 'analytics' })).rejects.toThrow(/scope/);
  });

  it('runs every read read-only, whatever its lane', async () => {
    for (const lane of ['ingest', 'system'] as const) {
      await expect(store.read(raw(`INSERT INTO ${store.table('rows')} SELECT 'x', 'p', 'x'`), { lane })).rejects.toThrow(/readonly|READONLY/i);
    }
    const [{ n }] = await store.read<{ n: number }>(raw(`SELECT count() AS n FROM ${store.table('rows')}`), { lane: 'system' });
    expect(Number(n)).toBe(2);
  });

  it('keeps the values of fragments built apart, even when their texts used the same names', async () => {
    const left = fromText('{v:String}', { v: 'one' });
    const right = fromText('{v:String}', { v: 'two' });
    expect(await store.read(sql`SELECT ${left} AS l, ${right} AS r`, { lane: 'system' })).toEqual([{ l: 'one', r: 'two' }]);
  });

  it('returns a guarded read as raw JSONEachRow bytes, refusing it without the guard like read', async () => {
    const bytes = await store.readBytes(sql`SELECT v FROM ${rows()} WHERE ${tenantGuard(A)}`, { lane: 'analytics', scope: A });
    expect(Buffer.isBuffer(bytes)).toBe(true);
    expect(bytes.toString('utf8')).toBe('{"v":"a"}\n');
    await expect(store.readBytes(sql`SELECT v FROM ${rows()}`, { lane: 'analytics', scope: A })).rejects.toThrow(/guard/);
  });

  it('inserts pre-encoded JSON lines on an ingest lane, and reads a statement longer than the default query size', async () => {
    await store.command(raw(`CREATE TABLE ${store.table('lines')} (tenant_id String, project_id String, v String) ENGINE = MergeTree ORDER BY v`), 'system');
    const values = Array.from({ length: 20_000 }, (_, i) => `value-${String(i).padStart(8, '0')}`);
    await store.insertLines(store.table('lines'), values.map((v) => JSON.stringify({ tenant_id: 'tenant-a', project_id: 'p', v })), 'ingest');
    await store.insertLines(store.table('lines'), [], 'ingest');
    // Literal binding inlines the 20,000 values: over 300 KB of SQL, past ClickHouse's 256 KiB default.
    const [{ n }] = await store.read<{ n: number }>(
      sql`SELECT count() AS n FROM ${raw(store.table('lines'))} WHERE v IN ${param('Array(String)', values)}`,
      { lane: 'ingest' },
    );
    expect(Number(n)).toBe(20_000);
  });

  it('inserts a body given as byte parts of whole lines (the ingest writer\'s slices) as one statement, and refuses a bad line', async () => {
    await store.command(raw(`CREATE TABLE ${store.table('parts')} (v String, n UInt32) ENGINE = MergeTree ORDER BY v`), 'system');
    const line = (v: string, n: number) => Buffer.from(`${JSON.stringify({ v, n })}\n`);
    const body = Buffer.concat([line('ü-1', 1), line('工具', 2), line('c\nd', 3)]);
    await store.insertBody(store.table('parts'), [body.subarray(0, line('ü-1', 1).length), body.subarray(line('ü-1', 1).length), line('e', 4)], 'ingest');
    await store.insertBody(store.table('parts'), [], 'ingest');
    const stored = await store.read<{ v: string; n: number }>(sql`SELECT v, n FROM ${raw(store.table('parts'))} ORDER BY n`, { lane: 'ingest' });
    expect(stored).toEqual([{ v: 'ü-1', n: 1 }, { v: '工具', n: 2 }, { v: 'c\nd', n: 3 }, { v: 'e', n: 4 }]);
    // Nothing acknowledged that was not written: a malformed line fails the whole insert.
    await expect(store.insertBody(store.table('parts'), [line('f', 5), Buffer.from('{"v": "g", "n": \n')], 'ingest')).rejects.toThrow();
    const [{ c }] = await store.read<{ c: number }>(sql`SELECT count() AS c FROM ${raw(store.table('parts'))}`, { lane: 'ingest' });
    expect(Number(c)).toBe(4);
  });

  it('streams the parts as the request body through the driver where no raw insert exists (a ClickHouse server)', async () => {
    await store.command(raw(`CREATE TABLE ${store.table('streamed')} (v String, n UInt32) ENGINE = MergeTree ORDER BY v`), 'system');
    const client = store.client;
    const runner = new StatementRunner({ clients: { ingest: [client], system: [client], analytics: [client], interactive: [client] }, binding: 'literal', server: false, gates: store.gates, queryTimeoutSeconds: 15 });
    const line = (v: string, n: number) => Buffer.from(`${JSON.stringify({ v, n })}\n`);
    await runner.insertBody(store.table('streamed'), [line('ä', 1), Buffer.concat([line('b', 2), line('工', 3)]).subarray(0, line('b', 2).length), line('工', 3)], 'ingest');
    const stored = await store.read<{ v: string; n: number }>(sql`SELECT v, n FROM ${raw(store.table('streamed'))} ORDER BY n`, { lane: 'ingest' });
    expect(stored).toEqual([{ v: 'ä', n: 1 }, { v: 'b', n: 2 }, { v: '工', n: 3 }]);
  });
});
