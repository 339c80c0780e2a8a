/**
 * The one read of trace.processed (processed-traces.ts): the rows it selects are the newest processing
 * of each trace key, computed here independently — for traces processed once, re-processed ones (late
 * spans), re-processings that move a run across the window edge or into another month's partition,
 * and trace ids shared with another project or tenant. Each row goes in its own insert (its own part),
 * as settle rounds write them; merges are stopped so nothing is collapsed before the read.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrationDirs } from '../../../src/app/service.js';
import { openClickHouse, type ClickHouseStore } from '../../../src/platform/clickhouse/clickhouse.js';
import { param, raw, sql, type Fragment } from '../../../src/platform/clickhouse/sql/fragment.js';
import { processedTraces } from '../../../src/platform/clickhouse/sql/processed-traces.js';
import { scopedTable, tenantGuard } from '../../../src/platform/clickhouse/sql/tenant-guard.js';
import { migrateClickHouse } from '../../../src/platform/migrations.js';
import { tempDataDir } from '../../helpers/temp-dir.js';

const A = { tenantId: 'tenant-a', projectId: 'p1' };

interface Row {
  tenant: string;
  project: string;
  id: string;
  at: string;
  tokens: number;
  agent: string;
  processedAt: string;
}

const row = (id: string, at: string, tokens: number, processedAt: string, agent = 'a', tenant = A.tenantId, project = A.projectId): Row => ({
  tenant, project, id, at, tokens, agent, processedAt,
});

// In insert order.
const ROWS: Row[] = [
  // Processed once.
  row('once-in', '2026-11-10 12:00:00.000', 1, '2026-11-10 12:01:00.000'),
  row('once-edge-start', '2026-11-01 00:00:00.000', 2, '2026-11-01 00:01:00.000'),
  row('once-edge-end', '2026-11-20 00:00:00.000', 4, '2026-11-20 00:01:00.000'),
  row('once-october', '2026-10-31 23:59:59.999', 8, '2026-11-01 00:01:00.000'),
  // Re-processed in place: the newer row's figures count.
  row('re-same', '2026-11-05 10:00:00.000', 16, '2026-11-05 10:01:00.000', 'old-agent'),
  row('re-same', '2026-11-05 10:00:00.000', 32, '2026-11-05 11:00:00.000', 'new-agent'),
  // Re-processed out of the window across the month edge (a late root moved the start back).
  row('re-out', '2026-11-01 00:00:10.000', 64, '2026-11-01 00:02:00.000'),
  row('re-out', '2026-10-31 23:00:00.000', 128, '2026-11-01 01:00:00.000'),
  // Re-processed into the window from before it (another month's partition).
  row('re-in', '2026-10-30 08:00:00.000', 256, '2026-10-30 08:01:00.000'),
  row('re-in', '2026-11-02 08:00:00.000', 512, '2026-11-02 09:00:00.000'),
  // Re-processed twice, the last time past the end edge.
  row('re-twice', '2026-11-19 23:00:00.000', 1024, '2026-11-19 23:01:00.000'),
  row('re-twice', '2026-11-19 23:30:00.000', 2048, '2026-11-19 23:31:00.000'),
  row('re-twice', '2026-11-20 00:00:00.000', 4096, '2026-11-20 00:10:00.000'),
  // More of both, away from the edges.
  row('old-once', '2026-11-08 00:00:00.000', 8192, '2026-11-08 00:01:00.000'),
  row('old-twice', '2026-11-09 00:00:00.000', 16384, '2026-11-09 00:01:00.000'),
  row('old-twice', '2026-11-09 00:00:00.000', 32768, '2026-11-09 01:00:00.000'),
  // Re-processed with a later version but the same timestamp.
  row('old-then-new', '2026-11-11 00:00:00.000', 65536, '2026-11-11 00:01:00.000'),
  row('old-then-new', '2026-11-11 00:00:00.000', 131072, '2026-11-11 02:00:00.000'),
  // Same trace ids in another project and another tenant, re-processed there only: they must neither
  // count here nor change how this project's rows are read.
  row('once-in', '2026-11-10 12:00:00.000', 1 << 20, '2026-11-10 12:01:00.000', 'x', A.tenantId, 'p2'),
  row('once-in', '2026-11-10 12:00:00.000', 1 << 21, '2026-11-10 13:01:00.000', 'x', A.tenantId, 'p2'),
  row('re-same', '2026-11-05 10:00:00.000', 1 << 22, '2026-11-05 10:01:00.000', 'x', 'tenant-b', A.projectId),
  row('re-same', '2026-11-05 10:00:00.000', 1 << 23, '2026-11-05 12:01:00.000', 'x', 'tenant-b', A.projectId),
];

/** The newest row per key of `scope`, selected by `keep`: what FINAL then WHERE means, computed here. */
function expected(scope: { tenantId: string; projectId?: string }, keep: (r: Row) => boolean): { id: string; tokens: number; agent: string }[] {
  const newest = new Map<string, Row>();
  for (const r of ROWS) {
    if (r.tenant !== scope.tenantId || (scope.projectId && r.project !== scope.projectId)) continue;
    const key = `${r.project}/${r.id}`;
    const seen = newest.get(key);
    if (!seen || r.processedAt >= seen.processedAt) newest.set(key, r);
  }
  return [...newest.values()].filter(keep).map((r) => ({ id: r.id, tokens: r.tokens, agent: r.agent })).sort((a, b) => a.id.localeCompare(b.id) || a.tokens - b.tokens);
}

let store: ClickHouseStore;
const table = () => store.table('event_trace_processed');

beforeAll(async () => {
  store = await openClickHouse({ url: null, user: 'default', password: '', database: 'processed_traces_test', cluster: null, dataDir: tempDataDir() });
  await migrateClickHouse(store, migrationDirs.clickhouse);
  await store.command(raw(`SYSTEM STOP MERGES ${table()}`), 'system');
  for (const r of ROWS) {
    await store.insert(table(), [{
      tenant_id: r.tenant, project_id: r.project, timestamp: r.at, trace_id: r.id, agent_name: r.agent, input_tokens: r.tokens,
      total_tokens: r.tokens, processed_at: r.processedAt,
    }], 'ingest');
  }
});
afterAll(async () => {
  await store?.close();
});

type Got = { id: string; tokens: number; agent: string };

async function read(scope: { tenantId: string; projectId: string }, source: Fragment): Promise<Got[]> {
  const rows = await store.read<{ id: string; tokens: number | string; agent: string }>(
    sql`SELECT trace_id AS id, total_tokens AS tokens, agent_name AS agent FROM ${source} ORDER BY id, tokens`,
    { lane: 'analytics', scope },
  );
  return rows.map((r) => ({ id: r.id, tokens: Number(r.tokens), agent: r.agent }));
}

const at = (text: string) => param("DateTime64(3, 'UTC')", new Date(`${text.replace(' ', 'T')}Z`));

describe('processedTraces: the newest processing of each trace', () => {
  it('the test data holds versions in separate parts (the checks below could fail)', async () => {
    const [parts] = await store.read<{ parts: number | string; rows: number | string }>(
      sql`SELECT uniqExact(_part) AS parts, count() AS rows FROM ${scopedTable(table())} WHERE ${tenantGuard(A)}`,
      { lane: 'analytics', scope: A },
    );
    expect(Number(parts.parts)).toBeGreaterThan(10);
    expect(Number(parts.rows)).toBe(ROWS.filter((r) => r.tenant === A.tenantId && r.project === A.projectId).length);
  });

  const windows: [string, string][] = [
    ['2026-11-01 00:00:00.000', '2026-11-20 00:00:00.000'],
    ['2026-10-01 00:00:00.000', '2026-12-01 00:00:00.000'],
    ['2026-10-31 00:00:00.000', '2026-11-01 00:00:10.001'],
    ['2026-11-19 23:30:00.000', '2026-11-20 00:00:00.001'],
    ['2026-11-05 10:00:00.000', '2026-11-05 10:00:00.001'],
  ];
  for (const [start, end] of windows) {
    it(`window [${start}, ${end}): the newest row of each trace whose newest row is in it`, async () => {
      const where = sql`${tenantGuard(A)} AND timestamp >= ${at(start)} AND timestamp < ${at(end)}`;
      expect(await read(A, processedTraces(table(), where))).toEqual(expected(A, (r) => r.at >= start && r.at < end));
    });
  }

  it('a condition on a column a re-processing changed applies to the newest row only', async () => {
    const where = sql`${tenantGuard(A)} AND agent_name = 'old-agent'`;
    expect(await read(A, processedTraces(table(), where))).toEqual([]);
    const renamed = sql`${tenantGuard(A)} AND agent_name = 'new-agent'`;
    expect(await read(A, processedTraces(table(), renamed))).toEqual([{ id: 're-same', tokens: 32, agent: 'new-agent' }]);
  });

  it('a tenant-wide scope reads every project of the tenant, each key once', async () => {
    const tenant = { tenantId: A.tenantId };
    const got = await store.read<{ id: string; tokens: number | string }>(
      sql`SELECT trace_id AS id, total_tokens AS tokens FROM ${processedTraces(table(), tenantGuard(tenant))} ORDER BY id, tokens`,
      { lane: 'analytics', scope: tenant },
    );
    expect(got.map((r) => ({ id: r.id, tokens: Number(r.tokens) }))).toEqual(expected(tenant, () => true).map(({ id, tokens }) => ({ id, tokens })));
  });

  it('is refused without the caller’s guard on each of its tables (the runner counts them)', async () => {
    const other = { tenantId: 'tenant-b', projectId: A.projectId };
    await expect(read(A, processedTraces(table(), tenantGuard(other)))).rejects.toThrow(/guard/);
  });
});
