import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sql } from '../../../src/platform/postgres/postgres.js';
import { PostgresStatementStats } from '../../../src/platform/postgres/postgres-statement-stats.js';
import { fanOutOnce } from '../../../src/workspace/webhooks/webhook-fanout.js';
import type { WebhookDeliverer } from '../../../src/workspace/webhooks/webhook-deliverer.js';
import { recordMonitorActivated } from '../../../src/workspace/monitors/monitor-event-outbox.js';
import { OutboxRelay } from '../../../src/workspace/issues/outbox-relay.js';
import { startTestService, type TestService } from '../../helpers/service.js';
import { createEndpoint } from './harness.js';

/**
 * The outbox's readers by batches: a fan-out of many events to several endpoints takes
 * a fixed number of statements and queues exactly the subscribed attempts with the bodies the
 * events describe; a look that finds nothing waiting takes one statement, for the fan-out and for
 * the analytics relay alike.
 */
const PUBLIC_URL = 'https://lookout.example.test';
let svc: TestService;
let counted: Sql;
const stats = new PostgresStatementStats('/dev/null');

beforeAll(async () => {
  svc = await startTestService({ LOOKOUT_WEBHOOK_ALLOW_PRIVATE: '1', LOOKOUT_PUBLIC_URL: PUBLIC_URL });
  // The fan-out is driven by hand here.
  await (svc.service.deps.services.webhookDeliverer as WebhookDeliverer).stop();
  counted = svc.postgresPool({ max: 2, stats });
  await counted`select 1`;
}, 120_000);

afterAll(async () => {
  await svc?.stop();
});

async function statementsOf<T>(work: () => Promise<T>): Promise<{ result: T; statements: number }> {
  const before = stats.snapshot().statements;
  const result = await work();
  return { result, statements: stats.snapshot().statements - before };
}

describe('webhook fan-out by batches', () => {
  it('fans many events out to several endpoints in a fixed number of statements, with the bodies the events describe', async () => {
    const a = await svc.newProject('fan-out a');
    const b = await svc.newProject('fan-out b');
    const url = 'http://127.0.0.1:9/hook';
    const created = await createEndpoint(svc, a.id, { url, events: ['issue.created'] });
    const several = await createEndpoint(svc, a.id, { url, events: ['issue.created', 'issue.resolved', 'monitor.activated'] });
    const off = await createEndpoint(svc, a.id, { url, events: ['*'] });
    expect((await svc.call('PATCH', `/webhooks/${off.id}`, { body: { enabled: false } })).status).toBe(200);
    const other = await createEndpoint(svc, b.id, { url, events: ['*'] });

    const issuesA = [];
    for (let i = 0; i < 12; i++) issuesA.push((await svc.call('POST', `/projects/${a.id}/issues`, { body: { title: `a ${i}` } })).body);
    for (const issue of issuesA.slice(0, 4)) expect((await svc.call('PATCH', `/issues/${issue.id}/resolve`)).status).toBe(200);
    // Flagging is an event nobody here subscribes to: handed over, never queued.
    expect((await svc.call('PATCH', `/issues/${issuesA[5].id}/flag`)).status).toBe(200);
    for (let i = 0; i < 3; i++) await svc.call('POST', `/projects/${b.id}/issues`, { body: { title: `b ${i}` } });
    const monitor = (await svc.call('POST', `/projects/${a.id}/monitors`, { body: { name: 'Refunds', seed_hint: 'refund' } })).body;
    const [{ tenant_id: tenantId }] = await svc.service.deps.sql<{ tenant_id: string }[]>`select tenant_id from projects where id = ${a.id}`;
    await svc.service.deps.sql.begin((tx) => recordMonitorActivated(tx, { tenantId, projectId: a.id, monitorId: monitor.id, occurredAt: new Date() }));

    const waiting = await svc.service.deps.sql<{ n: number }[]>`select count(*)::int as n from issue_event_outbox where webhooks_dispatched_at is null`;
    const { result, statements } = await statementsOf(() => fanOutOnce(counted, { batchSize: 200, publicUrl: PUBLIC_URL, now: new Date() }));
    expect(result.events).toBe(waiting[0].n);
    // 12 created × 2 endpoints, 4 resolved and the activation × 1, 3 created in b.
    expect(result.queued).toBe(24 + 4 + 1 + 3);
    // exists, begin, lock, rows, endpoints, projects, issues, monitors, bodies, attempts, handed over, commit.
    expect(statements).toBeLessThanOrEqual(12);

    const sql = svc.service.deps.sql;
    const attempts = await sql<{ endpoint_id: string; n: number }[]>`
      select endpoint_id, count(*)::int as n from webhook_deliveries where status = 'pending' and attempt = 1 group by endpoint_id`;
    expect(new Map(attempts.map((r) => [r.endpoint_id, r.n]))).toEqual(new Map([[created.id, 12], [several.id, 17], [other.id, 3]]));
    // Each body is the event and its subject as they stand, byte for byte in the documented key order.
    const bodies = await sql<{ body: string; name: string; issue_id: string | null; event_id: string; occurred_at: Date; project_id: string }[]>`
      select ev.body, o.name, o.issue_id, o.event_id, o.occurred_at, o.project_id from webhook_events ev join issue_event_outbox o on o.event_id = ev.event_id`;
    expect(bodies).toHaveLength(12 + 4 + 1 + 3);
    for (const row of bodies) {
      const project = row.project_id === a.id ? { id: a.id, name: a.name } : { id: b.id, name: b.name };
      let data: unknown;
      if (row.issue_id) {
        const issue = (await svc.call('GET', `/issues/${row.issue_id}`)).body;
        data = {
          project,
          issue: {
            id: issue.id, title: issue.title, status: issue.status, fingerprint: null, occurrence_count: issue.occurrence_count,
            first_seen_at: issue.first_seen_at, last_seen_at: issue.last_seen_at, created_at: issue.created_at, url: `${PUBLIC_URL}/p/${row.project_id}/issues/${issue.id}`,
          },
        };
      } else {
        const [m] = await sql<{ activated_at: Date | null }[]>`select activated_at from monitors where id = ${monitor.id}`;
        data = {
          project,
          monitor: { id: monitor.id, name: 'Refunds', kind: 'signal', exploration_status: 'learning', activated_at: m.activated_at?.toISOString() ?? null, url: `${PUBLIC_URL}/p/${a.id}/issues` },
        };
      }
      expect(row.body).toBe(JSON.stringify({ id: row.event_id, type: row.name, occurred_at: row.occurred_at.toISOString(), project_id: row.project_id, data }));
    }

    // Nothing left: one statement, no transaction.
    const idle = await statementsOf(() => fanOutOnce(counted, { batchSize: 200, publicUrl: PUBLIC_URL, now: new Date() }));
    expect(idle).toEqual({ result: { events: 0, queued: 0 }, statements: 1 });
    // Handed over again (a crash before the commit would leave them so): nothing is queued twice.
    await sql`update issue_event_outbox set webhooks_dispatched_at = null`;
    const again = await fanOutOnce(counted, { batchSize: 200, publicUrl: PUBLIC_URL, now: new Date() });
    expect(again.queued).toBe(0);
    const [{ n }] = await sql<{ n: number }[]>`select count(*)::int as n from webhook_deliveries`;
    expect(n).toBe(24 + 4 + 1 + 3);
  });

  it('the analytics relay finds an empty outbox with one statement', async () => {
    const relay = new OutboxRelay(counted, svc.service.deps.ch, pino({ level: 'silent' }));
    await svc.call('POST', `/projects/${(await svc.newProject('relay idle')).id}/issues`, { body: { title: 'relayed' } });
    await relay.drain();
    const [{ left }] = await svc.service.deps.sql<{ left: number }[]>`select count(*)::int as left from issue_event_outbox where relayed_at is null`;
    expect(left).toBe(0);
    expect(await statementsOf(() => relay.drain())).toEqual({ result: 0, statements: 1 });
  });
});
