/**
 * A thread deleted while its agent keeps sending runs into it: every run acknowledged before the
 * deletion was asked for is gone from every table, every run sent after the job finished is kept
 * whole (new data), and a run that arrived while the job ran is either gone or whole — never half
 * a trace, and never a summary without spans.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../../helpers/service.js';
import { build, finished, send, settled, storedRows, traceIdsOf, until, zeros } from './deletion-harness.js';

let svc: TestService;

beforeAll(async () => {
  svc = await startTestService();
}, 120_000);

afterAll(async () => {
  await svc?.stop();
});

interface Sent {
  id: string;
  sentAt: number;
  ackAt: number;
}

describe('deleting a thread under ingest', () => {
  it('removes what was acknowledged before, keeps what came after, and leaves no half trace', async () => {
    const tenantId = svc.service.bootstrap!.tenantId;
    const project = (await svc.newProject('live thread')).id;
    const sent: Sent[] = [];
    let sending = true;
    const sender = (async () => {
      let i = 0;
      while (sending) {
        const runs = build([{ start: new Date(Date.now() - 1000), agent: 'live', threadId: 'live', generations: [{ model: 'gpt-4o', input: 10 + i, output: 2 }], tools: [{ name: 'search' }] }]);
        const sentAt = Date.now();
        await send(svc, project, runs);
        sent.push({ id: traceIdsOf(project, runs)[0], sentAt, ackAt: Date.now() });
        i++;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();
    await until('runs before the deletion', async () => sent.length >= 6);
    const asked = Date.now();
    const res = await svc.call('POST', `/projects/${project}/deletions`, { body: { thread_id: 'live' } });
    expect(res.status).toBe(202);
    const job = await finished(svc, res.body.id);
    const done = Date.now();
    await until('runs after the deletion', async () => sent.filter((s) => s.sentAt > done).length >= 3);
    sending = false;
    await sender;

    const before = sent.filter((s) => s.ackAt < asked);
    const after = sent.filter((s) => s.sentAt > done);
    const during = sent.filter((s) => !before.includes(s) && !after.includes(s));
    expect(job.traces_deleted).toBeGreaterThanOrEqual(before.length);
    // Every surviving run settles (a run whose spans the job removed leaves nothing to settle).
    await until('survivors settled', async () => {
      const listed = (await svc.call('GET', `/projects/${project}/traces?limit=200`)).body.traces.map((t: { id: string }) => t.id);
      return after.every((s) => listed.includes(s.id)) ? true : undefined;
    });
    await settled(svc, project, (await svc.call('GET', `/projects/${project}/traces?limit=200`)).body.traces.length);

    const deps = svc.service.deps;
    for (const s of before) {
      const rows = await storedRows(deps, tenantId, project, [s.id]);
      expect(rows, `acknowledged before: ${s.id}`).toEqual(zeros(rows));
    }
    const whole = (rows: Record<string, number>) => rows.spans === 3 && rows.traces >= 1 && rows.event_trace_processed >= 1 && rows.event_generation_completed >= 1 && rows.event_tool_called >= 1;
    for (const s of after) expect(whole(await storedRows(deps, tenantId, project, [s.id])), `sent after: ${s.id}`).toBe(true);
    for (const s of during) {
      const rows = await storedRows(deps, tenantId, project, [s.id]);
      const gone = Object.values(rows).every((n) => n === 0);
      expect(gone || whole(rows), `sent while the job ran: ${s.id} ${JSON.stringify(rows)}`).toBe(true);
    }
  }, 180_000);
});
