import type { Sql } from '../../platform/postgres/postgres.js';
import { insertEvents, queueAttempts, type NewAttempt, type NewEvent } from './delivery-store.js';
import { envelopesFor, type OutboxEvent, type WebhookEnvelope } from './webhook-payload.js';
import { enabledEndpointsOf } from './webhook-store.js';
import { subscribes } from './webhook-types.js';

/**
 * Fans outbox events out to webhook endpoints: one transaction reads undispatched outbox rows,
 * stores each subscribed event's body, queues its first attempt per endpoint and marks the rows
 * dispatched. The outbox row was committed with the change it describes, so an event exists for
 * webhooks exactly when its change does; a crash before this commit leaves the rows undispatched
 * for the next run, and the (endpoint, event, attempt) key makes a repeated fan-out queue nothing
 * twice. A batch costs a fixed number of statements however many events and endpoints it has (the
 * bodies' projects, issues and monitors read at once, the bodies and the attempts written at once);
 * a round with nothing undispatched — most of them — costs one statement and no transaction.
 *
 * Locks: one fan-out at a time over all processes (a transaction-scoped advisory lock; the others
 * skip the round), and the rows read FOR KEY SHARE, which does not conflict with the analytics
 * relay's FOR NO KEY UPDATE — so the relay never skips a row because webhooks are reading it.
 */
export async function fanOutOnce(sql: Sql, options: { batchSize: number; publicUrl: string | null; now: Date }): Promise<{ events: number; queued: number }> {
  const [{ waiting }] = await sql<{ waiting: boolean }[]>`select exists (select 1 from issue_event_outbox where webhooks_dispatched_at is null) as waiting`;
  if (!waiting) return { events: 0, queued: 0 };
  return sql.begin(async (tx) => {
    const [{ mine }] = await tx<{ mine: boolean }[]>`select pg_try_advisory_xact_lock(hashtext('lookout:webhook-fanout')) as mine`;
    if (!mine) return { events: 0, queued: 0 };
    const rows = await tx<(OutboxEvent & { id: string })[]>`
      select id::text as id, event_id, tenant_id, project_id, issue_id, monitor_id, name, occurred_at
      from issue_event_outbox where webhooks_dispatched_at is null
      order by id limit ${options.batchSize}
      for key share`;
    if (rows.length === 0) return { events: 0, queued: 0 };
    const endpoints = await enabledEndpointsOf(tx, rows.map((r) => ({ tenantId: r.tenant_id, projectId: r.project_id })));
    const targeted = rows
      .map((row) => ({ row, targets: endpoints.filter((e) => e.tenant_id === row.tenant_id && e.project_id === row.project_id && subscribes(e.events, row.name)) }))
      .filter((t) => t.targets.length > 0);
    const envelopes = targeted.length > 0 ? await envelopesFor(tx, targeted.map((t) => t.row), options.publicUrl) : new Map<string, WebhookEnvelope | null>();
    const bodies: NewEvent[] = [];
    const attempts: NewAttempt[] = [];
    for (const { row, targets } of targeted) {
      const envelope = envelopes.get(row.event_id);
      if (!envelope) continue;
      bodies.push({ eventId: row.event_id, tenantId: row.tenant_id, projectId: row.project_id, type: row.name, body: JSON.stringify(envelope) });
      for (const endpoint of targets) {
        attempts.push({ tenantId: row.tenant_id, endpointId: endpoint.id, eventId: row.event_id, eventType: row.name, attempt: 1, at: options.now });
      }
    }
    await insertEvents(tx, bodies);
    const queued = (await queueAttempts(tx, attempts)).length;
    await tx`update issue_event_outbox set webhooks_dispatched_at = now() where id = any(${rows.map((r) => r.id)}::bigint[])`;
    return { events: rows.length, queued };
  });
}
