import { afterAll, describe, expect, it } from 'vitest';
import { postgresProcesses, signalAll } from '../../helpers/postgres-process.js';
import { startTestService } from '../../helpers/service.js';
import { agentRunRequest } from '../../helpers/otlp-json.js';

/**
 * Shutdown with PostgreSQL frozen (SIGSTOP of the postmaster and all its processes) and a request
 * in flight finishes within its bound (SHUTDOWN_TIMEOUT_MS, here 2 s, plus closing the stores: up to
 * ~7 s), instead of waiting for a store that does not answer.
 */

let frozen: number[] = [];
afterAll(() => {
  signalAll(frozen, 'SIGCONT');
});

describe('shutdown with a frozen PostgreSQL', () => {
  it('finishes within the documented bound', async () => {
    const svc = await startTestService({ INGEST_TIMEOUT_MS: '5000', SHUTDOWN_TIMEOUT_MS: '2000' });
    const project = await svc.newProject('shutdown');
    frozen = postgresProcesses(svc.dataDir);
    signalAll(frozen, 'SIGSTOP');
    const { body } = agentRunRequest({ start: new Date(Date.now() - 60_000), agent: 'shutdown', generations: [{ model: 'gpt-4o', input: 1, output: 1 }] });
    const inFlight = fetch(`${svc.url}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${svc.adminKey}`, 'x-lookout-project': project.id },
      body,
    }).then((r) => r.status, () => 0);
    await new Promise((r) => setTimeout(r, 500));
    const started = Date.now();
    await svc.stop();
    const took = Date.now() - started;
    // 2 s of SHUTDOWN_TIMEOUT_MS, 2 s for the pool, 5 s before the frozen server is killed; room for a loaded runner.
    expect(took).toBeLessThan(20_000);
    expect([0, 503]).toContain(await inFlight);
  });
});
