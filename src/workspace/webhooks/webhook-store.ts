import type { WebhookEndpointPatch } from './webhook-schemas.js';
import type { SqlHandle } from '../../platform/postgres/postgres.js';
import { isUuid } from '../../platform/uuid.js';
import { DISABLE_AFTER_GIVE_UPS, type EndpointRow, type WebhookFormat } from './webhook-types.js';

const ENDPOINT_COLUMNS = `id, tenant_id, project_id, url, events, format, description, enabled, secret_sealed,
  consecutive_give_ups, disabled_reason, disabled_at, created_at, updated_at`;

export interface NewEndpoint {
  id: string;
  tenantId: string;
  projectId: string;
  url: string;
  events: string[];
  format: WebhookFormat;
  description: string | null;
  secretSealed: string;
}

export async function insertEndpoint(sql: SqlHandle, e: NewEndpoint): Promise<EndpointRow> {
  const [row] = await sql<EndpointRow[]>`
    insert into webhook_endpoints (id, tenant_id, project_id, url, events, format, description, secret_sealed)
    values (${e.id}, ${e.tenantId}, ${e.projectId}, ${e.url}, ${e.events}, ${e.format}, ${e.description}, ${e.secretSealed})
    returning ${sql.unsafe(ENDPOINT_COLUMNS)}`;
  return row;
}

export async function listEndpoints(sql: SqlHandle, tenantId: string, projectId: string): Promise<EndpointRow[]> {
  return sql<EndpointRow[]>`
    select ${sql.unsafe(ENDPOINT_COLUMNS)} from webhook_endpoints
    where tenant_id = ${tenantId} and project_id = ${projectId} order by created_at, id`;
}

export async function findEndpoint(sql: SqlHandle, tenantId: string, id: string, options: { forUpdate?: boolean } = {}): Promise<EndpointRow | null> {
  if (!isUuid(id)) return null;
  const [row] = await sql<EndpointRow[]>`
    select ${sql.unsafe(ENDPOINT_COLUMNS)} from webhook_endpoints
    where tenant_id = ${tenantId} and id = ${id} ${options.forUpdate ? sql`for update` : sql``}`;
  return row ?? null;
}

/** The PATCH body (webhook-schemas.ts). */
export type EndpointPatch = WebhookEndpointPatch;

/**
 * Applies a PATCH. Enabling clears the give-up streak and the reason it was disabled; disabling
 * (by hand) ends the endpoint's pending attempts, so a disabled endpoint has nothing queued.
 */
export async function updateEndpoint(tx: SqlHandle, current: EndpointRow, patch: EndpointPatch): Promise<EndpointRow> {
  const enabling = patch.enabled === true && !current.enabled;
  const disabling = patch.enabled === false && current.enabled;
  const [row] = await tx<EndpointRow[]>`
    update webhook_endpoints set
      url = ${patch.url ?? current.url},
      events = ${patch.events ?? current.events},
      format = ${patch.format ?? current.format},
      description = ${patch.description === undefined ? current.description : patch.description},
      enabled = ${patch.enabled ?? current.enabled},
      ${enabling ? tx`consecutive_give_ups = 0, disabled_reason = null, disabled_at = null,` : tx``}
      ${disabling ? tx`disabled_reason = 'Disabled by a user', disabled_at = now(),` : tx``}
      updated_at = now()
    where id = ${current.id}
    returning ${tx.unsafe(ENDPOINT_COLUMNS)}`;
  if (disabling) await cancelPending(tx, current.id, 'endpoint disabled');
  return row;
}

export async function setEndpointSecret(sql: SqlHandle, tenantId: string, id: string, secretSealed: string): Promise<EndpointRow | null> {
  const [row] = await sql<EndpointRow[]>`
    update webhook_endpoints set secret_sealed = ${secretSealed}, updated_at = now()
    where tenant_id = ${tenantId} and id = ${id}
    returning ${sql.unsafe(ENDPOINT_COLUMNS)}`;
  return row ?? null;
}

export async function deleteEndpoint(sql: SqlHandle, tenantId: string, id: string): Promise<boolean> {
  if (!isUuid(id)) return false;
  const rows = await sql`delete from webhook_endpoints where tenant_id = ${tenantId} and id = ${id} returning id`;
  return rows.length > 0;
}

/**
 * Enabled endpoints of these (tenant, project) pairs, for the fan-out. The tenant is part of the
 * match in SQL, as on every other read of a tenant's rows, and leads the table's index.
 */
export async function enabledEndpointsOf(sql: SqlHandle, projects: { tenantId: string; projectId: string }[]): Promise<EndpointRow[]> {
  const unique = [...new Map(projects.map((p) => [`${p.tenantId} ${p.projectId}`, p])).values()];
  if (unique.length === 0) return [];
  return sql<EndpointRow[]>`
    select ${sql.unsafe(ENDPOINT_COLUMNS)} from webhook_endpoints
    where enabled and (tenant_id, project_id) in (select * from unnest(${unique.map((p) => p.tenantId)}::uuid[], ${unique.map((p) => p.projectId)}::uuid[]))
    order by created_at, id`;
}

/**
 * Ends the pending attempts of an endpoint that was disabled: recorded as given up, never sent.
 * Attempts in flight are left to finish; their outcome is recorded as usual, without a retry.
 */
export async function cancelPending(tx: SqlHandle, endpointId: string, reason: string): Promise<void> {
  await tx`
    update webhook_deliveries set status = 'gave_up', error = ${reason}, next_attempt_at = null
    where endpoint_id = ${endpointId} and status = 'pending' and (lease_until is null or lease_until < now())`;
}

/** A delivery reached its receiver: the give-up streak starts again. */
export async function recordEndpointSuccess(tx: SqlHandle, endpointId: string): Promise<void> {
  await tx`update webhook_endpoints set consecutive_give_ups = 0 where id = ${endpointId} and consecutive_give_ups <> 0`;
}

/**
 * A delivery gave up. The 20th in a row disables the endpoint (its GET says why) and ends its other
 * pending attempts. Returns whether this disabled it.
 */
export async function recordEndpointGiveUp(tx: SqlHandle, endpointId: string): Promise<boolean> {
  const [row] = await tx<{ consecutive_give_ups: number; enabled: boolean }[]>`
    update webhook_endpoints set consecutive_give_ups = consecutive_give_ups + 1
    where id = ${endpointId} returning consecutive_give_ups, enabled`;
  if (!row || !row.enabled || row.consecutive_give_ups < DISABLE_AFTER_GIVE_UPS) return false;
  await tx`
    update webhook_endpoints set enabled = false, disabled_at = now(), updated_at = now(),
      disabled_reason = ${`Disabled after ${DISABLE_AFTER_GIVE_UPS} deliveries in a row gave up; fix the receiver and PATCH enabled: true`}
    where id = ${endpointId}`;
  await cancelPending(tx, endpointId, 'endpoint disabled');
  return true;
}
