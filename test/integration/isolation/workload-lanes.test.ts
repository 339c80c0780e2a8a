/**
 * Against the real service on the embedded engine: heavy analytics in
 * flight does not hold up small ingests or trace reads (chdb no longer queues them behind it: values
 * are bound as literals); analytics waits in its own bounded lane, where waiting counts inside
 * QUERY_TIMEOUT_SECONDS (504) and a full queue answers 429 with Retry-After. Each test asserts
 * order, not speed: the small work completes while the heavy statements are still in flight. Those
 * sleep in the engine, so their length does not shrink or grow with the machine's load, and they
 * are long enough that a loaded 2-core runner still finishes the small work inside them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { param, sql } from '../../../src/platform/clickhouse/sql/fragment.js';
import { tenantGuard } from '../../../src/platform/clickhouse/sql/tenant-guard.js';
import { startTestService, type TestService } from '../../helpers/service.js';
import { sendRuns } from '../../helpers/otlp-json.js';

let svc: TestService;
let projectId: string;
let ingestKey: string;
let traceId: string;

beforeAll(async () => {
  svc = await startTestService({ ANALYTICS_MAX_CONCURRENCY: '2', ANALYTICS_MAX_PER_TENANT: '2', ANALYTICS_MAX_QUEUE: '1', QUERY_TIMEOUT_SECONDS: '2' });
  projectId = (await svc.newProject('lanes')).id;
  ingestKey = await svc.newKey('ingest');
  [traceId] = await sendRuns(svc.url, ingestKey, projectId, [smallRun()]);
}, 120_000);

afterAll(async () => {
  await svc?.stop();
});

function smallRun() {
  return { start: new Date(), agent: 'lanes', generations: Array.from({ length: 4 }, () => ({ model: 'gpt-4o', input: 10, output: 5 })), tools: Array.from({ length: 5 }, (_, i) => ({ name: `tool${i}` })) };
}

/**
 * A long analytics statement of another tenant on the service's own store, in flight for about
 * `seconds` (it sleeps in the engine, so its length does not depend on how loaded the machine is),
 * holding an analytics slot and an engine thread meanwhile.
 */
function heavy(seconds: number): { done: Promise<unknown>; finished: () => boolean } {
  const scope = { tenantId: 'heavy-tenant', projectId: 'heavy-project' };
  let over = false;
  const rows = param('UInt32', seconds * 10);
  const done = svc.service.deps.ch
    .read(
      sql`SELECT count() AS n, sum(s) AS slept FROM (SELECT sleepEachRow(0.1) AS s, 'heavy-tenant' AS tenant_id, 'heavy-project' AS project_id FROM numbers(${rows})) WHERE ${tenantGuard(scope)}`,
      { lane: 'analytics', scope, timeoutSeconds: seconds + 40, settings: { function_sleep_max_microseconds_per_block: (seconds + 1) * 1_000_000 } },
    )
    .catch((error: unknown) => error)
    .finally(() => (over = true));
  return { done, finished: () => over };
}

async function smallIngestsAndTraceReads(): Promise<void> {
  for (let i = 0; i < 3; i++) {
    const [sent] = await sendRuns(svc.url, ingestKey, projectId, [smallRun()]);
    expect(sent).toEqual(expect.any(String));
    const read = await svc.call('GET', `/traces/${traceId}`);
    expect(read.status).toBe(200);
  }
}

async function waitUntil(check: () => boolean, what: string): Promise<void> {
  const until = Date.now() + 10_000;
  while (!check()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('workload lanes', () => {
  it('small ingests and trace reads complete while a heavy analytics query is still running', async () => {
    const load = heavy(15);
    await waitUntil(() => svc.service.deps.ch.gate.load.running === 1, 'the heavy query to start');
    await new Promise((r) => setTimeout(r, 300));
    await smallIngestsAndTraceReads();
    // Queued behind the heavy statement, these would finish only after it.
    expect(load.finished(), 'the heavy query was still running').toBe(false);
    expect(svc.service.deps.ch.gate.load.running).toBe(1);
    await load.done;
  }, 90_000);

  it('counts waiting inside QUERY_TIMEOUT_SECONDS (504), answers 429 beyond the queue, and never gates ingest', async () => {
    const hour = (offset: number) => new Date(Math.floor(Date.now() / 3_600_000 + offset) * 3_600_000).toISOString().slice(0, 19) + 'Z';
    const body = { from: 'tool.called', start: hour(-1), end_exclusive: hour(1), measures: [{ as: 'n', agg: 'count' }] };
    const loads = [heavy(20), heavy(20)];
    await waitUntil(() => svc.service.deps.ch.gate.load.running === 2, 'both slots to be taken');

    // Both slots are busy for ~20 s: the query waits its whole 2 s limit in the queue, then 504
    // (never sooner: the wait is the limit; and before either slot frees up).
    const asked = performance.now();
    const waited = await svc.call('POST', `/projects/${projectId}/analytics/query`, { body });
    expect(waited.status).toBe(504);
    expect(waited.body).toMatchObject({ code: 'query_timeout' });
    expect(performance.now() - asked).toBeGreaterThan(1500);
    expect(loads.every((l) => !l.finished())).toBe(true);

    // One more heavy statement fills the queue (bound 1): the next analytics request is refused at once.
    const queued = heavy(2);
    await waitUntil(() => svc.service.deps.ch.gate.load.queued === 1, 'the queue to fill');
    const refused = await svc.call('POST', `/projects/${projectId}/analytics/query`, { body });
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ code: 'rate_limited' });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // Refused at once: the statement ahead of it in the queue has not even started.
    expect(svc.service.deps.ch.gate.load.queued).toBe(1);
    expect(queued.finished()).toBe(false);

    // The analytics lane is saturated; ingest does not pass through it.
    const [ingested] = await sendRuns(svc.url, ingestKey, projectId, [smallRun()]);
    expect(ingested).toEqual(expect.any(String));
    expect(loads.every((l) => !l.finished())).toBe(true);
    expect(svc.service.deps.ch.gate.load.queued).toBe(1);

    await Promise.all([...loads, queued].map((l) => l.done));
    // Once the lane drains, the same request answers.
    expect((await svc.call('POST', `/projects/${projectId}/analytics/query`, { body })).status).toBe(200);
  }, 90_000);
});
