import crypto from 'node:crypto';
import type { SqlHandle } from '../../platform/postgres/postgres.js';
import { SYSTEM_ORIGIN } from '../../spans/origin.js';

/**
 * Writes monitor.activated (a monitor left learning) into the outbox, in the transaction that
 * activates it, so webhooks hear of it exactly when it happened. Analytics has no monitor event
 * table: the row is written already relayed, and only the webhook fan-out reads it.
 */
export async function recordMonitorActivated(tx: SqlHandle, event: { tenantId: string; projectId: string; monitorId: string; occurredAt: Date }): Promise<string> {
  const eventId = crypto.randomUUID();
  await tx`
    insert into issue_event_outbox (event_id, tenant_id, project_id, monitor_id, name, occurred_at, actor, surface, user_id, api_key_id, relayed_at)
    values (${eventId}, ${event.tenantId}, ${event.projectId}, ${event.monitorId}, 'monitor.activated', ${event.occurredAt},
            ${SYSTEM_ORIGIN.actor}, ${SYSTEM_ORIGIN.surface}, ${SYSTEM_ORIGIN.user_id}, ${SYSTEM_ORIGIN.api_key_id}, now())`;
  return eventId;
}
