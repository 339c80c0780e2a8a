/**
 * A sharded cluster for real: two ClickHouse server processes (test/helpers/clickhouse-server/) as
 * two shards of the cluster `lookout_test`, in the layout without replication
 * (CLICKHOUSE_CLUSTER_REPLICATED=false: plain `_local` tables under Distributed tables, migrated node
 * by node through CLICKHOUSE_CLUSTER_NODES). Three Lookout instances on one PostgreSQL: a worker
 * (settling, hooks) and two api+ingest instances, each talking to a different node. One cluster for
 * the whole file: the servers take a while to start on a loaded runner.
 */
import fs from 'node:fs';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { createClient, type ClickHouseClient } from '@clickhouse/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrationDirs } from '../../../src/app/service.js';
import { otlpSchema } from '../../../src/ingest/otlp/otlp-schema.js';
import { computeCostObject } from '../../../src/cost/cost-object.js';
import { traceHooks } from '../../../src/ingest/trace-hook-registry.js';
import { queueDepth } from '../../../src/ingest/settle/settle-queue.js';
import { openClickHouse, type ClickHouseStore } from '../../../src/platform/clickhouse/clickhouse.js';
import { insertOnEveryReplica } from '../../../src/platform/clickhouse/replica-insert.js';
import { SHARDING_KEYS } from '../../../src/platform/clickhouse/clickhouse-layout.js';
import { TRACE_TABLES } from '../../../src/platform/clickhouse/trace-tables.js';
import { parseSearchQuery } from '../../../src/traces/search-query.js';
import { searchTraces } from '../../../src/traces/trace-search.js';
import { listTraces } from '../../../src/traces/trace-store.js';
import { migrateClickHouse, readMigrations } from '../../../src/platform/migrations.js';
import { openPostgres, type PostgresStore } from '../../../src/platform/postgres/postgres.js';
import { lookoutTraceId } from '../../../src/spans/trace-id.js';
import { agentRun } from '../../helpers/agent-run.js';
import { agentRunRequest } from '../../helpers/otlp-json.js';
import { startClickHouseServers, type ClickHouseServer } from '../../helpers/clickhouse-server/clickhouse-server.js';
import { copyMigratedStores } from '../../helpers/migrated-stores.js';
import { removeDir, startTestService, type TestService } from '../../helpers/service.js';
import { tempDataDir } from '../../helpers/temp-dir.js';
import { baseInstant } from '../analytics-views/dataset.js';
import { seedThroughIngestion } from '../analytics-views/harness.js';
import { newScope, seedGenerations, seedTraces } from '../cost/seed.js';
import { postOtlp, protobufBody, waitFor } from '../ingest/otlp-client.js';
import { datasetAnswers } from '../scale-out/dataset-answers.js';

const CLUSTER = 'lookout_test';
const TABLES = Object.keys(SHARDING_KEYS);
const MIGRATIONS = readMigrations(migrationDirs.clickhouse).map((f) => f.name);
const base = baseInstant();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let servers: ClickHouseServer[];
/** A plain client on each node, to see what each shard holds on its own. */
let direct: ClickHouseClient[];
let pg: PostgresStore;
let pgDir: string;
let worker: TestService;
/** api+ingest instances: `front[i]` talks to node i. */
const front: TestService[] = [];
let embedded: ClickHouseStore;
let embeddedDir: string;
const hookRuns = new Map<string, number>();
let tenantId: string;
let projectId: string;
/** A project with traces whose cost is priced at query time (the cost module's GLOBAL shapes). */
const costScope = newScope();

function clusterEnv(node: number, roles: string): Record<string, string> {
  return {
    DATABASE_URL: pg.url,
    LOOKOUT_ROLES: roles,
    CLICKHOUSE_URL: servers[node].url,
    CLICKHOUSE_USER: servers[node].user,
    CLICKHOUSE_PASSWORD: servers[node].password,
    CLICKHOUSE_DATABASE: 'lookout',
    CLICKHOUSE_CLUSTER: CLUSTER,
    CLICKHOUSE_CLUSTER_REPLICATED: 'false',
    CLICKHOUSE_CLUSTER_NODES: servers.map((s) => s.url).join(','),
    TRACE_SETTLE_MS: '1500',
    TRACE_MAX_WAIT_MS: '1500',
    // A frozen shard (the last test) holds a read until the query limit and an ingest until the
    // ingest deadline: 8 s and 10 s, not 15 s and the test services' 30 s, are still far above what
    // any statement here takes on a loaded runner, and end that test in half the time.
    QUERY_TIMEOUT_SECONDS: '8',
    INGEST_TIMEOUT_MS: '10000',
  };
}

async function rows<T>(client: ClickHouseClient, query: string, params: Record<string, unknown> = {}): Promise<T[]> {
  const result = await client.query({ query, query_params: params, format: 'JSONEachRow', clickhouse_settings: { output_format_json_quote_64bit_integers: 0 } });
  return result.json<T>();
}

/** Every row version of `table` read through the Distributed table, inserted as it is into the embedded engine. */
async function copyTable(cluster: ClickHouseStore, table: string): Promise<number> {
  const result = await cluster.client.query({ query: `SELECT * FROM ${cluster.table(table)}`, format: 'JSONEachRow', clickhouse_settings: { output_format_json_quote_64bit_integers: 1 } });
  const copied = await result.json<Record<string, unknown>>();
  // optimize_on_insert = 0: one insert holding several versions of a row keeps them all (its default
  // folds them as a merge would), so both sides hold the same row versions.
  if (copied.length > 0) await embedded.client.insert({ table: embedded.table(table), values: copied, format: 'JSONEachRow', clickhouse_settings: { optimize_on_insert: 0 } });
  return copied.length;
}

beforeAll(async () => {
  servers = await startClickHouseServers(2, { clusterName: CLUSTER });
  direct = servers.map((s) => createClient({ url: s.url, username: s.user, password: s.password }));
  pgDir = tempDataDir('lookout-cluster-pg-');
  // The shared PostgreSQL starts migrated (test/helpers/migrated-stores.ts): the worker finds its migrations applied.
  await copyMigratedStores(pgDir, { postgres: true, clickhouse: false });
  pg = await openPostgres({ databaseUrl: null, dataDir: pgDir });
  // The worker starts first and migrates both stores; the api+ingest instances find them current.
  worker = await startTestService(clusterEnv(0, 'worker'), tempDataDir('lookout-cluster-worker-'));
  traceHooks(worker.service.deps).onTracesProcessed.push(async (traces) => {
    for (const t of traces) hookRuns.set(t.traceId, (hookRuns.get(t.traceId) ?? 0) + 1);
  });
  for (const node of [0, 1]) front.push(await startTestService(clusterEnv(node, 'api,ingest'), tempDataDir('lookout-cluster-api-')));
  tenantId = worker.service.bootstrap!.tenantId;
  projectId = (await front[0].newProject('cluster-dataset')).id;
  await seedThroughIngestion(front[0], projectId, base);
  const at = new Date(base.getTime() + 3 * 86_400_000 + 3_600_000).toISOString().replace('T', ' ').replace('Z', '');
  const cluster = front[1].service.deps.ch;
  const traces = await seedTraces(cluster, costScope, [
    { timestamp: at, agent: 'planner', inputTokens: 100, outputTokens: 20, basis: 'unavailable' },
    { timestamp: at, agent: 'writer', inputTokens: 1000, outputTokens: 300, basis: 'unavailable' },
    { timestamp: at, agent: 'writer', inputTokens: 50, outputTokens: 5, basis: 'stored', cost: 0.25, pricedTokens: 55 },
  ]);
  await seedGenerations(cluster, costScope, [
    { traceId: traces[0], timestamp: at, model: 'gpt-4o', provider: 'openai', input: 100, output: 20 },
    { traceId: traces[1], timestamp: at, model: 'gpt-4o', provider: 'openai', input: 600, output: 100 },
    { traceId: traces[1], timestamp: at, model: 'claude-sonnet-4-5', provider: 'anthropic', input: 400, output: 200 },
  ]);
}, 300_000);

/**
 * The single-node run on the same data: once nothing is left to settle, every stored row version
 * read through the Distributed tables and copied into an embedded engine migrated to the same schema.
 */
async function copyToOneNode(): Promise<void> {
  if (embedded) return;
  await waitFor(async () => ((await queueDepth(pg.sql)) === 0 ? true : undefined), 60_000, 'the settle queue to drain');
  embeddedDir = tempDataDir('lookout-cluster-embedded-');
  // From the run's migrated template (test/helpers/migrated-stores.ts): the migration below finds nothing left to apply.
  await copyMigratedStores(embeddedDir, { postgres: false, clickhouse: true });
  embedded = await openClickHouse({ url: null, user: '', password: '', database: 'lookout', cluster: null, dataDir: embeddedDir });
  await migrateClickHouse(embedded, migrationDirs.clickhouse);
  for (const table of TABLES) await copyTable(front[0].service.deps.ch, table);
}

afterAll(async () => {
  for (const svc of [...front, worker].filter(Boolean)) {
    await svc.stop().catch(() => {});
    removeDir(svc.dataDir);
  }
  await embedded?.close();
  if (embeddedDir) fs.rmSync(embeddedDir, { recursive: true, force: true });
  await pg?.close();
  if (pgDir) removeDir(pgDir);
  for (const client of direct ?? []) await client.close();
  await Promise.all((servers ?? []).map((s) => s.stop()));
  if (servers?.[0]) fs.rmSync(servers[0].dataDir.replace(/\/node-1$/, ''), { recursive: true, force: true });
}, 120_000);

describe('two ClickHouse servers as two shards, without replication', () => {
  it('migrations reach both nodes: plain _local tables, Distributed tables, each migration recorded on each node once', async () => {
    expect(worker.service.migrations?.clickhouse).toEqual(MIGRATIONS);
    for (const svc of front) expect(svc.service.migrations?.clickhouse).toEqual([]);
    for (const client of direct) {
      const tables = new Map((await rows<{ name: string; engine: string }>(client, `SELECT name, engine FROM system.tables WHERE database = 'lookout'`)).map((t) => [t.name, t.engine]));
      for (const table of TABLES) {
        expect([table, tables.get(`${table}_local`)]).toEqual([table, 'ReplacingMergeTree']);
        expect([table, tables.get(table)]).toEqual([table, 'Distributed']);
      }
      // The rebuilds of 009 and 010 ran on every node: their copies are gone, the ids are UUIDs.
      expect([...tables.keys()].filter((name) => /_v\d{3}/.test(name))).toEqual([]);
      const [column] = await rows<{ type: string }>(client, `SELECT type FROM system.columns WHERE database = 'lookout' AND table = 'event_tool_called_local' AND name = 'trace_id'`);
      expect(column.type).toBe('UUID');
      const recorded = await rows<{ name: string; n: number }>(client, `SELECT name, count() AS n FROM lookout.schema_migrations GROUP BY name ORDER BY name`);
      expect(recorded).toEqual(MIGRATIONS.map((name) => ({ name, n: 1 })));
    }
  });

  it('places every row on the shard its trace hashes to, every version of a trace on one', async () => {
    // Shard weights are equal: shard k (k = 0, 1) takes the rows whose sharding key is k modulo 2.
    const perTrace = 'spans traces event_trace_processed event_generation_completed event_tool_called event_span_errored'.split(' ');
    for (const table of perTrace) {
      const key = SHARDING_KEYS[table];
      let placed = 0;
      for (const [node, client] of direct.entries()) {
        const [row] = await rows<{ n: number; elsewhere: number }>(client, `SELECT count() AS n, countIf(${key} % 2 != ${node}) AS elsewhere FROM lookout.${table}_local`);
        expect([table, node, Number(row.elsewhere)]).toEqual([table, node, 0]);
        placed += Number(row.n);
      }
      // Through the Distributed table, either node reads exactly the rows of both shards.
      for (const client of direct) {
        const [total] = await rows<{ n: number }>(client, `SELECT count() AS n FROM lookout.${table}`);
        expect([table, Number(total.n)]).toEqual([table, placed]);
      }
      if (table !== 'event_span_errored') expect([table, placed > 0]).toEqual([table, true]);
    }
  });

  it('a trace whose spans reach both api+ingest instances lands on one shard and settles once', { timeout: 120_000 }, async () => {
    const project = await front[0].newProject('split');
    const run = agentRun(5, 'split-agent');
    const traceId = lookoutTraceId(project.id, run.otelTraceId);
    const send = (svc: TestService, spans: ReadableSpan[]) => postOtlp(svc.url, svc.adminKey, protobufBody(spans), { headers: { 'x-lookout-project': project.id } });
    expect((await send(front[0], [run.root, ...run.children.slice(0, 2)])).status).toBe(200);
    expect((await send(front[1], run.children.slice(2))).status).toBe(200);
    await waitFor(async () => ((hookRuns.get(traceId) ?? 0) > 0 ? true : undefined), 60_000, 'trace settled');
    // Longer than a quiet period more: no second settle comes.
    await sleep(4000);
    expect(hookRuns.get(traceId)).toBe(1);
    expect(await queueDepth(pg.sql)).toBe(0);
    const perNode = await Promise.all(direct.map(async (client) => {
      const count = async (table: string) => Number((await rows<{ n: number }>(client, `SELECT count() AS n FROM lookout.${table}_local FINAL WHERE trace_id = {t:String}`, { t: traceId }))[0].n);
      return { spans: await count('spans'), traces: await count('traces'), processed: await count('event_trace_processed') };
    }));
    expect(perNode.filter((n) => n.spans > 0)).toEqual([{ spans: 6, traces: 1, processed: 1 }]);
    expect(perNode.filter((n) => n.spans === 0)).toEqual([{ spans: 0, traces: 0, processed: 0 }]);
    // Read through the other node: the traces API of both instances lists it.
    for (const svc of front) {
      const listed = await svc.call('GET', `/projects/${project.id}/traces`);
      expect(listed.status).toBe(200);
      expect(listed.body.traces.map((t: { id: string; span_count: number }) => [t.id, t.span_count])).toEqual([[traceId, 6]]);
    }
  });

  it('answers every preset view and every golden DSL query exactly as the single-node run on the same data', { timeout: 120_000 }, async () => {
    await copyToOneNode();
    for (const table of TABLES) {
      const count = async (store: ClickHouseStore, final: string) => Number((await rows<{ n: number }>(store.client, `SELECT count() AS n FROM ${store.table(table)}${final} WHERE project_id = {p:String}`, { p: projectId }))[0].n);
      for (const final of ['', ' FINAL']) expect([table, final, await count(embedded, final)]).toEqual([table, final, await count(front[0].service.deps.ch, final)]);
    }
    const scope = { tenantId, projectId, base };
    for (const svc of front) {
      const onCluster = await datasetAnswers(svc.service.deps.ch, svc.service.deps.sql, scope);
      const onOneNode = await datasetAnswers(embedded, svc.service.deps.sql, scope);
      expect(Object.keys(onCluster).length).toBeGreaterThan(10);
      // Not vacuous: the data set's answers have rows.
      expect(JSON.stringify(onCluster['query model-latency-scorecard'])).toMatch(/gpt|claude/);
      expect(onCluster).toEqual(onOneNode);
    }
  });

  it('searches trace content shard by shard (each shard\'s trace_content_local), answering as one node', async () => {
    await copyToOneNode();
    const cluster = front[0].service.deps.ch;
    for (const q of ['invoke_agent', 'name:chat -"no such words"', 'invoke_agent -chat']) {
      const search = parseSearchQuery(q);
      const ids = async (store: ClickHouseStore, probe?: number) =>
        (probe === undefined ? await listTraces(store, tenantId, projectId, { search, limit: 10_000 }) : await searchTraces(store, tenantId, projectId, { search, limit: 25 }, probe)).map((r) => r.trace_id);
      const onOneNode = await ids(embedded);
      if (q === 'invoke_agent') expect(onOneNode.length).toBeGreaterThan(2);
      expect([q, await ids(cluster)]).toEqual([q, onOneNode]);
      // The two-step page (newest candidates, then the rest through the index) as well.
      expect([q, await ids(cluster, 2)]).toEqual([q, onOneNode.slice(0, 25)]);
    }
  });

  it('lists a thread\'s traces shard by shard (each shard\'s traces_local), each trace by its newest summary', async () => {
    const cluster = front[0].service.deps.ch;
    const project = await front[0].newProject('threads');
    const time = (ms: number) => new Date(ms).toISOString().replace('T', ' ').replace('Z', '');
    const now = Date.now();
    const id = (n: number) => `thread-trace-${n}`;
    const summary = (n: number, thread: string, processedAt: string) => ({
      tenant_id: tenantId, project_id: project.id, trace_id: id(n), otel_trace_id: n.toString(16).padStart(32, '0'),
      timestamp: time(now - n * 1000), thread_id: thread, tool_calls: '[]', stats_tool_calls: '[]', processed_at: processedAt,
    });
    // Traces 0..19 alternate between two threads; trace 20 is summarized on thread-0, then again on thread-1.
    const first = [...Array.from({ length: 20 }, (_, n) => summary(n, `thread-${n % 2}`, '2026-01-01 00:00:00.000')), summary(20, 'thread-0', '2026-01-01 00:00:00.000')];
    await cluster.client.insert({ table: cluster.table('traces'), values: first, format: 'JSONEachRow' });
    await cluster.client.insert({ table: cluster.table('traces'), values: [summary(20, 'thread-1', '2026-01-02 00:00:00.000')], format: 'JSONEachRow' });
    const perNode = await Promise.all(direct.map(async (client) => Number((await rows<{ n: number }>(client, 'SELECT count() AS n FROM lookout.traces_local WHERE project_id = {p:String}', { p: project.id }))[0].n)));
    expect(perNode.every((n) => n > 0)).toBe(true);
    const listed = async (threadId: string) => (await listTraces(cluster, tenantId, project.id, { threadId, limit: 100 })).map((r) => r.trace_id);
    // Newest first: trace n started n seconds before now.
    expect(await listed('thread-0')).toEqual([0, 2, 4, 6, 8, 10, 12, 14, 16, 18].map(id));
    expect(await listed('thread-1')).toEqual([1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 20].map(id));
    expect(await listed('thread-2')).toEqual([]);
  });

  it("executes the cost module's GLOBAL IN / GLOBAL JOIN shapes across the shards, answering as one node", async () => {
    const window = { start: new Date(base.getTime() + 3 * 86_400_000), endExclusive: new Date(base.getTime() + 4 * 86_400_000) };
    const now = new Date(base.getTime() + 5 * 86_400_000);
    await copyToOneNode();
    const cluster = front[0].service.deps.ch;
    for (const groupBy of ['none', 'agent'] as const) {
      const onCluster = await computeCostObject({ ch: cluster, ...costScope, now }, { ...window, groupBy });
      const onOneNode = await computeCostObject({ ch: embedded, ...costScope, now }, { ...window, groupBy });
      expect(onCluster).toEqual(onOneNode);
      // Priced at query time: more than the one stored cost.
      expect(onCluster.total.cost.estimated_cost_usd).toBeGreaterThan(0.25);
    }
    // The statements ran on the cluster, not only as plans: the initiating node logged them finished.
    await direct[0].command({ query: 'SYSTEM FLUSH LOGS' });
    const ran = await rows<{ global_in: number; global_join: number }>(direct[0], `
      SELECT countIf(query LIKE '%GLOBAL IN (SELECT trace_uuid FROM live)%') AS global_in, countIf(query LIKE '%GLOBAL INNER JOIN live%') AS global_join
      FROM system.query_log WHERE type = 'QueryFinish' AND is_initial_query AND query_kind = 'Select' AND query NOT LIKE '%system.query_log%'`);
    expect(ran[0].global_in).toBeGreaterThan(0);
    expect(ran[0].global_join).toBeGreaterThan(0);
  });
});

describe('deletion on the cluster', () => {
  it('removes the selected traces from the local tables of both shards and keeps the others', { timeout: 180_000 }, async () => {
    const project = await front[0].newProject('deletions');
    // Six traces on each shard (a trace's shard is its id's hash modulo 2), so that the deleted eight
    // and the kept four both lie on both shards.
    const byShard: ReturnType<typeof agentRun>[][] = [[], []];
    while (byShard.some((runs) => runs.length < 6)) {
      const run = agentRun(2, `deleted-${byShard[0].length + byShard[1].length}`);
      const [{ shard }] = await rows<{ shard: number }>(direct[0], `SELECT toUInt8(${SHARDING_KEYS.spans} % 2) AS shard FROM (SELECT {t:String} AS trace_id)`, { t: lookoutTraceId(project.id, run.otelTraceId) });
      if (byShard[shard].length < 6) byShard[shard].push(run);
    }
    const [a, b] = byShard;
    const runs = [...a.slice(0, 4), ...b.slice(0, 4), ...a.slice(4), ...b.slice(4)];
    const ids = runs.map((run) => lookoutTraceId(project.id, run.otelTraceId));
    for (const [i, run] of runs.entries()) {
      const svc = front[i % 2];
      expect((await postOtlp(svc.url, svc.adminKey, protobufBody([run.root, ...run.children]), { headers: { 'x-lookout-project': project.id } })).status).toBe(200);
    }
    await waitFor(async () => (ids.every((id) => (hookRuns.get(id) ?? 0) > 0) ? true : undefined), 60_000, 'traces settled');
    const [gone, kept] = [ids.slice(0, 8), ids.slice(8)];
    /** Rows of some traces in every per-trace table, per node, read from the node's own local tables. */
    const perNode = (traces: string[]) =>
      Promise.all(direct.map(async (client) => {
        let n = 0;
        for (const [table, id] of Object.entries(TRACE_TABLES)) {
          const type = id === 'uuid' ? 'Array(UUID)' : 'Array(String)';
          n += Number((await rows<{ n: number }>(client, `SELECT count() AS n FROM lookout.${table}_local WHERE project_id = {p:String} AND trace_id IN {t:${type}}`, { p: project.id, t: traces }))[0].n);
        }
        return n;
      }));
    const before = await perNode(gone);
    expect(before.every((n) => n > 0)).toBe(true);
    const keptBefore = await perNode(kept);

    const created = await front[1].call('POST', `/projects/${project.id}/deletions`, { body: { trace_ids: gone } });
    expect(created.status).toBe(202);
    const job = await waitFor(async () => {
      const res = await front[0].call('GET', `/deletions/${created.body.id}`);
      return res.body?.status === 'succeeded' ? res.body : undefined;
    }, 120_000, 'the deletion job');
    expect(job.traces_deleted).toBe(8);
    expect(await perNode(gone)).toEqual([0, 0]);
    // The kept traces are still where they were (repeated row versions may have merged meanwhile).
    expect(keptBefore.reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
    expect((await perNode(kept)).map((n) => n > 0)).toEqual(keptBefore.map((n) => n > 0));
    const listed = await front[0].call('GET', `/projects/${project.id}/traces`);
    expect(listed.body.traces.map((t: { id: string }) => t.id).sort()).toEqual([...kept].sort());
  });
});

describe('retention on the cluster', () => {
  it("stores every row with its project's retention on both shards, and a shorter setting empties the content there", { timeout: 180_000 }, async () => {
    const project = await front[0].newProject('retention');
    const control = await front[0].newProject('retention control');
    const old = new Date(Date.now() - 20 * 86_400_000);
    /** Runs sent as OTLP/JSON through both api+ingest instances; their Lookout ids. */
    const sendRuns = async (projectId: string, n: number, start: Date): Promise<string[]> => {
      const ids: string[] = [];
      for (let i = 0; i < n; i++) {
        const { body, traceId } = agentRunRequest({ start, agent: `kept-${i}`, input: `question ${i}`, output: `answer ${i}`, generations: [{ model: 'gpt-4o', input: 10, output: 2 }] });
        const svc = front[i % 2];
        const res = await fetch(`${svc.url}/v1/traces`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${svc.adminKey}`, 'x-lookout-project': projectId }, body });
        expect(res.status).toBe(200);
        ids.push(lookoutTraceId(projectId, traceId));
      }
      await waitFor(async () => (ids.every((id) => (hookRuns.get(id) ?? 0) > 0) ? true : undefined), 60_000, 'traces settled');
      return ids;
    };
    await sendRuns(project.id, 12, old);
    await sendRuns(control.id, 4, old);
    /** Per node, a project's span rows: how many, how many still with attributes, and the retention they carry. */
    const perNode = (projectId: string) =>
      Promise.all(direct.map(async (client) => {
        const [row] = await rows<{ n: number; content: number; retention: string[] }>(
          client,
          `SELECT count() AS n, countIf(attributes NOT IN ('', '{}')) AS content, groupUniqArray(concat(toString(analytics_days), '/', toString(content_days))) AS retention
           FROM lookout.spans_local WHERE project_id = {p:String}`,
          { p: projectId },
        );
        return { n: Number(row.n), content: Number(row.content), retention: row.retention };
      }));
    const before = await perNode(project.id);
    // Twelve traces hashed over two shards: both hold some, with the default retention.
    for (const node of before) expect(node).toMatchObject({ retention: ['90/90'] });
    expect(before.every((node) => node.n > 0 && node.content === node.n)).toBe(true);

    const put = await front[1].call('PUT', `/projects/${project.id}/retention`, { body: { analytics_days: 30, content_days: 10 } });
    expect(put.status).toBe(200);
    // The settings reached each node's Join table, which the columns' defaults read.
    for (const client of direct) {
      const [setting] = await rows<{ days: number }>(client, `SELECT joinGet('lookout.retention_settings', 'content_days', {t:String}, {p:String}) AS days`, { t: tenantId, p: project.id });
      expect(setting.days).toBe(10);
    }
    for (const client of direct) for (const table of Object.keys(SHARDING_KEYS)) await client.command({ query: `OPTIMIZE TABLE lookout.${table}_local FINAL` });
    const after = await perNode(project.id);
    expect(after.map((node) => node.n)).toEqual(before.map((node) => node.n));
    for (const node of after) expect(node).toMatchObject({ content: 0, retention: ['30/10'] });
    // The figures stay, on either shard: the generation rows of all twelve runs.
    const [figures] = await rows<{ n: number }>(direct[0], `SELECT count() AS n FROM lookout.event_generation_completed WHERE project_id = {p:String}`, { p: project.id });
    expect(Number(figures.n)).toBe(12);
    // The other project keeps its content.
    const kept = await perNode(control.id);
    expect(kept.reduce((sum, node) => sum + node.content, 0)).toBe(kept.reduce((sum, node) => sum + node.n, 0));
    // New rows through either node carry the new setting.
    await sendRuns(project.id, 4, new Date());
    for (const node of await perNode(project.id)) expect(node.retention).toEqual(['30/10']);
  });
});

describe('settings written on every replica through remote()', () => {
  it('reaches every node the cluster lists, with the values bound (quotes, backslashes, newlines kept), on server and literal binding', async () => {
    // A store on a server keeps nothing in its data directory.
    const dataDir = tempDataDir('lookout-replica-insert-');
    for (const binding of ['server', 'literal'] as const) {
      const store = await openClickHouse({ url: servers[0].url, user: servers[0].user, password: servers[0].password, database: 'lookout', cluster: null, dataDir, paramBinding: binding });
      try {
        const tenant = `o'brien\\ "${binding}"\n--`;
        const rowsIn = [
          { tenant_id: tenant, project_id: 'p1', analytics_days: 45, content_days: 7 },
          { tenant_id: tenant, project_id: "p2');DROP TABLE x;--", analytics_days: 60, content_days: 30 },
        ];
        // The replicated layout's path (a Join table does not replicate): one insert per node of the cluster.
        await insertOnEveryReplica(store, { cluster: CLUSTER, database: 'lookout', table: 'retention_settings', user: servers[0].user, password: servers[0].password }, rowsIn);
        for (const client of direct) {
          for (const row of rowsIn) {
            const [read] = await rows<{ a: number; c: number }>(
              client,
              `SELECT joinGet('lookout.retention_settings', 'analytics_days', {t:String}, {p:String}) AS a, joinGet('lookout.retention_settings', 'content_days', {t:String}, {p:String}) AS c`,
              { t: row.tenant_id, p: row.project_id },
            );
            expect(read, `${binding} ${row.project_id}`).toEqual({ a: row.analytics_days, c: row.content_days });
          }
        }
      } finally {
        await store.close();
      }
    }
    removeDir(dataDir);
  });
});

describe('a shard down', () => {
  it('reads answer 503 with a clear code, ingest 503 with Retry-After, and nothing acknowledged is lost once it is back', { timeout: 180_000 }, async () => {
    const project = await front[0].newProject('shard-down');
    await servers[1].kill();
    const read = await front[0].call('GET', `/projects/${project.id}/traces`);
    expect([read.status, read.body?.code]).toEqual([503, 'store_unavailable']);
    // Runs until one lands on the dead shard (a trace's shard is its id's hash).
    const acknowledged: string[] = [];
    let refused: Awaited<ReturnType<typeof postOtlp>> | null = null;
    for (let i = 0; i < 20 && !refused; i++) {
      const run = agentRun(2, 'shard-down');
      const answer = await postOtlp(front[0].url, front[0].adminKey, protobufBody([run.root, ...run.children]), { headers: { 'x-lookout-project': project.id } });
      if (answer.status === 200) acknowledged.push(lookoutTraceId(project.id, run.otelTraceId));
      else refused = answer;
    }
    expect(refused?.status).toBe(503);
    expect(Number(refused?.headers.get('retry-after'))).toBeGreaterThan(0);
    await servers[1].start();
    await waitFor(async () => ((await front[0].call('GET', `/projects/${project.id}/traces`)).status === 200 ? true : undefined), 60_000, 'reads to answer again');
    // Ingest takes spans again once the shard is back (the failed flush's rows were removed from every node).
    const after = agentRun(2, 'shard-back');
    await waitFor(async () => ((await postOtlp(front[0].url, front[0].adminKey, protobufBody([after.root, ...after.children]), { headers: { 'x-lookout-project': project.id } })).status === 200 ? true : undefined), 60_000, 'ingest to answer again');
    acknowledged.push(lookoutTraceId(project.id, after.otelTraceId));
    expect(acknowledged.length).toBeGreaterThanOrEqual(1);
    for (const traceId of acknowledged) {
      const [row] = await rows<{ n: number }>(direct[0], `SELECT count() AS n FROM lookout.spans FINAL WHERE trace_id = {t:String}`, { t: traceId });
      expect([traceId, Number(row.n)]).toEqual([traceId, 3]);
    }
  });
});

/**
 * `wait`, and when it fails, its error with what both servers say of themselves: their latest errors
 * (system.errors) and the statements they are running (system.processes). A server logs nowhere a
 * test can read, so this is what tells a slow recovery from a stuck one.
 */
async function withServerState<T>(wait: () => Promise<T>): Promise<T> {
  try {
    return await wait();
  } catch (error) {
    const states = await Promise.all(direct.map(async (client, i) => {
      try {
        const errors = await rows<Record<string, unknown>>(client, `SELECT name, value, last_error_time, substring(last_error_message, 1, 200) AS message FROM system.errors WHERE last_error_time > now() - 300 ORDER BY last_error_time DESC LIMIT 5`);
        const running = await rows<Record<string, unknown>>(client, `SELECT elapsed, substring(query, 1, 120) AS query FROM system.processes ORDER BY elapsed DESC LIMIT 5`);
        return `server ${i + 1}: errors ${JSON.stringify(errors)}; running ${JSON.stringify(running)}`;
      } catch (stateError) {
        return `server ${i + 1}: no answer (${String(stateError)})`;
      }
    }));
    throw new Error(`${(error as Error).message}\n${states.join('\n')}`, { cause: error });
  }
}

describe('a shard frozen', () => {
  it('reads answer 503/504 with a clear code within their limit, ingest 503 with Retry-After, nothing acknowledged lost or doubled once it resumes', { timeout: 300_000 }, async () => {
    const project = await front[0].newProject('shard-frozen');
    const traces = () => front[0].call('GET', `/projects/${project.id}/traces`);
    // Both shards answer (the test before restarted the second).
    await waitFor(async () => ((await traces()).status === 200 ? true : undefined), 60_000, 'reads to answer');
    const post = (body: Uint8Array) => postOtlp(front[0].url, front[0].adminKey, body, { headers: { 'x-lookout-project': project.id } });
    const acknowledged: string[] = [];
    let refused: { body: Uint8Array; traceId: string } | null = null;
    servers[1].freeze();
    try {
      // The process is there, its sockets accept, nothing answers: reads end at their limit
      // (QUERY_TIMEOUT_SECONDS, else REQUEST_TIMEOUT_SECONDS: 18 s here), never hang and never answer 500.
      let started = Date.now();
      const read = await traces();
      expect(Date.now() - started).toBeLessThan(45_000);
      expect([503, 504]).toContain(read.status);
      expect(read.body.code).toBe(read.status === 503 ? 'store_unavailable' : 'query_timeout');
      // Runs until one is refused (one whose trace belongs to the frozen shard, or any while the writer is held).
      for (let i = 0; i < 20 && !refused; i++) {
        const run = agentRun(2, 'shard-frozen');
        const body = protobufBody([run.root, ...run.children]);
        started = Date.now();
        const answer = await post(body);
        expect(Date.now() - started).toBeLessThan(45_000);
        expect([200, 503]).toContain(answer.status);
        if (answer.status === 200) acknowledged.push(lookoutTraceId(project.id, run.otelTraceId));
        else {
          expect(Number(answer.headers.get('retry-after'))).toBeGreaterThan(0);
          // A 503 to a protobuf request is a google.rpc.Status in that encoding: UNAVAILABLE.
          expect(answer.contentType).toBe('application/x-protobuf');
          const status = otlpSchema().Status;
          expect(status.toObject(status.decode(answer.body))).toMatchObject({ code: 14, message: expect.any(String) });
          refused = { body, traceId: lookoutTraceId(project.id, run.otelTraceId) };
        }
      }
    } finally {
      servers[1].thaw();
    }
    expect(refused).not.toBeNull();
    let last = '';
    const seen = (what: string) => () => `${what}: last answer ${last}; shard 2 said ${servers[1].output().slice(-2000)}`;
    await withServerState(() => waitFor(async () => {
      const read = await traces();
      last = `${read.status} ${JSON.stringify(read.body)}`;
      return read.status === 200 ? true : undefined;
    }, 90_000, seen('reads to answer again')));
    // The refused run re-sent, as an exporter does, until it is taken.
    await withServerState(() => waitFor(async () => {
      const answer = await post(refused!.body);
      last = `${answer.status} ${answer.body.toString('latin1').slice(0, 300)}`;
      return answer.status === 200 ? true : undefined;
    }, 90_000, seen('the refused run to be taken')));
    acknowledged.push(refused!.traceId);
    // Every acknowledged trace once: its three spans, each stored once (every row version counted, no FINAL).
    for (const traceId of acknowledged) {
      const [row] = await rows<{ n: number; u: number }>(direct[0], `SELECT count() AS n, uniqExact(span_id) AS u FROM lookout.spans WHERE trace_id = {t:String}`, { t: traceId });
      expect([traceId, Number(row.n), Number(row.u)]).toEqual([traceId, 3, 3]);
    }
  });
});
