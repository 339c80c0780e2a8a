/**
 * The stored-trace registry: a flush registers its traces in PostgreSQL before its
 * ClickHouse inserts and runs the duplicate check in ClickHouse only for traces the registry held
 * already. Against the real stores: new traces cost no ClickHouse read; re-sent spans never double
 * (new and known traces); a flush that failed between the registration and the spans insert is
 * completed exactly by its retry; the span limit stays exact; a reopened trace, a retried round and
 * a trace without a registry row each settle with every span; the backfill and the retention job, and the retention delete
 * racing a writer's registration of the same row.
 */
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestService } from '../../../src/ingest/ingest-module.js';
import type { TraceNote } from '../../../src/ingest/write/ingest-writer.js';
import { queueDepth } from '../../../src/ingest/settle/settle-queue.js';
import { registerTraces, REGISTRY_COMPLETE_STATE } from '../../../src/ingest/settle/stored-traces.js';
import { backfillStoredTraces, expireStoredTraces } from '../../../src/ingest/settle/stored-traces-jobs.js';
import { lookoutTraceId } from '../../../src/spans/trace-id.js';
import { openClickHouse, type ClickHouseStore } from '../../../src/platform/clickhouse/clickhouse.js';
import { statementKind } from '../../../src/platform/clickhouse/sql/statement-stats.js';
import { removeDir, startTestService, type TestService } from '../../helpers/service.js';
import { copyMigratedStores } from '../../helpers/migrated-stores.js';
import { tempDataDir } from '../../helpers/temp-dir.js';
import { failingInserts } from '../../helpers/failing-inserts.js';
import { jsonBody, postOtlp, waitFor } from './otlp-client.js';
import { agentRun as sdkAgentRun } from '../../helpers/agent-run.js';

const MAX_SPANS = 6;
let svc: TestService;
let opened: ClickHouseStore;
let dataDir: string;
let projectId: string;
/** The writer's duplicate checks so far (ingest-lane grouped reads of `spans`). */
let duplicateChecks = 0;
/** The settler's read-backs of spans so far (traces it could not prove it holds whole in memory). */
let readBacks = 0;
/** Fails the next insert into this table once (a crash between two steps of a flush or a round). */
let failNextInsert: string | null = null;
/** storedBeforeCount per trace id as the writer reported it to the settler, latest flush last. */
const reported = new Map<string, number[]>();
/** Trace ids whose registry row is deleted after their flush registered them, before the settle queue hears of them. */
const unregisterBeforeRecord = new Set<string>();

beforeAll(async () => {
  dataDir = tempDataDir('lookout-registry-');
  // The store opened here starts migrated, as the service's own would (test/helpers/migrated-stores.ts).
  await copyMigratedStores(dataDir, { postgres: false, clickhouse: true });
  opened = await openClickHouse({ url: null, user: 'default', password: '', database: 'lookout', cluster: null, dataDir });
  const failHere = (table: string) => {
    if (failNextInsert === null || table !== opened.table(failNextInsert)) return false;
    failNextInsert = null;
    return true;
  };
  const ch: ClickHouseStore = {
    ...opened,
    read: (statement, options) => {
      if (statementKind(options.lane, statement) === 'ingest select spans grouped') duplicateChecks++;
      return opened.read(statement, options);
    },
    readBytes: (statement, options) => {
      if (statementKind(options.lane, statement) === 'ingest select spans') readBacks++;
      return opened.readBytes(statement, options);
    },
    ...failingInserts(opened, failHere),
  };
  svc = await startTestService({ TRACE_SETTLE_MS: '300', TRACE_MAX_WAIT_MS: '30000', TRACE_MAX_SPANS: String(MAX_SPANS) }, dataDir, { clickhouse: ch });
  projectId = (await svc.newProject('registry')).id;
  // What the writer tells the settle cache about each trace (observed, then passed on unchanged).
  const settler = ingestService(svc.service.deps).settler;
  const record = settler.record.bind(settler);
  settler.record = async (notes: TraceNote[]) => {
    for (const n of notes) reported.set(n.traceId, [...(reported.get(n.traceId) ?? []), n.storedBeforeCount ?? -1]);
    for (const n of notes) if (unregisterBeforeRecord.delete(n.traceId)) await svc.service.deps.sql`delete from stored_traces where trace_id = ${n.traceId}`;
    await record(notes);
  };
  // Merges would fold repeated rows together before the tests count them.
  for (const table of ['spans', 'event_trace_processed']) await opened.client.command({ query: `SYSTEM STOP MERGES ${opened.table(table)}` });
  // The leader's backfill marks the registry complete (nothing stored yet on a fresh installation).
  await waitFor(async () => ((await registryComplete()) ? true : undefined), 30_000, 'registry backfill');
}, 120_000);

afterAll(async () => {
  await svc?.stop();
  await opened?.close();
  if (dataDir) removeDir(dataDir);
});

const sql = () => svc.service.deps.sql;

/** One agent run of `children` chat spans, with its Lookout trace id in this test's project. */
function agentRun(children: number) {
  const run = sdkAgentRun(children, 'registry-agent');
  return { ...run, traceId: lookoutTraceId(projectId, run.otelTraceId) };
}

async function registryComplete(): Promise<boolean> {
  const rows = await sql()<{ name: string }[]>`select name from shared_state where name = ${REGISTRY_COMPLETE_STATE}`;
  return rows.length === 1;
}

async function send(spans: ReadableSpan[]): Promise<{ status: number; rejected: number }> {
  const answer = await postOtlp(svc.url, svc.adminKey, jsonBody(spans), { contentType: 'application/json', headers: { 'x-lookout-project': projectId } });
  const body = answer.body.length > 0 ? (JSON.parse(answer.body.toString()) as { partialSuccess?: { rejectedSpans?: number | string } }) : {};
  return { status: answer.status, rejected: Number(body.partialSuccess?.rejectedSpans ?? 0) };
}

async function count(query: string, traceId: string): Promise<Record<string, number>> {
  const result = await opened.client.query({ query, query_params: { t: traceId }, format: 'JSONEachRow', clickhouse_settings: { output_format_json_quote_64bit_integers: 0 } });
  return (await result.json<Record<string, number>>())[0];
}

/** Span rows of a trace as stored (no FINAL, merges stopped: a doubled span counts twice). */
const spanRows = async (traceId: string) =>
  count(`SELECT count() AS rows, uniqExact(span_id) AS spans FROM ${opened.table('spans')} WHERE trace_id = {t:String}`, traceId);

/** Every trace.processed row of a trace (no FINAL). */
const processedRows = async (traceId: string) =>
  count(`SELECT count() AS rows FROM ${opened.table('event_trace_processed')} WHERE trace_id = {t:String}`, traceId);

const settledSpanCount = async (traceId: string) =>
  (await count(`SELECT any(span_count) AS n, count() AS rows FROM ${opened.table('traces')} FINAL WHERE trace_id = {t:String} AND preview = 0`, traceId)) as { n: number; rows: number };

async function registryRow(traceId: string) {
  const rows = await sql()<{ registrations: string }[]>`select registrations::text from stored_traces where trace_id = ${traceId}`;
  return rows;
}

/** Waits until the trace has `n` processed rows and nothing waits in the settle queue. */
async function settled(traceId: string, n = 1): Promise<void> {
  await waitFor(async () => ((await processedRows(traceId)).rows >= n && (await queueDepth(sql())) === 0 ? true : undefined), 30_000, `trace settled ${n}x`);
}

describe('the stored-trace registry', () => {
  it('stores new traces without reading ClickHouse, and a re-sent batch adds nothing', async () => {
    const runs = [agentRun(2), agentRun(3), agentRun(1)];
    const spans = runs.flatMap((r) => [r.root, ...r.children]);
    const before = duplicateChecks;
    expect(await send(spans)).toEqual({ status: 200, rejected: 0 });
    expect(duplicateChecks - before).toBe(0);
    for (const r of runs) expect(await registryRow(r.traceId)).toHaveLength(1);
    // New to the registry: nothing stored before, the settle cache may hold them whole.
    for (const r of runs) expect(reported.get(r.traceId)).toEqual([0]);
    // The same batch again: the traces are known, checked in ClickHouse, every span a duplicate.
    expect(await send(spans)).toEqual({ status: 200, rejected: 0 });
    expect(duplicateChecks - before).toBe(1);
    for (const r of runs) expect(await spanRows(r.traceId)).toEqual({ rows: r.children.length + 1, spans: r.children.length + 1 });
  });

  it('a known trace: new spans are kept, re-sent ones are not doubled, and it settles whole', async () => {
    const run = agentRun(4);
    const readBacksBefore = readBacks;
    expect((await send([run.root, run.children[0], run.children[1]])).status).toBe(200);
    // Part two repeats chat 1 and brings chat 2 and 3.
    expect(await send(run.children.slice(1))).toEqual({ status: 200, rejected: 0 });
    expect(await spanRows(run.traceId)).toEqual({ rows: 5, spans: 5 });
    await settled(run.traceId);
    expect(await settledSpanCount(run.traceId)).toEqual({ n: 5, rows: 1 });
    // Both parts came through this process and every registration was its own: settled from memory.
    expect(readBacks - readBacksBefore).toBe(0);
  });

  it('a flush that failed after registering its traces is completed exactly by the retry', async () => {
    const run = agentRun(3);
    const spans = [run.root, ...run.children];
    failNextInsert = 'spans';
    expect((await send(spans)).status).toBe(503);
    expect(failNextInsert).toBeNull();
    // Registered, events written, no span stored: the row says "may have spans", not "has".
    expect(await registryRow(run.traceId)).toHaveLength(1);
    expect(await spanRows(run.traceId)).toEqual({ rows: 0, spans: 0 });
    const before = duplicateChecks;
    expect(await send(spans)).toEqual({ status: 200, rejected: 0 });
    expect(duplicateChecks - before).toBe(1);
    expect(await spanRows(run.traceId)).toEqual({ rows: 4, spans: 4 });
    // Known to the registry though ClickHouse had none of it: reported as at least 1 (read back at settling).
    expect(reported.get(run.traceId)).toEqual([1]);
    const readBacksBefore = readBacks;
    await settled(run.traceId);
    expect(readBacks - readBacksBefore).toBe(1);
    expect(await settledSpanCount(run.traceId)).toEqual({ n: 4, rows: 1 });
  });

  it('keeps the span limit exact for a new trace and for a known one', async () => {
    const fresh = agentRun(MAX_SPANS + 1);
    const answer = await send([fresh.root, ...fresh.children]);
    expect(answer).toEqual({ status: 200, rejected: 2 });
    expect((await spanRows(fresh.traceId)).rows).toBe(MAX_SPANS);

    const known = agentRun(MAX_SPANS + 1);
    expect(await send([known.root, ...known.children.slice(0, 3)])).toEqual({ status: 200, rejected: 0 });
    // 4 stored; of the next 4 (one of them a repeat) 2 fit.
    expect(await send(known.children.slice(2, 7))).toEqual({ status: 200, rejected: 2 });
    expect(await spanRows(known.traceId)).toEqual({ rows: MAX_SPANS, spans: MAX_SPANS });
  });

  it('a span sent twice in one request is stored once, its events once, and counts once toward the limit', async () => {
    const run = agentRun(MAX_SPANS - 1);
    // root + (MAX_SPANS - 1) chats = MAX_SPANS distinct spans; chat 0 again in the same request.
    expect(await send([run.root, run.children[0], ...run.children])).toEqual({ status: 200, rejected: 0 });
    expect(await spanRows(run.traceId)).toEqual({ rows: MAX_SPANS, spans: MAX_SPANS });
    const events = await count(
      `SELECT count() AS rows, uniqExact(span_id) AS spans FROM ${opened.table('event_generation_completed')} WHERE trace_id = {t:String}`,
      run.traceId,
    );
    expect(events).toEqual({ rows: MAX_SPANS - 1, spans: MAX_SPANS - 1 });
  });

  it('a late span reopens a settled trace: processed again with every span, its registry row kept', async () => {
    const run = agentRun(2);
    expect((await send([run.root, run.children[0]])).status).toBe(200);
    await settled(run.traceId);
    expect(await processedRows(run.traceId)).toEqual({ rows: 1 });
    expect(await registryRow(run.traceId)).toEqual([{ registrations: '1' }]);
    expect((await send([run.children[1]])).status).toBe(200);
    await settled(run.traceId, 2);
    expect(await processedRows(run.traceId)).toEqual({ rows: 2 });
    expect(await registryRow(run.traceId)).toEqual([{ registrations: '2' }]);
    expect(await settledSpanCount(run.traceId)).toEqual({ n: 3, rows: 1 });
  });

  it('a round that failed writing its rows is retried: one processed row', async () => {
    const run = agentRun(1);
    failNextInsert = 'event_trace_processed';
    expect((await send([run.root, ...run.children])).status).toBe(200);
    await settled(run.traceId);
    expect(failNextInsert).toBeNull();
    expect(await processedRows(run.traceId)).toEqual({ rows: 1 });
    expect(await settledSpanCount(run.traceId)).toEqual({ n: 2, rows: 1 });
  });

  it('settles a trace the registry does not hold, and creates no row for it', async () => {
    // Stored, then its row gone before it settles (what a trace stored before the registry and not
    // yet backfilled looks like).
    const run = agentRun(1);
    unregisterBeforeRecord.add(run.traceId);
    expect((await send([run.root, ...run.children])).status).toBe(200);
    expect(unregisterBeforeRecord.has(run.traceId)).toBe(false);
    await settled(run.traceId);
    expect(await processedRows(run.traceId)).toEqual({ rows: 1 });
    expect(await settledSpanCount(run.traceId)).toEqual({ n: 2, rows: 1 });
    expect(await registryRow(run.traceId)).toHaveLength(0);
  });

  it('until the backfill completes every trace is checked in ClickHouse; the backfill registers every stored trace', async () => {
    // The leader's own backfill job would mark the registry complete again under the test's feet.
    const leader = svc.service.deps.services.leader;
    expect(leader).toBeDefined();
    await leader!.stop();
    const stored = agentRun(2);
    expect((await send([stored.root, ...stored.children])).status).toBe(200);
    // An installation from before the registry: rows missing, not complete.
    await sql()`delete from stored_traces where trace_id = ${stored.traceId}`;
    await sql()`delete from shared_state where name = ${REGISTRY_COMPLETE_STATE}`;
    const before = duplicateChecks;
    const untrusted = agentRun(1);
    expect((await send([untrusted.root, ...untrusted.children])).status).toBe(200);
    expect(duplicateChecks - before).toBe(1);
    // The old trace re-sent: found in ClickHouse though the registry lacked it.
    expect((await send([stored.root, ...stored.children])).status).toBe(200);
    expect(await spanRows(stored.traceId)).toEqual({ rows: 3, spans: 3 });

    await sql()`delete from stored_traces where trace_id = ${stored.traceId}`;
    expect(await backfillStoredTraces(sql(), opened, 2)).toBeGreaterThanOrEqual(2);
    expect(await registryComplete()).toBe(true);
    expect(await registryRow(stored.traceId)).toHaveLength(1);
    const [{ n: missing }] = await sql()<{ n: number }[]>`select count(*)::int as n from stored_traces`;
    const [{ traces }] = (await opened.client.query({ query: `SELECT uniqExact(tenant_id, project_id, trace_id) AS traces FROM ${opened.table('spans')}`, format: 'JSONEachRow', clickhouse_settings: { output_format_json_quote_64bit_integers: 0 } }).then((r) => r.json<{ traces: number }>()));
    expect(missing).toBeGreaterThanOrEqual(traces);
    // Trusted again: a new trace costs no read.
    const after = duplicateChecks;
    const fresh = agentRun(1);
    expect((await send([fresh.root, ...fresh.children])).status).toBe(200);
    expect(duplicateChecks - after).toBe(0);
    await settled(fresh.traceId);
  });

  it('retention removes only rows untouched past the cutoff whose trace ClickHouse no longer holds', async () => {
    const tenantId = svc.service.bootstrap!.tenantId;
    const withSpans = agentRun(1);
    expect((await send([withSpans.root, ...withSpans.children])).status).toBe(200);
    await settled(withSpans.traceId);
    // A leftover of a failed flush (registered, nothing stored), and a trace whose spans are gone
    // but whose trace.processed row is not.
    const leftover = agentRun(1);
    await sql()`insert into stored_traces (tenant_id, project_id, trace_id) values (${tenantId}, ${projectId}, ${leftover.traceId})`;
    const processedOnly = agentRun(1);
    expect((await send([processedOnly.root, ...processedOnly.children])).status).toBe(200);
    await settled(processedOnly.traceId);
    // A mutation runs as a merge: merges of spans resume (no test below counts doubled rows).
    await opened.client.command({ query: `SYSTEM START MERGES ${opened.table('spans')}` });
    await opened.client.command({ query: `ALTER TABLE ${opened.table('spans')} DELETE WHERE trace_id = {t:String}`, query_params: { t: processedOnly.traceId }, clickhouse_settings: { mutations_sync: '2' } });
    expect((await spanRows(processedOnly.traceId)).rows).toBe(0);
    const recent = agentRun(1);
    await sql()`insert into stored_traces (tenant_id, project_id, trace_id) values (${tenantId}, ${projectId}, ${recent.traceId})`;

    const old = [withSpans.traceId, leftover.traceId, processedOnly.traceId];
    await sql()`update stored_traces set last_seen_at = now() - interval '100 days' where trace_id = any(${old}::uuid[])`;
    const retentionMs = 90 * 24 * 3_600_000;
    expect(await expireStoredTraces(sql(), opened, retentionMs, 2)).toBe(1);
    expect(await registryRow(leftover.traceId)).toHaveLength(0);
    for (const kept of [withSpans.traceId, processedOnly.traceId, recent.traceId]) expect(await registryRow(kept)).toHaveLength(1);
    // A writer touching an old row refreshes it, so the job no longer considers it.
    expect((await send([withSpans.children[0]])).status).toBe(200);
    const [{ fresh }] = await sql()<{ fresh: boolean }[]>`select last_seen_at > now() - interval '1 minute' as fresh from stored_traces where trace_id = ${withSpans.traceId}`;
    expect(fresh).toBe(true);
  });

  it('a retention delete racing a writer\'s registration keeps the row the writer refreshed', async () => {
    const key = { tenantId: svc.service.bootstrap!.tenantId, projectId, traceId: agentRun(1).traceId };
    await sql()`insert into stored_traces (tenant_id, project_id, trace_id, last_seen_at) values (${key.tenantId}, ${key.projectId}, ${key.traceId}, now() - interval '100 days')`;
    let expiring: Promise<number> | null = null;
    await sql().begin(async (tx) => {
      // The writer's upsert holds the row (refreshed, not yet committed) when the job looks: the job
      // still sees the old age and nothing in ClickHouse, so it tries to delete, and waits for the lock.
      const registration = await registerTraces(tx, [key]);
      expect(registration.created.size).toBe(0);
      expiring = expireStoredTraces(sql(), opened, 90 * 24 * 3_600_000);
      await waitFor(
        async () => ((await sql()`select 1 from pg_stat_activity where wait_event_type = 'Lock' and query like '%delete from stored_traces%'`).length > 0 ? true : undefined),
        30_000,
        'the retention delete waiting for the row lock',
      );
    });
    // After the commit the delete re-checks the age on the refreshed row and leaves it.
    expect(await expiring!).toBe(0);
    const rows = await sql()<{ registrations: string; fresh: boolean }[]>`
      select registrations::text, last_seen_at > now() - interval '1 minute' as fresh from stored_traces where trace_id = ${key.traceId}`;
    expect(rows).toEqual([{ registrations: '2', fresh: true }]);
  });
});
