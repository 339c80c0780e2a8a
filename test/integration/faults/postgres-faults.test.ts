import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresProcesses, postmasterPid, signalAll } from '../../helpers/postgres-process.js';
import { readyz as readyzOf, sleep, timed, until } from '../../helpers/fault-probes.js';
import { startTestService, type TestService } from '../../helpers/service.js';
import { expectAcknowledgedStoredOnce, expectHonestAnswers } from '../../helpers/fault-expectations.js';
import { SteadySender } from '../../helpers/steady-sender.js';

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
    expectHonestAnswers(sender, since, 'store_unavailable');
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
    // Ingest follows /readyz within a few seconds: the pool's connections come back on the same short
    // back-off (postgres-reconnect.test.ts), and the key check and the write use the same pool.
    const ingestBack = await until('ingest 200 after the restart', async () => sender.answersSince(back).some((a) => a.status === 200), 30_000);
    expect(ingestBack).toBeLessThan(10_000);
    expect((await svc.call('GET', '/projects')).status).toBe(200);
    expectHonestAnswers(sender, since, 'store_unavailable');
    expect(recovered).toBeLessThan(60_000);
  });

  it('afterwards: every acknowledged span stored exactly once, its events counted once, nothing unacknowledged, every run settled', async () => {
    await expectAcknowledgedStoredOnce(sender, svc.service.deps.ch, project.id);
  });
});
