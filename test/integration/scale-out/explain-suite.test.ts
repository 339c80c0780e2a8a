import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/app/config.js';
import { migrationDirs, startService, type RunningService } from '../../../src/app/service.js';
import type { ClickHouseStore } from '../../../src/platform/clickhouse/clickhouse.js';
import { raw } from '../../../src/platform/clickhouse/sql/fragment.js';
import { migrateClickHouse, migratePostgres } from '../../../src/platform/migrations.js';
import { openPostgres, type PostgresStore } from '../../../src/platform/postgres/postgres.js';
import { GOLDEN_CASES } from '../../golden/analytics-query/cases.js';
import { sendRuns } from '../../helpers/otlp-json.js';
import { seedGenerations, seedTraces } from '../cost/seed.js';
import { REGISTRY_COMPLETE_STATE } from '../../../src/ingest/settle/stored-traces.js';
import { backfillLoggedProjects, LOGGED_PROJECTS_COMPLETE } from '../../../src/ingest/settle/logged-projects.js';
import { backfillStoredTraces, expireStoredTraces } from '../../../src/ingest/settle/stored-traces-jobs.js';
import { removeDir } from '../../helpers/service.js';
import { tempDataDir } from '../../helpers/temp-dir.js';
import { openClusterChdb, type CheckedStatement } from './cluster-chdb.js';

// Every statement Lookout sends must be valid on the Distributed tables of a
// cluster. A real Lookout (ingest writer, settler, traces API, preset views, analytics compiler,
// cost module, metrics, outbox relay) runs on chdb configured with a two-shard `remote_servers`
// cluster and the cluster layout of our migrations (Distributed tables over *_local tables); every
// SELECT it sends is EXPLAINed first, and any refused shape fails here.
const KEY = 'lk_explain_suite_bootstrap_0123456789';
let dataDir: string;
let pg: PostgresStore;
let cluster: { store: ClickHouseStore; checked: CheckedStatement[]; close(): Promise<void> };
let service: RunningService;

async function call(method: string, apiPath: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${service.url}/api${apiPath}`, {
    method,
    headers: { authorization: `Bearer ${KEY}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

/** Parameters that make each preset view cover the runs sent (as in analytics-views/http.test.ts). */
function viewParams(now: Date): Record<string, string> {
  const day = (d: number) => new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + d)).toISOString();
  const start = day(-2);
  const end = day(1);
  return {
    general: `hours=72&endExclusive=${end}&granularity=day`,
    base: `start=${start}&endExclusive=${end}&granularity=day`,
    window: `start=${start}&end_exclusive=${end}&granularity=day`,
    model_scorecard: `start=${start}&end=${new Date(Date.parse(end) - 1000).toISOString()}`,
    agent_scorecard: `start=${start}&endExclusive=${end}`,
    tool_aggregates: `start=${start}&endExclusive=${end}`,
    roi: 'granularity=month',
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  dataDir = tempDataDir('lookout-explain-');
  pg = await openPostgres({ databaseUrl: null, dataDir });
  cluster = await openClusterChdb(dataDir);
  // The Distributed layout without Keeper: plain MergeTree *_local tables (the Replicated ON CLUSTER
  // DDL is pinned as golden text in cluster-ddl.test.ts). The service then starts with migration off.
  await migratePostgres(pg.sql, migrationDirs.postgres);
  await migrateClickHouse(cluster.store, migrationDirs.clickhouse, { replicated: false });
  const config = loadConfig({
    PORT: '0', HOST: '127.0.0.1', OTLP_GRPC_PORT: '0', DATA_DIR: dataDir, DATABASE_URL: pg.url, LOG_LEVEL: 'silent', METRICS_PORT: '0', LOOKOUT_BOOTSTRAP_KEY: KEY,
    LOOKOUT_MIGRATE: 'off', TRACE_SETTLE_MS: '200', TRACE_MAX_WAIT_MS: '1500',
  });
  service = await startService(config, { logger: pino({ level: 'silent' }), clickhouse: cluster.store });
  // The leader's backfills (the registry's, the projects with log records) run at start: let them
  // finish, so their statements fall in no test's window.
  for (let i = 0; i < 300; i++) {
    const done = await pg.sql`select 1 from shared_state where name in (${REGISTRY_COMPLETE_STATE}, ${LOGGED_PROJECTS_COMPLETE})`;
    if (done.length === 2) break;
    await sleep(100);
  }
});

afterAll(async () => {
  await service?.stop();
  await cluster?.close();
  await pg?.close();
  if (dataDir) removeDir(dataDir);
});

describe('query shapes on a Distributed cluster layout (EXPLAIN on chdb with remote_servers)', () => {
  it('the harness refuses what a cluster refuses: a double-distributed IN subquery (code 288)', async () => {
    const before = cluster.checked.length;
    const spans = cluster.store.table('spans');
    const refused = `SELECT count() FROM ${spans} WHERE trace_id IN (SELECT trace_id FROM ${spans} WHERE tenant_id = 'x')`;
    await expect(cluster.store.read(raw(refused), { lane: 'system' })).rejects.toThrow(/Double-distributed IN\/JOIN subqueries is denied/);
    expect(cluster.checked.slice(before)).toEqual([{ sql: refused, error: expect.stringMatching(/DISTRIBUTED_IN_JOIN_SUBQUERY_DENIED|Double-distributed/) }]);
    cluster.checked.splice(before);
  });

  it('ingests, settles and answers every read surface with only shapes the cluster accepts', async () => {
    const project = await call('POST', '/projects', { name: 'cluster' });
    expect(project.status).toBe(201);
    const pid = project.body.id as string;
    const now = Date.now();
    const ids = await sendRuns(service.url, KEY, pid, [
      { start: new Date(now - 3_600_000), agent: 'planner', generations: [{ model: 'gpt-4o', input: 1200, output: 300 }, { model: 'unknown-model-x', input: 10, output: 5 }], tools: [{ name: 'search' }, { name: 'fetch', error: true }], failed: true, threadId: 'thread-1' },
      { start: new Date(now - 7_200_000), agent: 'writer', generations: [{ model: 'claude-sonnet-4-5', input: 800, output: 200 }], tools: [{ name: 'search' }] },
    ]);

    // Settled: the traces API lists both (the settler's statements run meanwhile).
    let listed: { status: number; body: any } = { status: 0, body: null };
    for (let i = 0; i < 150; i++) {
      listed = await call('GET', `/projects/${pid}/traces`);
      if (listed.status === 200 && listed.body.traces?.length >= 2) break;
      await sleep(100);
    }
    expect(listed.status).toBe(200);
    expect(listed.body.traces.length).toBeGreaterThanOrEqual(2);

    // Traces written before a price catalog was available are priced at query time: the cost
    // module's query-time statements (live traces, their generations) run only for such rows.
    const scope = { tenantId: service.bootstrap!.tenantId, projectId: pid };
    const at = new Date(now - 5_400_000).toISOString().replace('T', ' ').replace('Z', '');
    const [unpriced] = await seedTraces(cluster.store, scope, [{ timestamp: at, inputTokens: 100, outputTokens: 20, basis: 'unavailable' }]);
    await seedGenerations(cluster.store, scope, [{ traceId: unpriced, timestamp: at, model: 'gpt-4o', provider: 'openai', input: 100, output: 20 }]);
    const start = new Date(Math.floor(now / 86_400_000 - 1) * 86_400_000).toISOString();
    const end = new Date(Math.ceil(now / 86_400_000) * 86_400_000).toISOString();

    const reads = [
      `/traces/${ids[0]}`,
      `/traces/${ids[0]}?expand=context&project_id=${pid}`,
      `/traces/agent-names?project_id=${pid}`,
      `/projects/${pid}/traces?has_error=true&agent_name=planner`,
      // Search: the content subquery is shard-local (search-sql.ts), the snippets read the Distributed table.
      `/projects/${pid}/traces?q=${encodeURIComponent('tool:search -fetch "invoke_agent"')}&limit=1`,
      ...Object.entries(viewParams(new Date(now))).map(([view, params]) => `/projects/${pid}/analytics?view=${view}&${params}`),
      `/projects/${pid}/metrics`,
      `/projects/${pid}/issues`,
      `/projects/${pid}/analytics/catalog`,
    ];
    // Answers are checked after the refused shapes below, whose message says more than a 500.
    const statuses: [string, number, string | undefined][] = [];
    for (const read of reads) statuses.push([read, (await call('GET', read)).status, undefined]);
    // A thread's list: its trace ids from a shard-local subquery (trace-store.ts), and its total. Both
    // shards are this engine (cluster-chdb.ts): the trace is listed once per shard, and only it.
    const thread = await call('GET', `/projects/${pid}/traces?thread_id=thread-1&include_total=true`);
    expect([thread.status, [...new Set(thread.body.traces?.map((t: { otel_trace_id: string }) => t.otel_trace_id))]]).toEqual([200, [ids[0]]]);

    // hostile-values carries a NUL byte the HTTP layer refuses before compiling; its shape is every-filter-op's.
    for (const [name, body] of Object.entries(GOLDEN_CASES).filter(([n]) => n !== 'hostile-values')) {
      const res = await call('POST', `/projects/${pid}/analytics/query`, body);
      statuses.push([name, res.status, res.body?.detail]);
    }
    const costQueries: [string, unknown[], string][] = [
      ['trace.processed', [{ agg: 'trace_cost' }, { as: 'traces', agg: 'count' }], 'agent_name'],
      ['generation.completed', [{ as: 'cost', agg: 'generation_cost' }], 'model'],
    ];
    for (const [from, measures, field] of costQueries) {
      const res = await call('POST', `/projects/${pid}/analytics/query`, { from, start, end_exclusive: end, measures, group_by: [{ field }] });
      statuses.push([from, res.status, res.body?.detail]);
    }
    const backfill = await call('POST', '/admin/backfill-costs', { project_id: pid });
    statuses.push(['backfill', backfill.status, undefined]);
    // The stored-trace registry's leader jobs: the backfill pass over spans (run again here, its
    // mark removed) and retention's "still stored" check (every row a candidate; all are kept).
    await pg.sql`delete from shared_state where name = ${REGISTRY_COMPLETE_STATE}`;
    expect(await backfillStoredTraces(pg.sql, cluster.store)).toBeGreaterThanOrEqual(2);
    expect(await expireStoredTraces(pg.sql, cluster.store, 0)).toBe(0);
    // The marking of projects whose log records were stored before marks existed (none here).
    await pg.sql`delete from shared_state where name = ${LOGGED_PROJECTS_COMPLETE}`;
    expect(await backfillLoggedProjects(pg.sql, cluster.store)).toBe(0);

    const refused = cluster.checked.filter((c) => c.error);
    expect(refused.map((c) => `${c.error!.slice(0, 160)}\n${c.sql}`)).toEqual([]);
    expect(statuses.filter(([, status]) => status !== 200)).toEqual([]);
    // The suite saw the statements of every module, reading every table through its Distributed name.
    const all = cluster.checked.map((c) => c.sql).join('\n');
    for (const table of ['spans', 'traces', 'trace_content', 'event_trace_processed', 'event_generation_completed', 'event_tool_called', 'event_span_errored', 'event_issue']) {
      expect([table, all.includes(`\`lookout\`.\`${table}\``)]).toEqual([table, true]);
    }
    // Two local tables on purpose, each in a subquery inside the shard's part of the trace list: a
    // search's content (search-sql.ts) and a thread's trace ids (trace-store.ts); every other statement
    // names Distributed tables only.
    const local = cluster.checked.filter((c) => c.sql.includes('_local`'));
    expect(local.some((c) => c.sql.includes('`lookout`.`trace_content_local`'))).toBe(true);
    expect(local.some((c) => c.sql.includes('`lookout`.`traces_local`'))).toBe(true);
    for (const c of local) {
      expect(c.sql.replaceAll('`lookout`.`trace_content_local`', '').replaceAll('`lookout`.`traces_local`', '')).not.toContain('_local`');
      // Over the whole project with FINAL; among given traces through plain reads of the summaries
      // (trace-store.ts) and the content (search-sql.ts).
      expect(c.sql).toMatch(/^SELECT [\s\S]* FROM (`lookout`\.`traces` FINAL|\(SELECT [\s\S]* FROM `lookout`\.`traces`)[\s\S]* trace_id IN \(SELECT trace_id FROM (`lookout`\.`traces_local` WHERE|`lookout`\.`trace_content_local` FINAL|\(\s*SELECT trace_id, argMax\([\s\S]*\) AS latest FROM `lookout`\.`trace_content_local`)/);
    }
    // The cost module's query-time statements were among them (its live-trace CTE).
    expect(all).toContain('WITH live AS');
  });
});
