import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lookoutTraceId } from '../../../src/spans/trace-id.js';
import { postgresProcesses, postmasterPid, signalAll } from '../../helpers/postgres-process.js';
import { readyz as readyzOf, sleep, timed, until } from '../../helpers/fault-probes.js';
import { startTestService, type TestService } from '../../helpers/service.js';
import { EXPORTER_TIMEOUT_MS, GENERATIONS_PER_RUN, SPANS_PER_RUN, SteadySender } from '../../helpers/steady-sender.js';

/**
 * The embedded PostgreSQL frozen (SIGSTOP of the postmaster and all its processes) and then killed
 * (SIGKILL of the postmaster), each during steady ingest: every answer is 200 or a 503 with
 * Retry-After, none hangs past the exporter's timeout and none is a 500; /readyz names PostgreSQL
 * within a few seconds; Lookout recovers by itself (the killed server is restarted on its data
 * directory); afterwards every acknowledged span is stored exactly once. Bounds are generous for a
 * loaded 2-core runner.
 */

let svc: TestService;
let project: { id: string };
let ingestKey: string;
let sender: SteadySender;

const readyz = () => readyzOf(svc.url);

beforeAll(async () => {
  svc = await startTestService({ REQUEST_TIMEOUT_SECONDS: '8', INGEST_TIMEOUT_MS: '5000' });
  project = await svc.newProject('faults');
  ingestKey = await svc.newKey('ingest');
  sender = new SteadySender(svc.url, ingestKey, project.id);
  sender.start();
  await sleep(1_500);
});

afterAll(async () => {
  // Never leave a frozen server behind, whatever failed.
  try {
    signalAll(postgresProcesses(svc.dataDir), 'SIGCONT');
  } catch {
    // no server
  }
  await sender?.stop().catch(() => {});
  await svc?.stop();
});

function expectHonestAnswers(since: number): void {
  const answers = sender.answersSince(since);
  expect(answers.length).toBeGreaterThan(0);
  for (const a of answers) {
    expect([200, 503]).toContain(a.status);
    if (a.status === 503) {
      expect(a.code).toBe('store_unavailable');
      expect(Number(a.retryAfter)).toBeGreaterThan(0);
    }
    // INGEST_TIMEOUT_MS is 5 s; anything under the exporter's 10 s timeout is an answer it reads.
    expect(a.ms).toBeLessThan(EXPORTER_TIMEOUT_MS);
  }
  expect(sender.hung).toBe(0);
}

describe('embedded PostgreSQL faults during steady ingest', () => {
  it('frozen: ingest 503 + Retry-After within the bound, /readyz 503 naming postgres, REST 503 store_unavailable, then recovery', async () => {
    const since = Date.now();
    const frozen = postgresProcesses(svc.dataDir);
    signalAll(frozen, 'SIGSTOP');
    try {
      await sleep(1_000);
      const ready = await readyz();
      expect(ready.status).toBe(503);
      expect(ready.body).toMatchObject({ postgres: false, clickhouse: true, failed: ['postgres'] });
      expect(ready.ms).toBeLessThan(5_000);
      const rest = await timed(() => svc.call('GET', '/projects'));
      expect(rest.value.status).toBe(503);
      expect(rest.value.body.code).toBe('store_unavailable');
      expect(rest.value.headers.get('retry-after')).toBeTruthy();
      // REQUEST_TIMEOUT_SECONDS=8 here: answered by then, with room for a loaded runner.
      expect(rest.ms).toBeLessThan(15_000);
      await sleep(4_000);
      expect(sender.answersSince(since).some((a) => a.status === 503)).toBe(true);
    } finally {
      signalAll(frozen, 'SIGCONT');
    }
    const thawed = Date.now();
    await until('/readyz 200 after the thaw', async () => (await readyz()).status === 200, 20_000);
    await until('ingest 200 after the thaw', async () => sender.answersSince(thawed).some((a) => a.status === 200), 20_000);
    expectHonestAnswers(since);
  });

  it('killed: restarted on its data directory without a Lookout restart; ingest and REST answer 503 meanwhile, then serve', async () => {
    const before = postmasterPid(svc.dataDir);
    const since = Date.now();
    process.kill(before, 'SIGKILL');
    await sleep(300);
    // Whatever moment each request meets (gone, restarting, back): never a 500, never a hang.
    const rest = await timed(() => svc.call('GET', '/projects'));
    expect([200, 503]).toContain(rest.value.status);
    if (rest.value.status === 503) expect(rest.value.body.code).toBe('store_unavailable');
    expect(rest.ms).toBeLessThan(15_000);
    const recovered = await until('/readyz 200 after the kill', async () => (await readyz()).status === 200, 60_000);
    expect(postmasterPid(svc.dataDir)).not.toBe(before);
    const back = Date.now();
    await until('ingest 200 after the restart', async () => sender.answersSince(back).some((a) => a.status === 200), 30_000);
    expect((await svc.call('GET', '/projects')).status).toBe(200);
    expectHonestAnswers(since);
    expect(recovered).toBeLessThan(60_000);
  });

  it('afterwards: every acknowledged span stored exactly once, its events counted once, nothing unacknowledged, every run settled', async () => {
    // A little steady ingest after the recovery, then every run in hand acknowledged.
    await sleep(3_000);
    await sender.stop();
    expect(sender.acknowledged.size).toBeGreaterThan(5);
    const ch = svc.service.deps.ch;
    const rows = async <T>(query: string) =>
      (await (await ch.client.query({ query, query_params: { p: project.id }, format: 'JSONEachRow' })).json<T>());
    const spans = await rows<{ trace_id: string; n: string; u: string }>(
      `SELECT trace_id, count() AS n, uniqExact(span_id) AS u FROM ${ch.table('spans')} WHERE project_id = {p:String} GROUP BY trace_id`,
    );
    const expected = new Set([...sender.acknowledged].map((t) => lookoutTraceId(project.id, t)));
    const stored = new Map(spans.map((r) => [r.trace_id, r]));
    const lost = [...expected].filter((t) => !stored.has(t));
    const unacknowledged = [...stored.keys()].filter((t) => !expected.has(t));
    const doubled = spans.filter((r) => Number(r.n) !== SPANS_PER_RUN || Number(r.u) !== SPANS_PER_RUN);
    expect({ lost, unacknowledged, doubled }).toEqual({ lost: [], unacknowledged: [], doubled: [] });
    const [generations] = await rows<{ n: string }>(
      `SELECT count() AS n FROM ${ch.table('event_generation_completed')} FINAL WHERE project_id = {p:String}`,
    );
    expect(Number(generations.n)).toBe(GENERATIONS_PER_RUN * expected.size);
    // Settling resumed by itself: every acknowledged run is processed, once.
    const processed = async () =>
      Number((await rows<{ n: string }>(`SELECT count() AS n FROM ${ch.table('event_trace_processed')} FINAL WHERE project_id = {p:String}`))[0].n);
    await until('every run processed', async () => (await processed()) === expected.size, 90_000);
    expect(await processed()).toBe(expected.size);
  });
});
