/**
 * The stored-trace registry's backfill over a `spans` table large enough to span several granules:
 * a late page reads only the granules from its cursor on (the primary key is
 * pruned), the cursor survives a failed run in shared_state, and the next run resumes from it and
 * completes the registry. Real stores: embedded PostgreSQL and chdb.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { REGISTRY_COMPLETE_STATE } from '../../../src/ingest/settle/stored-traces.js';
import { BACKFILL_CURSOR_STATE, backfillPage, backfillStoredTraces } from '../../../src/ingest/settle/stored-traces-jobs.js';
import type { ClickHouseStore } from '../../../src/platform/clickhouse/clickhouse.js';
import { sql as chSql } from '../../../src/platform/clickhouse/sql/fragment.js';
import { removeDir, startTestService, type TestService } from '../../helpers/service.js';
import { tempDataDir } from '../../helpers/temp-dir.js';
import { waitFor } from './otlp-client.js';

const TENANT = '0000000b-0000-4000-8000-000000000001';
const PROJECT = '0000000b-0000-4000-8000-000000000002';
/** Trace ids are UUIDs (as Lookout's are), numbered so key order is numeric order. */
const TRACE_PREFIX = '00000000-0000-4000-8000-';
const traceIdOf = (n: number) => TRACE_PREFIX + String(n).padStart(12, '0');
/** 20,000 traces of 3 spans: 60,000 rows in one part, 8 granules of 8192 rows. */
const TRACES = 20_000;
const SPANS_PER_TRACE = 3;
const PAGE = 4000;
let svc: TestService;
let dataDir: string;

const sql = () => svc.service.deps.sql;
const ch = () => svc.service.deps.ch;

beforeAll(async () => {
  dataDir = tempDataDir('lookout-backfill-');
  svc = await startTestService({}, dataDir);
  await waitFor(async () => ((await sql()`select 1 from shared_state where name = ${REGISTRY_COMPLETE_STATE}`).length === 1 ? true : undefined), 30_000, 'first backfill');
  // The test runs the backfill itself; the leader's job would race it.
  const leader = svc.service.deps.services.leader;
  expect(leader).toBeDefined();
  await leader!.stop();
  const spans = ch().table('spans');
  // Trace ids padded so key order is numeric order; one INSERT makes one part (merges cannot reorder it).
  // A trace of keys that are not UUIDs (foreign data no writer could register) is skipped.
  await ch().client.command({
    query: `INSERT INTO ${spans} (tenant_id, project_id, trace_id, span_id, timestamp)
            SELECT {t:String}, {p:String}, concat({prefix:String}, leftPad(toString(intDiv(number, ${SPANS_PER_TRACE})), 12, '0')), toString(number), now64(3)
            FROM numbers(${TRACES * SPANS_PER_TRACE})
            UNION ALL SELECT 'foreign-tenant', 'p', 'not-a-uuid', '1', now64(3)`,
    query_params: { t: TENANT, p: PROJECT, prefix: TRACE_PREFIX },
  });
  // An installation whose spans predate the registry.
  await sql()`delete from shared_state where name = ${REGISTRY_COMPLETE_STATE}`;
}, 120_000);

afterAll(async () => {
  await svc?.stop();
  if (dataDir) removeDir(dataDir);
});

/** Backfill page reads so far, and a failure injected into page number `failAt` (1-based, counted from the last reset). */
let pages = 0;
let failAt = 0;
function counting(): ClickHouseStore {
  const store = ch();
  return {
    ...store,
    read: (statement, options) => {
      pages++;
      if (pages === failAt) return Promise.reject(new Error('injected: backfill page failed'));
      return store.read(statement, options);
    },
  };
}

const registered = async () => (await sql()<{ n: number }[]>`select count(*)::int as n from stored_traces where tenant_id = ${TENANT}`)[0].n;

it('a failed backfill keeps its cursor; a late page reads only granules from the cursor on; the next run resumes and completes', async () => {
  pages = 0;
  failAt = 5;
  await expect(backfillStoredTraces(sql(), counting(), PAGE)).rejects.toThrow('injected');
  // Four pages committed with their cursor; the registry is not complete.
  const [saved] = await sql()<{ value: { tenant_id: string; project_id: string; trace_id: string; traces: number } }[]>`
    select value from shared_state where name = ${BACKFILL_CURSOR_STATE}`;
  expect(saved.value).toEqual({ tenant_id: TENANT, project_id: PROJECT, trace_id: traceIdOf(4 * PAGE - 1), traces: 4 * PAGE });
  expect(await registered()).toBe(4 * PAGE);
  expect(await sql()`select 1 from shared_state where name = ${REGISTRY_COMPLETE_STATE}`).toHaveLength(0);

  // The page after the cursor: its rows are the last 12,000 of 60,000, so the primary key leaves at
  // most the 2 granules holding them plus the one the cursor falls in.
  const explain = await ch().read<{ explain: string }>(chSql`EXPLAIN indexes = 1 ${backfillPage(ch(), saved.value, PAGE)}`, { lane: 'system' });
  const lines = explain.map((r) => r.explain.trim());
  const primaryKey = lines.indexOf('PrimaryKey');
  expect(primaryKey).toBeGreaterThan(-1);
  const granules = lines.slice(primaryKey).find((l) => l.startsWith('Granules:'));
  const [selected, total] = /Granules: (\d+)\/(\d+)/.exec(granules ?? '')!.slice(1).map(Number);
  expect(total).toBeGreaterThanOrEqual(8);
  expect(selected).toBeLessThanOrEqual(3);

  // Resumed: the remaining 4000 traces in one page, then an empty page; not from the start.
  pages = 0;
  failAt = 0;
  expect(await backfillStoredTraces(sql(), counting(), PAGE)).toBe(TRACES - 4 * PAGE);
  expect(pages).toBe(2);
  expect(await registered()).toBe(TRACES);
  const [complete] = await sql()<{ value: { traces: number } }[]>`select value from shared_state where name = ${REGISTRY_COMPLETE_STATE}`;
  expect(complete.value.traces).toBe(TRACES);
  expect((await sql()<{ n: number }[]>`select count(*)::int as n from stored_traces`)[0].n).toBe(TRACES);
  expect(await sql()`select 1 from shared_state where name = ${BACKFILL_CURSOR_STATE}`).toHaveLength(0);
  // Complete: the next run reads nothing.
  expect(await backfillStoredTraces(sql(), counting(), PAGE)).toBe(0);
  expect(pages).toBe(2);
}, 120_000);
