/**
 * A thread's traces in a large project: the list filtered by thread_id answers exactly the thread's
 * traces (their newest summaries) and reads the granules that hold them, not the whole project.
 * Trace summaries are keyed by trace id, so a thread's traces lie anywhere in the project; the bloom
 * filter index on thread_id (clickhouse/022) finds them without FINAL, and the list reads those
 * traces through FINAL by the primary key. The store is shaped like a live one: four large parts and
 * many fresh parts of a few dozen summaries, each spanning nearly the whole id range in one granule
 * (which made FINAL with the index alone read most of the project). Counted by the engine's own
 * counters (system.events SelectedRows), so the machine's load does not matter. A trace whose newer
 * summary names another thread (a late span carried the conversation id) is listed under its new
 * thread only, while both summaries are still in separate parts.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { selectedRows } from '../../helpers/filled-store.js';
import { startTestService, type TestService } from '../../helpers/service.js';

/** Summaries seeded in four inserts (four large parts), a thread of five traces spread over them. */
const SUMMARIES = 200_000;
const THREADS = SUMMARIES / 5;
const PARTS = 4;
/** Fresh parts, as a live store holds between merges: FRESH_ROWS summaries each, of their own threads. */
const FRESH_PARTS = 30;
const FRESH_ROWS = 40;
/** The thread looked up: five traces in the large parts and one in the last fresh part. */
const THREAD = 4321;

/** Trace ids spread over the id range as UUIDs are: the hex MD5 of a name. */
const traceId = (name: string) => createHash('md5').update(name).digest('hex');

let svc: TestService;
let projectId: string;
let tenantId: string;

/** Summaries n in [from, to): trace of `n`, thread `thread-(n mod THREADS)`, n seconds before now. */
async function seedSummaries(from: number, to: number): Promise<void> {
  const { ch } = svc.service.deps;
  await ch.client.command({
    query: `INSERT INTO ${ch.table('traces')} (tenant_id, project_id, trace_id, otel_trace_id, timestamp, agent_name, thread_id, tool_calls, stats_tool_calls, span_count)
      SELECT {t:String}, {p:String}, lower(hex(MD5(toString(n)))), lower(hex(MD5(toString(n)))), now64(3) - toIntervalSecond(n), 'agent',
             concat('thread-', toString(n % ${THREADS})), '[]', '[]', 3
      FROM (SELECT number + ${from} AS n FROM numbers(${to - from}))`,
    query_params: { t: tenantId, p: projectId },
  });
}

/** Fresh part `k`: FRESH_ROWS summaries named `fresh-k-i` on threads of their own, the last on THREAD when asked. */
async function seedFresh(k: number, onThread: boolean): Promise<void> {
  const { ch } = svc.service.deps;
  await ch.client.command({
    query: `INSERT INTO ${ch.table('traces')} (tenant_id, project_id, trace_id, otel_trace_id, timestamp, agent_name, thread_id, tool_calls, stats_tool_calls, span_count)
      SELECT {t:String}, {p:String}, lower(hex(MD5(concat('fresh-${k}-', toString(number))))), lower(hex(MD5(concat('fresh-${k}-', toString(number))))),
             now64(3), 'agent', if({onThread:UInt8} AND number = ${FRESH_ROWS - 1}, 'thread-${THREAD}', concat('fresh-thread-${k}-', toString(number))), '[]', '[]', 3
      FROM numbers(${FRESH_ROWS})`,
    query_params: { t: tenantId, p: projectId, onThread: onThread ? 1 : 0 },
  });
}

/** One summary of trace `moved` on `thread`, processed at `processedAt`. */
async function seedMoved(thread: string, processedAt: string): Promise<void> {
  const { ch } = svc.service.deps;
  await ch.client.command({
    query: `INSERT INTO ${ch.table('traces')} (tenant_id, project_id, trace_id, otel_trace_id, timestamp, agent_name, thread_id, tool_calls, stats_tool_calls, span_count, processed_at)
      VALUES ({t:String}, {p:String}, 'moved', 'ffffffffffffffffffffffffffffffff', now64(3), 'agent', {thread:String}, '[]', '[]', 3, {at:DateTime64(3)})`,
    query_params: { t: tenantId, p: projectId, thread, at: processedAt },
  });
}

async function threadList(thread: string): Promise<{ ids: string[]; rowsRead: number }> {
  const before = await selectedRows(svc.service.deps.ch);
  const res = await svc.call('GET', `/projects/${projectId}/traces?thread_id=${thread}&limit=100`);
  const rowsRead = (await selectedRows(svc.service.deps.ch)) - before;
  expect(res.status).toBe(200);
  return { ids: (res.body.traces as { id: string }[]).map((t) => t.id), rowsRead };
}

beforeAll(async () => {
  svc = await startTestService();
  projectId = (await svc.newProject('threads')).id;
  const [row] = await svc.service.deps.sql<{ tenant_id: string }[]>`select tenant_id::text from projects where id = ${projectId}`;
  tenantId = row.tenant_id;
  const { ch } = svc.service.deps;
  // The parts stay apart, as on a store still merging: the moved trace's two summaries in two of them.
  await ch.client.command({ query: `SYSTEM STOP MERGES ${ch.table('traces')}` });
  const step = SUMMARIES / PARTS;
  for (let p = 0; p < PARTS; p++) await seedSummaries(p * step, (p + 1) * step);
  for (let k = 0; k < FRESH_PARTS; k++) await seedFresh(k, k === FRESH_PARTS - 1);
  await seedMoved('moved-from', '2026-01-01 00:00:00.000');
  await seedMoved('moved-to', '2026-01-02 00:00:00.000');
}, 120_000);

afterAll(async () => {
  await svc?.service.deps.ch.client.command({ query: `SYSTEM START MERGES ${svc.service.deps.ch.table('traces')}` }).catch(() => {});
  await svc?.stop();
});

describe('the trace list of one thread in a large project', () => {
  it('answers exactly the thread\'s traces, newest first, reading a small share of the project', async () => {
    const { ids, rowsRead } = await threadList(`thread-${THREAD}`);
    // The fresh trace is the newest; trace n started n seconds ago, so the smallest n comes next.
    const older = Array.from({ length: 5 }, (_, k) => traceId(String(THREAD + k * THREADS)));
    expect(ids).toEqual([traceId(`fresh-${FRESH_PARTS - 1}-${FRESH_ROWS - 1}`), ...older]);
    // The project holds SUMMARIES + FRESH_PARTS × FRESH_ROWS summaries. The thread's traces lie in a
    // granule of 256 rows of each large part and in the fresh parts, which are read whole.
    expect(rowsRead).toBeGreaterThan(0);
    expect(rowsRead).toBeLessThan(SUMMARIES / 10);
  });

  it('lists a trace under the thread its newest summary names, not the one an older summary named', async () => {
    expect((await threadList('moved-to')).ids).toEqual(['moved']);
    expect((await threadList('moved-from')).ids).toEqual([]);
  });

  it('answers an empty list for a thread no trace names, reading little', async () => {
    const { ids, rowsRead } = await threadList('no-such-thread');
    expect(ids).toEqual([]);
    expect(rowsRead).toBeLessThan(SUMMARIES / 10);
  });
});
