import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startClickHouseServers, type ClickHouseServer } from '../../helpers/clickhouse-server/clickhouse-server.js';
import { readyz as readyzOf, sleep, timed, until } from '../../helpers/fault-probes.js';
import { startTestService, type TestService } from '../../helpers/service.js';
import { expectAcknowledgedStoredOnce, expectHonestAnswers } from '../../helpers/fault-expectations.js';
import { SteadySender } from '../../helpers/steady-sender.js';

/**
 * A real ClickHouse server (its own process) frozen (SIGSTOP) and then killed, each during steady
 * ingest: ingest answers 200 or 503 store_unavailable + Retry-After, never past the exporter's
 * timeout and never 500; reads answer 503 store_unavailable (or 504 query_timeout), never 500;
 * /readyz names ClickHouse within a few seconds; once the server is back Lookout serves again
 * without a restart, and every acknowledged span is stored exactly once. Bounds are generous for a
 * loaded 2-core runner.
 */

let server: ClickHouseServer;
let svc: TestService;
let project: { id: string };
let sender: SteadySender;

const readyz = () => readyzOf(svc.url);

beforeAll(async () => {
  [server] = await startClickHouseServers(1);
  svc = await startTestService({
    CLICKHOUSE_URL: server.url,
    CLICKHOUSE_USER: server.user,
    CLICKHOUSE_PASSWORD: server.password,
    CLICKHOUSE_PARAM_BINDING: 'server',
    INGEST_TIMEOUT_MS: '5000',
    REQUEST_TIMEOUT_SECONDS: '8',
  });
  project = await svc.newProject('clickhouse faults');
  sender = new SteadySender(svc.url, await svc.newKey('ingest'), project.id);
  sender.start();
  await sleep(1_500);
});

afterAll(async () => {
  server?.thaw();
  await sender?.stop().catch(() => {});
  await svc?.stop();
  await server?.stop();
});

/** A read of each lane a person waits on: the trace list (interactive) and an analytics view. */
async function reads(): Promise<{ status: number; code?: string; ms: number }[]> {
  const end = new Date(Math.ceil(Date.now() / 3_600_000) * 3_600_000).toISOString().replace('.000Z', 'Z');
  const out = [];
  for (const path of [`/projects/${project.id}/traces?limit=5`, `/projects/${project.id}/analytics?view=general&hours=24&end_exclusive=${end}`]) {
    const { value, ms } = await timed(() => svc.call('GET', path));
    out.push({ status: value.status, code: value.body?.code, ms });
  }
  return out;
}

describe('ClickHouse server faults during steady ingest', () => {
  it('frozen: ingest 503 within the bound, reads 503/504 not 500, /readyz names clickhouse, then recovery', async () => {
    const since = Date.now();
    server.freeze();
    try {
      await sleep(1_000);
      const ready = await readyz();
      expect(ready.status).toBe(503);
      expect(ready.body).toMatchObject({ postgres: true, clickhouse: false, failed: ['clickhouse'] });
      expect(ready.ms).toBeLessThan(5_000);
      for (const read of await reads()) {
        expect([503, 504]).toContain(read.status);
        if (read.status === 503) expect(read.code).toBe('store_unavailable');
        expect(read.ms).toBeLessThan(20_000);
      }
      expect(sender.answersSince(since).some((a) => a.status === 503)).toBe(true);
    } finally {
      server.thaw();
    }
    const thawed = Date.now();
    await until('/readyz 200 after the thaw', async () => (await readyz()).status === 200, 30_000);
    await until('ingest 200 after the thaw', async () => sender.answersSince(thawed).some((a) => a.status === 200), 30_000);
    expectHonestAnswers(sender, since);
  });

  it('killed: 503 store_unavailable everywhere (never 500) while it is down; serves again once it is back, without a restart', async () => {
    const since = Date.now();
    await server.kill();
    await sleep(500);
    const ready = await readyz();
    expect(ready.status).toBe(503);
    expect(ready.body).toMatchObject({ clickhouse: false, failed: ['clickhouse'] });
    for (const read of await reads()) {
      expect(read.status).toBe(503);
      expect(read.code).toBe('store_unavailable');
    }
    await until('ingest refused while the server is down', async () => sender.answersSince(since).some((a) => a.status === 503 && a.code === 'store_unavailable'), 15_000);
    await server.start();
    const back = Date.now();
    await until('/readyz 200 after the restart', async () => (await readyz()).status === 200, 30_000);
    await until('ingest 200 after the restart', async () => sender.answersSince(back).some((a) => a.status === 200), 30_000);
    for (const read of await reads()) expect(read.status).toBe(200);
    expectHonestAnswers(sender, since);
  });

  it('afterwards: every acknowledged span stored exactly once, nothing unacknowledged, every run settled', async () => {
    await expectAcknowledgedStoredOnce(sender, svc.service.deps.ch, project.id);
  });
});
