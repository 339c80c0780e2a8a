import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queueDepth } from '../../../src/ingest/settle/settle-queue.js';
import { lookoutTraceId } from '../../../src/spans/trace-id.js';
import { traceHooks } from '../../../src/ingest/trace-hook-registry.js';
import { agentRun } from '../../helpers/agent-run.js';
import { removeDir, startTestService, type TestService } from '../../helpers/service.js';
import { postOtlp, protobufBody, waitFor } from '../ingest/otlp-client.js';
import { sleep } from './instances.js';

/**
 * A settle round renews its lease while its hooks run. A renewal that committed while the round was
 * being finished gave the queue row a version the finishing statement's delete (by tuple id, in its
 * snapshot) could not see, so the settled trace was freed instead of deleted: it settled again and
 * its hooks ran twice. Here a renewal is held on a row lock until the hooks are done, then let go.
 */
let svc: TestService;
let unblock: () => void = () => {};
beforeAll(async () => {
  // Lease 600 ms: a renewal every 200 ms while the hook holds the round open.
  svc = await startTestService({ SETTLE_LEASE_MS: '600', TRACE_SETTLE_MS: '300', TRACE_MAX_WAIT_MS: '30000' });
}, 120_000);
afterAll(async () => {
  unblock();
  await svc?.stop();
  removeDir(svc?.dataDir);
});

describe('settle lease renewal', () => {
  it('a renewal committing as the round finishes neither frees the settled trace nor runs its hooks again', { timeout: 60_000 }, async () => {
    const runs = new Map<string, number>();
    let entered: () => void = () => {};
    const hookEntered = new Promise<void>((resolve) => (entered = resolve));
    const hookReleased = new Promise<void>((resolve) => (unblock = resolve));
    traceHooks(svc.service.deps).onTracesProcessed.push(async (traces) => {
      for (const t of traces) runs.set(t.traceId, (runs.get(t.traceId) ?? 0) + 1);
      entered();
      await hookReleased;
    });
    const project = await svc.newProject('lease');
    const run = agentRun(3, 'lease-agent');
    const traceId = lookoutTraceId(project.id, run.otelTraceId);
    const res = await postOtlp(svc.url, svc.adminKey, protobufBody([run.root, ...run.children]), { headers: { 'x-lookout-project': project.id } });
    expect(res.status).toBe(200);
    await hookEntered;

    const sql = svc.postgresPool({ max: 2 });
    let commit: () => void = () => {};
    const held = new Promise<void>((resolve) => (commit = resolve));
    let locked: () => void = () => {};
    const rowLocked = new Promise<void>((resolve) => (locked = resolve));
    const lockHolder = sql.begin(async (tx) => {
      const rows = await tx`select 1 from settle_queue where trace_id = ${traceId} for update`;
      expect(rows.length).toBe(1);
      locked();
      await held;
    });
    await rowLocked;
    // A renewal starts and waits on the lock; then the hooks end and the round starts finishing.
    await waitFor(async () => {
      const [{ n }] = await sql<{ n: number }[]>`
        select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and query like '%lease_until%'`;
      return n > 0 ? true : undefined;
    }, 10_000, 'a lease renewal waiting on the row lock');
    unblock();
    await sleep(300);
    commit();
    await lockHolder;

    await waitFor(async () => ((await queueDepth(sql)) === 0 ? true : undefined), 10_000, 'the settled trace leaving the queue');
    // Long enough for a freed row to be claimed and settled again (due after 300 ms).
    await sleep(2_000);
    expect(await queueDepth(sql)).toBe(0);
    expect(runs.get(traceId)).toBe(1);
    await sql.end();
  });
});
