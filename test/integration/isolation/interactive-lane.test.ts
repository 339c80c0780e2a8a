/**
 * The interactive lane: trace reads (detail, list) have their own gate
 * and chdb connections, so with long analytics statements *of the same tenant* filling that
 * tenant's analytics share (and queueing behind it), a trace read still answers while they run;
 * in the analytics gate it would queue behind them. The long statements burn CPU over numbers()
 * until their time limit stops them, so they hold their slots for a known time however loaded the
 * machine is, and the test asserts order (the reads answer first), not speed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RateLimitedError } from '../../../src/platform/http/errors.js';
import { param, sql } from '../../../src/platform/clickhouse/sql/fragment.js';
import { tenantGuard } from '../../../src/platform/clickhouse/sql/tenant-guard.js';
import { startTestService, type TestService } from '../../helpers/service.js';
import { sendRuns } from '../../helpers/otlp-json.js';
import { cpuBoundRead } from '../../helpers/cpu-bound-read.js';

let svc: TestService;
let tenantId: string;
let adminKey: string;
let projectId: string;
let traceId: string;

beforeAll(async () => {
  svc = await startTestService({ ANALYTICS_MAX_CONCURRENCY: '3', ANALYTICS_MAX_PER_TENANT: '2', INTERACTIVE_MAX_QUEUE: '1' });
  ({ tenantId, adminKey } = await svc.newTenant('interactive'));
  projectId = (await svc.newProject('interactive', adminKey)).id;
  const ingestKey = await svc.newKey('ingest', { key: adminKey });
  [traceId] = await sendRuns(svc.url, ingestKey, projectId, [
    { start: new Date(), agent: 'lanes', generations: [{ model: 'gpt-4o', input: 10, output: 5 }], tools: [{ name: 'search' }] },
  ]);
}, 120_000);

afterAll(async () => {
  await svc?.stop();
});

/**
 * A CPU-bound analytics statement of the test's own tenant, stopped by its time limit after about
 * `seconds` (504 inside, caught): it holds one of the tenant's analytics slots, or waits for one.
 */
function longAnalytics(seconds: number): { done: Promise<unknown>; finished: () => boolean } {
  const scope = { tenantId, projectId };
  let over = false;
  const done = svc.service.deps.ch
    .read(cpuBoundRead(scope), { lane: 'analytics', scope, timeoutSeconds: seconds })
    .catch((error: unknown) => error)
    .finally(() => (over = true));
  return { done, finished: () => over };
}

async function reads(): Promise<void> {
  for (let i = 0; i < 3; i++) {
    for (const path of [`/traces/${traceId}`, `/projects/${projectId}/traces?limit=10`]) {
      const res = await svc.call('GET', path, { key: adminKey });
      expect(res.status).toBe(200);
    }
  }
}

async function waitUntil(check: () => boolean, what: string): Promise<void> {
  const until = Date.now() + 10_000;
  while (!check()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('interactive lane', () => {
  it('answers trace reads while long analytics of the same tenant fill its share', async () => {
    const gates = svc.service.deps.ch.gates;
    // Four statements of the tenant: two run (its share), two wait in the analytics queue.
    const loads = Array.from({ length: 4 }, () => longAnalytics(12));
    await waitUntil(() => gates.analytics.load.running === 2 && gates.analytics.load.queued === 2, 'the tenant\'s analytics share to fill');
    await new Promise((r) => setTimeout(r, 300));
    await reads();
    // On the analytics lane these reads would wait for the first long statements to end.
    expect(loads.every((l) => !l.finished()), 'the long statements were still running').toBe(true);
    expect(gates.analytics.load.queued).toBe(2);
    await Promise.all(loads.map((l) => l.done));
  }, 90_000);

  it('bounds the interactive lane by its own gate: beyond its queue a read is refused with 429 naming trace reads', async () => {
    const ch = svc.service.deps.ch;
    const scope = { tenantId, projectId };
    // Two long reads take the lane's two slots, a third waits (queue bound 1), a fourth is refused.
    const slow = () =>
      ch.read(cpuBoundRead(scope), { lane: 'interactive', scope, timeoutSeconds: 4 }).catch((error: unknown) => error);
    const held = [slow(), slow(), slow()];
    await waitUntil(() => ch.gates.interactive.load.running === 2 && ch.gates.interactive.load.queued === 1, 'the interactive lane to fill');
    expect(ch.gates.analytics.load.running).toBe(0);
    const refused = await ch.read(sql`SELECT 1 AS one FROM (SELECT ${param('String', tenantId)} AS tenant_id, ${param('String', projectId)} AS project_id) WHERE ${tenantGuard(scope)}`, { lane: 'interactive', scope }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(RateLimitedError);
    expect((refused as Error).message).toMatch(/trace reads/);
    await Promise.all(held);
    const res = await svc.call('GET', `/traces/${traceId}`, { key: adminKey });
    expect(res.status).toBe(200);
  }, 60_000);
});
