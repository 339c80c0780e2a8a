/**
 * The settings only a ClickHouse server applies, read back from its query log (the `server` test
 * project): each lane's `priority` and, with workloads created on the server (CREATE WORKLOAD) and
 * named in CLICKHOUSE_WORKLOAD_*, its `workload`; the insert settings every insert carries;
 * `readonly` on every read; and the query time limit, which the server enforces and Lookout turns
 * into a timeout (the HTTP 504 of the query route is analytics-query-http/timeout.test.ts, also run
 * in this project).
 */
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QueryTimeoutError } from '../../../src/platform/http/errors.js';
import { param, raw, sql } from '../../../src/platform/clickhouse/sql/fragment.js';
import { tenantGuard } from '../../../src/platform/clickhouse/sql/tenant-guard.js';
import { INSERT_SETTINGS } from '../../../src/platform/clickhouse/clickhouse.js';
import { removeDir, startTestService, type TestService } from '../../helpers/service.js';
import { tempDataDir } from '../../helpers/temp-dir.js';
import { sendRuns } from '../../helpers/otlp-json.js';
import { waitFor } from '../ingest/otlp-client.js';

// Workloads are server-wide: names of this file's own, under one shared root.
const tag = crypto.randomBytes(4).toString('hex');
const WORKLOADS = { ingest: `lk_ingest_${tag}`, interactive: `lk_interactive_${tag}`, analytics: `lk_analytics_${tag}` };

let svc: TestService;
let dataDir: string;
let projectId: string;

type LogRow = { query_kind: string; query: string; workload: string; priority: string; readonly: string; partitions: string; exception_code: number; max_execution_time: string };

/** This service's finished (or failed) statements in the server's query log. */
async function logged(): Promise<LogRow[]> {
  const { ch } = svc.service.deps;
  await ch.client.command({ query: 'SYSTEM FLUSH LOGS' });
  const result = await ch.client.query({
    query: `SELECT query_kind, query, Settings['workload'] AS workload, Settings['priority'] AS priority, Settings['readonly'] AS readonly,
                   Settings['throw_on_max_partitions_per_insert_block'] AS partitions, Settings['max_execution_time'] AS max_execution_time, exception_code
            FROM system.query_log
            WHERE type IN ('QueryFinish', 'ExceptionWhileProcessing', 'ExceptionBeforeStart') AND has(databases, {db:String})
              AND is_initial_query AND http_user_agent != '' AND NOT (query ILIKE '%system.query_log%')`,
    query_params: { db: ch.database },
    format: 'JSONEachRow',
  });
  return result.json<LogRow>();
}

beforeAll(async () => {
  dataDir = tempDataDir();
  const admin = await startTestService({}, dataDir);
  const { ch } = admin.service.deps;
  await ch.client.command({ query: 'CREATE WORKLOAD IF NOT EXISTS all' });
  for (const name of Object.values(WORKLOADS)) await ch.client.command({ query: `CREATE WORKLOAD IF NOT EXISTS ${name} IN all` });
  await admin.stop();
  svc = await startTestService({
    CLICKHOUSE_WORKLOAD_INGEST: WORKLOADS.ingest,
    CLICKHOUSE_WORKLOAD_INTERACTIVE: WORKLOADS.interactive,
    CLICKHOUSE_WORKLOAD_ANALYTICS: WORKLOADS.analytics,
    QUERY_TIMEOUT_SECONDS: '2',
  }, dataDir);
  projectId = (await svc.newProject('settings')).id;
});

afterAll(async () => {
  const { ch } = svc?.service.deps ?? {};
  for (const name of Object.values(WORKLOADS)) await ch?.client.command({ query: `DROP WORKLOAD IF EXISTS ${name}` });
  await svc?.stop();
  if (dataDir) removeDir(dataDir);
});

describe('server-only settings', () => {
  it('runs every lane\'s statements with its priority and workload, inserts with the insert settings, reads read-only', async () => {
    const key = await svc.newKey('ingest');
    const [traceId] = await sendRuns(svc.url, key, projectId, [{ start: new Date(), agent: 'settings', generations: [{ model: 'gpt-4o', input: 10, output: 5 }], tools: [{ name: 'search' }] }]);
    await waitFor(async () => ((await svc.call('GET', `/traces/${traceId}`)).status === 200 ? true : undefined), 30_000, 'the trace settled');
    const now = Date.now();
    const query = await svc.call('POST', `/projects/${projectId}/analytics/query`, {
      body: { from: 'generation.completed', start: new Date(now - 86_400_000).toISOString().slice(0, 19) + 'Z', end_exclusive: new Date(now + 86_400_000).toISOString().slice(0, 19) + 'Z', measures: [{ as: 'n', agg: 'count' }] },
    });
    expect(query.status).toBe(200);

    const rows = await waitFor(async () => {
      const list = await logged();
      const has = (w: string) => list.some((r) => r.workload === w);
      return has(WORKLOADS.ingest) && has(WORKLOADS.interactive) && has(WORKLOADS.analytics) ? list : undefined;
    }, 30_000, 'every lane in the query log');
    const inserts = rows.filter((r) => r.query_kind === 'Insert');
    const ingestInserts = inserts.filter((r) => r.workload === WORKLOADS.ingest);
    expect(ingestInserts.length).toBeGreaterThan(0);
    for (const r of ingestInserts) expect(r.priority).toBe('1');
    // Every insert of every lane carries the insert settings (the server client's defaults).
    for (const r of inserts) expect(r.partitions, r.query.slice(0, 120)).toBe(String(INSERT_SETTINGS.throw_on_max_partitions_per_insert_block));

    const selects = rows.filter((r) => r.query_kind === 'Select');
    const byWorkload = (w: string) => selects.filter((r) => r.workload === w);
    expect(byWorkload(WORKLOADS.interactive).length).toBeGreaterThan(0);
    for (const r of byWorkload(WORKLOADS.interactive)) expect([r.priority, r.readonly]).toEqual(['2', '2']);
    expect(byWorkload(WORKLOADS.analytics).length).toBeGreaterThan(0);
    for (const r of byWorkload(WORKLOADS.analytics)) {
      expect([r.priority, r.readonly]).toEqual(['3', '2']);
      expect(Number(r.max_execution_time)).toBeGreaterThan(0);
      expect(Number(r.max_execution_time)).toBeLessThanOrEqual(2);
    }
    for (const r of byWorkload(WORKLOADS.ingest)) expect([r.priority, r.readonly]).toEqual(['1', '2']);
    // The system lane (migrations, recovery) has no workload configured here: priority alone.
    expect(selects.filter((r) => r.priority === '2' && r.workload === '').length).toBeGreaterThan(0);
  });

  it('refuses a write sent through a read on the server (readonly = 2)', async () => {
    const { ch } = svc.service.deps;
    const before = await ch.client.query({ query: `SELECT count() AS n FROM ${ch.table('spans')}`, format: 'JSONEachRow' });
    const count = Number((await before.json<{ n: string }>())[0].n);
    expect(count).toBeGreaterThan(0);
    await expect(ch.read(sql`INSERT INTO ${raw(ch.table('spans'))} SELECT * FROM ${raw(ch.table('spans'))}`, { lane: 'ingest' })).rejects.toThrow(/readonly/i);
    const after = await ch.client.query({ query: `SELECT count() AS n FROM ${ch.table('spans')}`, format: 'JSONEachRow' });
    expect(Number((await after.json<{ n: string }>())[0].n)).toBe(count);
  });

  it('stops a read at the time limit on the server, as a timeout', async () => {
    const { ch } = svc.service.deps;
    // A statement of a made-up tenant that sleeps in the engine, one row per block, for 10 s.
    const scope = { tenantId: 'slow-tenant', projectId: 'slow-project' };
    const slow = sql`SELECT count() AS n, sum(s) AS slept FROM (SELECT sleepEachRow(0.1) AS s, ${param('String', scope.tenantId)} AS tenant_id, ${param('String', scope.projectId)} AS project_id FROM numbers(100)) WHERE ${tenantGuard(scope)}`;
    const started = Date.now();
    await expect(ch.read(slow, { lane: 'analytics', scope, settings: { function_sleep_max_microseconds_per_block: 20_000_000, max_block_size: 1 } })).rejects.toBeInstanceOf(QueryTimeoutError);
    // Generous: the server stops it near the 2 s limit, far before its 10 s of sleeping.
    expect(Date.now() - started).toBeLessThan(9_000);
    // The server stopped it (TIMEOUT_EXCEEDED, 159) under the limit the runner set, in the analytics workload.
    await ch.client.command({ query: 'SYSTEM FLUSH LOGS' });
    const failed = await ch.client.query({
      query: `SELECT exception_code, Settings['max_execution_time'] AS limit FROM system.query_log
              WHERE type = 'ExceptionWhileProcessing' AND Settings['workload'] = {w:String} AND position(query, 'sleepEachRow') > 0`,
      query_params: { w: WORKLOADS.analytics },
      format: 'JSONEachRow',
    });
    const [row] = await failed.json<{ exception_code: number; limit: string }>();
    expect(row.exception_code).toBe(159);
    expect(Number(row.limit)).toBeGreaterThan(0);
    expect(Number(row.limit)).toBeLessThanOrEqual(2);
  });
});
