/**
 * The stored-trace registry under a window (TRACE_REGISTRY_WINDOW_HOURS = 1), against the real
 * stores: a created row is trusted as "nothing stored" only when every span of the flush starts
 * inside the window; a created trace with an older span is checked in ClickHouse and never doubled;
 * the window's retention deletes rows whose spans are still
 * stored, keeps rows with recent or future-skewed spans, and a re-sent recent batch after it ran is
 * not doubled; rows from migration 021 (latest span unknown) keep the lifetime rule.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queueDepth } from '../../../src/ingest/settle/settle-queue.js';
import { traceKeyString } from '../../../src/spans/stored-spans.js';
import { registerTraces, REGISTRY_COMPLETE_STATE } from '../../../src/ingest/settle/stored-traces.js';
import { backfillStoredTraces, expireStoredTraces, expireStoredTracesWindow, expireUnderWindow, registryWindowMs } from '../../../src/ingest/settle/stored-traces-jobs.js';
import { lookoutTraceId } from '../../../src/spans/trace-id.js';
import { recordWindow, RegistryWindow, REGISTRY_WINDOWS_STATE } from '../../../src/ingest/settle/stored-traces-window.js';
import { migrationDirs } from '../../../src/app/service.js';
import { openClickHouse, type ClickHouseStore } from '../../../src/platform/clickhouse/clickhouse.js';
import { statementKind } from '../../../src/platform/clickhouse/sql/statement-stats.js';
import { migratePostgres, readMigrations } from '../../../src/platform/migrations.js';
import { connectPostgres } from '../../../src/platform/postgres/postgres.js';
import { chainRequests } from '../../helpers/span-chain.js';
import { removeDir, startTestService, type TestService } from '../../helpers/service.js';
import { copyMigratedStores } from '../../helpers/migrated-stores.js';
import { tempDataDir } from '../../helpers/temp-dir.js';
import { postOtlp, waitFor } from './otlp-client.js';

const HOUR = 3_600_000;
const WINDOW_MS = HOUR;
let svc: TestService;
let opened: ClickHouseStore;
let dataDir: string;
let projectId: string;
/** The writer's duplicate checks so far (ingest-lane grouped reads of `spans`). */
let duplicateChecks = 0;

beforeAll(async () => {
  dataDir = tempDataDir('lookout-registry-window-');
  // The store opened here starts migrated, as the service's own would (test/helpers/migrated-stores.ts).
  await copyMigratedStores(dataDir, { postgres: false, clickhouse: true });
  opened = await openClickHouse({ url: null, user: 'default', password: '', database: 'lookout', cluster: null, dataDir });
  const ch: ClickHouseStore = {
    ...opened,
    read: (statement, options) => {
      if (statementKind(options.lane, statement) === 'ingest select spans grouped') duplicateChecks++;
      return opened.read(statement, options);
    },
  };
  svc = await startTestService({ TRACE_SETTLE_MS: '300', TRACE_MAX_WAIT_MS: '30000', TRACE_REGISTRY_WINDOW_HOURS: '1' }, dataDir, { clickhouse: ch });
  projectId = (await svc.newProject('registry-window')).id;
  // Merges would fold repeated rows together before the tests count them.
  for (const table of ['spans', 'event_trace_processed']) await opened.client.command({ query: `SYSTEM STOP MERGES ${opened.table(table)}` });
  await waitFor(async () => ((await sql()`select 1 from shared_state where name = ${REGISTRY_COMPLETE_STATE}`).length === 1 ? true : undefined), 30_000, 'registry backfill');
}, 120_000);

afterAll(async () => {
  await svc?.stop();
  await opened?.close();
  if (dataDir) removeDir(dataDir);
});

const sql = () => svc.service.deps.sql;
const tenantId = () => svc.service.bootstrap!.tenantId;

/** A chain trace of `length` spans starting at `startMs` (each 1 µs after the one before). */
function chain(length: number, startMs: number) {
  const { traceId, bodies } = chainRequests({ length, startMs });
  return { traceId: lookoutTraceId(projectId, traceId), body: bodies[0] };
}

async function send(body: object): Promise<number> {
  const answer = await postOtlp(svc.url, svc.adminKey, JSON.stringify(body), { contentType: 'application/json', headers: { 'x-lookout-project': projectId } });
  return answer.status;
}

async function count(query: string, traceId: string): Promise<Record<string, number>> {
  const result = await opened.client.query({ query, query_params: { t: traceId }, format: 'JSONEachRow', clickhouse_settings: { output_format_json_quote_64bit_integers: 0 } });
  return (await result.json<Record<string, number>>())[0];
}

/** Span rows of a trace as stored (no FINAL, merges stopped: a doubled span counts twice). */
const spanRows = (traceId: string) => count(`SELECT count() AS rows, uniqExact(span_id) AS spans FROM ${opened.table('spans')} WHERE trace_id = {t:String}`, traceId);
const processedRows = (traceId: string) =>
  count(`SELECT count() AS rows FROM ${opened.table('event_trace_processed')} WHERE trace_id = {t:String}`, traceId);
const settledSpanCount = (traceId: string) => count(`SELECT any(span_count) AS n FROM ${opened.table('traces')} FINAL WHERE trace_id = {t:String} AND preview = 0`, traceId);

async function settled(traceId: string, n = 1): Promise<void> {
  await waitFor(async () => ((await processedRows(traceId)).rows >= n && (await queueDepth(sql())) === 0 ? true : undefined), 30_000, `trace settled ${n}x`);
}

async function row(traceId: string) {
  return sql()<{ latest_ms: number | null; registrations: string }[]>`
    select (extract(epoch from latest_span_at) * 1000)::float8 as latest_ms, registrations::text
    from stored_traces where trace_id = ${traceId}`;
}

type ChainBody = { resourceSpans: { scopeSpans: { spans: Record<string, unknown>[] }[] }[] };

/** A request of one more span of the chain's trace (a child of its first span) starting at `startMs`. */
function withLateSpan(body: object, startMs: number): object {
  const chainBody = body as ChainBody;
  const [root] = chainBody.resourceSpans[0].scopeSpans[0].spans;
  const startNs = BigInt(startMs) * 1_000_000n;
  const late = { ...root, spanId: 'ffffffffffffff01', parentSpanId: root.spanId, name: 'late step', attributes: [],
    startTimeUnixNano: startNs.toString(), endTimeUnixNano: (startNs + 1_000_000n).toString() };
  return { resourceSpans: [{ ...chainBody.resourceSpans[0], scopeSpans: [{ ...chainBody.resourceSpans[0].scopeSpans[0], spans: [late] }] }] };
}

/** As if `ms` had passed for the row: both of its times moved back. */
async function age(traceId: string, ms: number): Promise<void> {
  await sql()`
    update stored_traces set last_seen_at = last_seen_at - ${ms}::bigint * interval '1 millisecond',
                             latest_span_at = latest_span_at - ${ms}::bigint * interval '1 millisecond'
    where trace_id = ${traceId}`;
}

describe('the stored-trace registry under a window', () => {
  it('takes the window from TRACE_REGISTRY_WINDOW_HOURS only when it is shorter than the spans\' lifetime', () => {
    expect(registryWindowMs(svc.service.deps.config)).toBe(WINDOW_MS);
    expect(registryWindowMs({ traceRegistryWindowMs: null, ingestMaxFutureSkewMs: 0 })).toBeNull();
    expect(registryWindowMs({ traceRegistryWindowMs: 91 * 24 * HOUR, ingestMaxFutureSkewMs: 24 * HOUR })).toBeNull();
    expect(registryWindowMs({ traceRegistryWindowMs: 90 * 24 * HOUR, ingestMaxFutureSkewMs: 24 * HOUR })).toBe(90 * 24 * HOUR);
  });

  it('trusts a created trace whose spans all start inside the window, and keeps its latest span start', async () => {
    const startMs = Date.now() - 10 * 60_000;
    const t = chain(3, startMs);
    const before = duplicateChecks;
    expect(await send(t.body)).toBe(200);
    expect(duplicateChecks - before).toBe(0);
    // Span starts are whole microseconds apart (1 µs): the latest is the start in ms.
    expect(await row(t.traceId)).toEqual([{ latest_ms: startMs, registrations: '1' }]);
    await settled(t.traceId);
    expect(await processedRows(t.traceId)).toEqual({ rows: 1 });
  });

  it('checks a created trace with a span older than the window: a re-sent old batch after retention is not doubled', async () => {
    const t = chain(3, Date.now() - 3 * HOUR);
    // New and old: created, but not trusted, so ClickHouse is read (and finds nothing).
    let before = duplicateChecks;
    expect(await send(t.body)).toBe(200);
    expect(duplicateChecks - before).toBe(1);
    expect(await row(t.traceId)).toHaveLength(1);
    await settled(t.traceId);
    expect(await processedRows(t.traceId)).toEqual({ rows: 1 });

    // Untouched for the window, latest span older than it: the window's retention deletes the row
    // although ClickHouse still holds every span.
    await age(t.traceId, 2 * HOUR);
    expect(await expireStoredTracesWindow(sql(), WINDOW_MS)).toBeGreaterThanOrEqual(1);
    expect(await row(t.traceId)).toHaveLength(0);
    expect(await spanRows(t.traceId)).toEqual({ rows: 3, spans: 3 });

    // The exporter re-sends the batch: the row is created again, the old spans send it to ClickHouse.
    before = duplicateChecks;
    expect(await send(t.body)).toBe(200);
    expect(duplicateChecks - before).toBe(1);
    expect(await spanRows(t.traceId)).toEqual({ rows: 3, spans: 3 });
    expect((await row(t.traceId))[0]).toMatchObject({ registrations: '1' });
    await settled(t.traceId, 2);
    expect(await processedRows(t.traceId)).toEqual({ rows: 2 });
    expect(await settledSpanCount(t.traceId)).toEqual({ n: 3 });
  });

  it('keeps a row whose latest span is recent however long it was untouched: a re-sent recent batch is not doubled', async () => {
    // A trace begun long ago whose last span started 5 minutes ago.
    const t = chain(2, Date.now() - 3 * HOUR);
    const lateBody = withLateSpan(t.body, Date.now() - 5 * 60_000);
    expect(await send(t.body)).toBe(200);
    expect(await send(lateBody)).toBe(200);
    await settled(t.traceId);
    // Untouched for two hours (as far as last_seen_at says), its latest span 5 minutes old: kept.
    await sql()`update stored_traces set last_seen_at = now() - interval '2 hours' where trace_id = ${t.traceId}`;
    await expireStoredTracesWindow(sql(), WINDOW_MS);
    expect(await row(t.traceId)).toHaveLength(1);
    const before = duplicateChecks;
    expect(await send(lateBody)).toBe(200);
    expect(duplicateChecks - before).toBe(1);
    expect(await spanRows(t.traceId)).toEqual({ rows: 3, spans: 3 });
  });

  it('keeps a row with a future-skewed span until that start is a window old', async () => {
    const t = chain(2, Date.now() + 2 * HOUR);
    expect(await send(t.body)).toBe(200);
    await settled(t.traceId);
    await sql()`update stored_traces set last_seen_at = now() - interval '3 hours' where trace_id = ${t.traceId}`;
    await expireStoredTracesWindow(sql(), WINDOW_MS);
    expect(await row(t.traceId)).toHaveLength(1);
    // Hours on, its span started just inside the window: still kept; just past it: removed. Placed
    // against the database's clock, not the test's, so a slow send or settle moves nothing.
    const place = (latestAgoMs: number) =>
      sql()`update stored_traces set last_seen_at = now() - interval '6 hours', latest_span_at = now() - ${latestAgoMs}::bigint * interval '1 millisecond'
            where trace_id = ${t.traceId}`;
    await place(WINDOW_MS - 30_000);
    await expireStoredTracesWindow(sql(), WINDOW_MS);
    expect(await row(t.traceId)).toHaveLength(1);
    await place(WINDOW_MS + 30_000);
    await expireStoredTracesWindow(sql(), WINDOW_MS);
    expect(await row(t.traceId)).toHaveLength(0);
  });

  it('the claim at the statement: a created row is trusted exactly when its earliest span is inside the window', async () => {
    const now = Date.now();
    const key = (n: string) => ({ tenantId: tenantId(), projectId, traceId: lookoutTraceId(projectId, n.repeat(32)) });
    const inside = { ...key('1'), spanStartMs: [now - WINDOW_MS + 60_000, now] as [number, number] };
    const straddling = { ...key('2'), spanStartMs: [now - WINDOW_MS - 60_000, now] as [number, number] };
    const unknown = key('3');
    const registration = await registerTraces(sql(), [inside, straddling, unknown], WINDOW_MS);
    expect(registration.created).toEqual(new Set([traceKeyString(inside)]));
    for (const k of [inside, straddling, unknown]) expect(registration.registrations.get(traceKeyString(k))).toBe(1);
    // Unknown span starts: nothing trusted, latest unknown (NULL: the lifetime rule keeps the row).
    expect((await row(unknown.traceId))[0]).toMatchObject({ latest_ms: null });
    // A later flush with known starts leaves an unknown latest unknown, and raises a known one.
    await registerTraces(sql(), [{ ...unknown, spanStartMs: [now, now] }, { ...inside, spanStartMs: [now + 5000, now + 5000] }], WINDOW_MS);
    expect((await row(unknown.traceId))[0].latest_ms).toBeNull();
    expect((await row(inside.traceId))[0]).toMatchObject({ latest_ms: now + 5000, registrations: '2' });
    // Without a window (the lifetime rule) every created row is trusted, as before.
    const lifetime = await registerTraces(sql(), [{ ...key('4'), spanStartMs: [now - 30 * 24 * HOUR, now] }], null);
    expect(lifetime.created.size).toBe(1);
    // When a trace's first spans were written is kept only without a window: under one, a created
    // row's trace may have older spans (an earlier row deleted by the window).
    const windowed = await registerTraces(sql(), [{ ...key('5'), spanStartMs: [now, now] }], WINDOW_MS, now);
    expect(windowed.created.size).toBe(1);
    expect(windowed.storedSince.size).toBe(0);
    const dated = await registerTraces(sql(), [{ ...key('6'), spanStartMs: [now, now] }], null, now);
    expect(dated.storedSince.get(traceKeyString(key('6')))).toBe(now);
    // A later flush keeps it and is told it: its duplicate check reads the spans ingested since.
    const again = await registerTraces(sql(), [{ ...key('6'), spanStartMs: [now, now] }], null, now + 5000);
    expect(again.created.size).toBe(0);
    expect(again.storedSince.get(traceKeyString(key('6')))).toBe(now);
  });
});

describe('the window the retention job records', () => {
  const LIFETIME = 91 * 24 * HOUR;
  const setEntry = (windowMs: number, field: 'since' | 'until', at: number) =>
    sql()`update shared_state set value = jsonb_set(value, ${[String(windowMs), field]}::text[], to_jsonb(${new Date(at).toISOString()}::text))
          where name = ${REGISTRY_WINDOWS_STATE}`;

  it('deletes with a window only once it was recorded ahead, and binds every writer meanwhile', async () => {
    await sql()`delete from shared_state where name = ${REGISTRY_WINDOWS_STATE}`;
    const t = chain(2, Date.now() - 3 * HOUR);
    expect(await send(t.body)).toBe(200);
    await settled(t.traceId);
    await age(t.traceId, 2 * HOUR);
    // First run: recorded, nothing deleted yet.
    expect(await expireUnderWindow(sql(), WINDOW_MS, LIFETIME)).toBe(0);
    expect(await row(t.traceId)).toHaveLength(1);
    // Writers configured with no window, or a longer one, use the recorded one; a shorter own one stays.
    expect(await new RegistryWindow(null, 0).current(sql())).toBe(WINDOW_MS);
    expect(await new RegistryWindow(24 * HOUR, 0).current(sql())).toBe(WINDOW_MS);
    await recordWindow(sql(), 2 * HOUR, LIFETIME);
    expect(await new RegistryWindow(null, 0).current(sql())).toBe(WINDOW_MS);
    // Recorded long enough ago (its first record kept): the next run deletes.
    await setEntry(WINDOW_MS, 'since', Date.now() - 11 * 60_000);
    expect(await expireUnderWindow(sql(), WINDOW_MS, LIFETIME)).toBeGreaterThanOrEqual(1);
    expect(await row(t.traceId)).toHaveLength(0);
    // Once spans it may have left without a row are past their lifetime, a window binds nobody.
    await setEntry(WINDOW_MS, 'until', Date.now() - 1000);
    expect(await new RegistryWindow(null, 0).current(sql())).toBe(2 * HOUR);
    await setEntry(2 * HOUR, 'until', Date.now() - 1000);
    expect(await new RegistryWindow(null, 0).current(sql())).toBeNull();
    // A writer re-reads only every so often (the lead time covers it).
    const cached = new RegistryWindow(null, 3_600_000);
    expect(await cached.current(sql())).toBeNull();
    await recordWindow(sql(), WINDOW_MS, LIFETIME);
    expect(await cached.current(sql())).toBeNull();
    expect(await new RegistryWindow(null, 0).current(sql())).toBe(WINDOW_MS);
    // Expired entries are dropped at the next record.
    const [{ value }] = await sql()<{ value: Record<string, unknown> }[]>`select value from shared_state where name = ${REGISTRY_WINDOWS_STATE}`;
    expect(Object.keys(value)).toEqual([String(WINDOW_MS)]);
  });
});

describe('the backfill under a window', () => {
  it('records each trace\'s latest stored span start, raising what a writer registered', async () => {
    const startMs = Date.now() - 20 * 60_000;
    const missing = chain(2, startMs);
    const partial = chain(3, startMs + 1000);
    expect(await send(missing.body)).toBe(200);
    expect(await send(partial.body)).toBe(200);
    // One trace stored before the registry; one whose row knew only an earlier span.
    await sql()`delete from stored_traces where trace_id = ${missing.traceId}`;
    await sql()`update stored_traces set latest_span_at = latest_span_at - interval '1 hour' where trace_id = ${partial.traceId}`;
    await sql()`delete from shared_state where name = ${REGISTRY_COMPLETE_STATE}`;
    expect(await backfillStoredTraces(sql(), opened)).toBeGreaterThanOrEqual(2);
    expect((await row(missing.traceId))[0].latest_ms).toBe(startMs);
    expect((await row(partial.traceId))[0].latest_ms).toBe(startMs + 1000);
  });
});

describe('migration 022 on rows from 021', () => {
  it('keeps them with their latest span unknown: the window leaves them to the lifetime rule', async () => {
    const url = new URL(svc.postgresUrl());
    await sql().unsafe('create database lookout_registry_022');
    url.pathname = '/lookout_registry_022';
    const other = connectPostgres(url.toString(), { max: 2 });
    const previousDir = tempDataDir('lookout-pg-migrations-');
    try {
      for (const file of readMigrations(migrationDirs.postgres).filter((f) => f.name < '022')) fs.writeFileSync(path.join(previousDir, file.name), file.text);
      await migratePostgres(other, previousDir);
      const [tenant, project] = [crypto.randomUUID(), crypto.randomUUID()];
      const keys = ['a', 'b'].map((n) => ({ tenantId: tenant, projectId: project, traceId: lookoutTraceId(project, n.repeat(32)) })).sort((x, y) => (x.traceId < y.traceId ? -1 : 1));
      // 021's text keys: a row whose key is not a UUID (foreign data the backfill once copied) goes.
      await other`
        insert into stored_traces (tenant_id, project_id, trace_id, first_seen_at, last_seen_at, registrations, first_settled_at)
        values (${tenant}, ${project}, ${keys[0].traceId}, now() - interval '200 days', now() - interval '100 days', 3, now() - interval '100 days'),
               (${tenant}, ${project}, ${keys[1].traceId}, now() - interval '2 hours', now() - interval '2 hours', 1, null),
               ('foreign-tenant', 'p', 'not-a-uuid', now(), now(), 1, null),
               (${tenant}, ${project.toUpperCase()}, ${keys[1].traceId}, now() - interval '2 hours', now() - interval '2 hours', 1, null)`;
      // The last row spells the second key in upper case (ClickHouse text the backfill copied): one uuid
      // key, so one row of the two stays instead of the primary key's rebuild failing.
      expect(await migratePostgres(other, migrationDirs.postgres)).toEqual(readMigrations(migrationDirs.postgres).filter((f) => f.name >= '022').map((f) => f.name));
      const columns = await other<{ column_name: string; data_type: string }[]>`
        select column_name, data_type from information_schema.columns where table_name = 'stored_traces' order by ordinal_position`;
      expect(columns).toEqual([
        { column_name: 'tenant_id', data_type: 'uuid' },
        { column_name: 'project_id', data_type: 'uuid' },
        { column_name: 'trace_id', data_type: 'uuid' },
        { column_name: 'last_seen_at', data_type: 'timestamp with time zone' },
        { column_name: 'registrations', data_type: 'bigint' },
        { column_name: 'latest_span_at', data_type: 'timestamp with time zone' },
        { column_name: 'stored_since_ms', data_type: 'bigint' },
      ]);
      const rows = await other<{ trace_id: string; latest_span_at: Date | null; registrations: string }[]>`
        select trace_id, latest_span_at, registrations::text from stored_traces order by trace_id`;
      expect(rows).toEqual([
        { trace_id: keys[0].traceId, latest_span_at: null, registrations: '3' },
        { trace_id: keys[1].traceId, latest_span_at: null, registrations: '1' },
      ]);
      // Both untouched past the window, but their spans' times are unknown: the window deletes neither.
      expect(await expireStoredTracesWindow(other, WINDOW_MS)).toBe(0);
      // A flush of one keeps it unknown (its older spans may be later than the flush's).
      await other`insert into shared_state (name, value) values (${REGISTRY_COMPLETE_STATE}, '{}')`;
      const registration = await registerTraces(other, [{ ...keys[1], spanStartMs: [Date.now(), Date.now()] }], null, Date.now());
      expect(registration.created.size).toBe(0);
      // When its first spans were written is unknown too (sql/028): its duplicate check reads by key.
      expect(registration.storedSince.size).toBe(0);
      expect((await other<{ latest_span_at: Date | null }[]>`select latest_span_at from stored_traces where trace_id = ${keys[1].traceId}`)[0].latest_span_at).toBeNull();
      // The lifetime rule still applies: past 90 days and nothing of the trace in ClickHouse.
      expect(await expireStoredTraces(other, opened, 90 * 24 * HOUR)).toBe(1);
      expect((await other`select trace_id from stored_traces`).map((r) => r.trace_id)).toEqual([keys[1].traceId]);
    } finally {
      await other.end();
      fs.rmSync(previousDir, { recursive: true, force: true });
      await sql().unsafe('drop database lookout_registry_022 with (force)');
    }
  });
});
