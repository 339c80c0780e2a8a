import crypto from 'node:crypto';
import type { SqlHandle } from '../../platform/postgres/postgres.js';
import { TEST_EVENT, type DeliveryRow, type WebhookFormat } from './webhook-types.js';

const DELIVERY_COLUMNS = `id, tenant_id, endpoint_id, event_id, event_type, attempt, status, response_status, error, next_attempt_at, created_at, delivered_at`;

/** An event's body to store once (several endpoints may get it). */
export interface NewEvent {
  eventId: string;
  tenantId: string;
  projectId: string;
  type: string;
  body: string;
}

/** An attempt to queue: the first of a fan-out or a test, or a retry. */
export interface NewAttempt {
  tenantId: string;
  endpointId: string;
  eventId: string;
  eventType: string;
  attempt: number;
  at: Date;
}

/** Stores events' bodies in one statement; a repeated event is a no-op. */
export async function insertEvents(tx: SqlHandle, events: NewEvent[]): Promise<void> {
  if (events.length === 0) return;
  await tx`
    insert into webhook_events (event_id, tenant_id, project_id, type, body)
    select * from unnest(${events.map((e) => e.eventId)}::uuid[], ${events.map((e) => e.tenantId)}::uuid[], ${events.map((e) => e.projectId)}::uuid[],
      ${events.map((e) => e.type)}::text[], ${events.map((e) => e.body)}::text[])
    on conflict (event_id) do nothing`;
}

/**
 * Queues attempts in one statement and answers the ids of those queued: (endpoint, event, attempt)
 * is unique, so a repeated fan-out or retry queues nothing twice.
 */
export async function queueAttempts(tx: SqlHandle, attempts: NewAttempt[]): Promise<string[]> {
  if (attempts.length === 0) return [];
  const rows = await tx<{ id: string }[]>`
    insert into webhook_deliveries (id, tenant_id, endpoint_id, event_id, event_type, attempt, status, next_attempt_at)
    select a.id, a.tenant_id, a.endpoint_id, a.event_id, a.event_type, a.attempt, 'pending', a.at
    from unnest(${attempts.map(() => crypto.randomUUID())}::uuid[], ${attempts.map((a) => a.tenantId)}::uuid[], ${attempts.map((a) => a.endpointId)}::uuid[],
      ${attempts.map((a) => a.eventId)}::uuid[], ${attempts.map((a) => a.eventType)}::text[], ${attempts.map((a) => a.attempt)}::int[],
      ${attempts.map((a) => a.at.toISOString())}::timestamptz[]) as a(id, tenant_id, endpoint_id, event_id, event_type, attempt, at)
    on conflict (endpoint_id, event_id, attempt) do nothing
    returning id::text as id`;
  return rows.map((r) => r.id);
}

/** A due attempt with what sending it needs. */
export interface DueAttempt {
  id: string;
  tenant_id: string;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  attempt: number;
  url: string;
  format: WebhookFormat;
  secret_sealed: string;
  body: string;
  event_created_at: Date;
}

/**
 * Due attempts not in flight anywhere, oldest first, locked for this transaction (SKIP LOCKED lets
 * every process claim side by side). Attempts of disabled endpoints wait, except the test event,
 * which exists to try an endpoint before enabling it.
 */
export async function dueAttempts(tx: SqlHandle, now: Date, limit: number, skipEndpoints: string[]): Promise<DueAttempt[]> {
  return tx<DueAttempt[]>`
    select d.id, d.tenant_id, d.endpoint_id, d.event_id, d.event_type, d.attempt,
      e.url, e.format, e.secret_sealed, ev.body, ev.created_at as event_created_at
    from webhook_deliveries d
    join webhook_endpoints e on e.id = d.endpoint_id
    join webhook_events ev on ev.event_id = d.event_id
    where d.status = 'pending' and d.next_attempt_at <= ${now}
      and (d.lease_until is null or d.lease_until < ${now})
      and (e.enabled or d.event_type = ${TEST_EVENT})
      and not (d.endpoint_id = any(${skipEndpoints}::uuid[]))
    order by d.next_attempt_at, d.id
    limit ${limit}
    for update of d skip locked`;
}

/** Attempts in flight per endpoint, in every process: pending rows whose lease has not lapsed. */
export async function inFlightByEndpoint(tx: SqlHandle, now: Date): Promise<Map<string, number>> {
  const rows = await tx<{ endpoint_id: string; n: number }[]>`
    select endpoint_id, count(*)::int as n from webhook_deliveries
    where status = 'pending' and lease_until > ${now}
    group by endpoint_id`;
  return new Map(rows.map((r) => [r.endpoint_id, r.n]));
}

export async function leaseAttempts(tx: SqlHandle, ids: string[], until: Date): Promise<void> {
  if (ids.length > 0) await tx`update webhook_deliveries set lease_until = ${until} where id = any(${ids}::uuid[])`;
}

/** On a clean stop: attempts this process leased but did not finish are free for any process at once. */
export async function releaseLeases(sql: SqlHandle, ids: string[]): Promise<void> {
  if (ids.length > 0) await sql`update webhook_deliveries set lease_until = null where id = any(${ids}::uuid[]) and status = 'pending'`;
}

/** The earliest pending attempt, so the loop can sleep exactly until then. */
export async function nextDueAt(sql: SqlHandle): Promise<Date | null> {
  const [row] = await sql<{ at: Date | null }[]>`
    select min(greatest(d.next_attempt_at, coalesce(d.lease_until, d.next_attempt_at))) as at
    from webhook_deliveries d join webhook_endpoints e on e.id = d.endpoint_id
    where d.status = 'pending' and (e.enabled or d.event_type = ${TEST_EVENT})`;
  return row?.at ?? null;
}

export interface AttemptResult {
  status: 'succeeded' | 'failed' | 'gave_up';
  responseStatus: number | null;
  error: string | null;
  nextAttemptAt: Date | null;
  at: Date;
}

/**
 * Writes an attempt's outcome, only while it is still pending (a disable may have ended it
 * meanwhile). Returns false when it was no longer pending.
 */
export async function finishAttempt(tx: SqlHandle, id: string, r: AttemptResult): Promise<boolean> {
  const rows = await tx`
    update webhook_deliveries set status = ${r.status}, response_status = ${r.responseStatus}, error = ${r.error},
      next_attempt_at = ${r.nextAttemptAt}, lease_until = null,
      delivered_at = ${r.status === 'succeeded' ? r.at : null}
    where id = ${id} and status = 'pending'
    returning id`;
  return rows.length > 0;
}

export async function listDeliveries(sql: SqlHandle, tenantId: string, endpointId: string, limit: number): Promise<DeliveryRow[]> {
  return sql<DeliveryRow[]>`
    select ${sql.unsafe(DELIVERY_COLUMNS)} from webhook_deliveries
    where tenant_id = ${tenantId} and endpoint_id = ${endpointId}
    order by created_at desc, attempt desc, id desc
    limit ${limit}`;
}

export async function findDelivery(sql: SqlHandle, tenantId: string, id: string): Promise<DeliveryRow | null> {
  const [row] = await sql<DeliveryRow[]>`select ${sql.unsafe(DELIVERY_COLUMNS)} from webhook_deliveries where tenant_id = ${tenantId} and id = ${id}`;
  return row ?? null;
}

/** Finished attempts (and events left without any) are kept for `retainMs`, then pruned. */
export async function pruneDeliveries(sql: SqlHandle, before: Date): Promise<void> {
  await sql`delete from webhook_deliveries where status <> 'pending' and created_at < ${before}`;
  await sql`
    delete from webhook_events ev where ev.created_at < ${before}
      and not exists (select 1 from webhook_deliveries d where d.event_id = ev.event_id)`;
}

/** Attempts waiting to be sent, all processes (the metrics' backlog): all pending, and those due now. */
export async function deliveryBacklog(sql: SqlHandle): Promise<{ pending: number; due: number }> {
  const [row] = await sql<{ pending: number; due: number }[]>`
    select count(*)::int as pending, (count(*) filter (where next_attempt_at <= now()))::int as due
    from webhook_deliveries where status = 'pending'`;
  return row;
}
