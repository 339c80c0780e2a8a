import { ALL_EVENTS, DELIVERY_STATUSES, WEBHOOK_EVENTS, WEBHOOK_FORMATS, type WebhookDelivery, type WebhookEndpoint } from './webhook-schemas.js';

export { ALL_EVENTS, DELIVERY_STATUSES, WEBHOOK_EVENTS, WEBHOOK_FORMATS, type WebhookDelivery, type WebhookEndpoint };
export type WebhookEventType = (typeof WEBHOOK_EVENTS)[number];

/** Sent only by POST /webhooks/{id}/test; nobody subscribes to it. */
export const TEST_EVENT = 'webhook.test';

export type WebhookFormat = (typeof WEBHOOK_FORMATS)[number];

export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** An endpoint that gave up this many deliveries in a row is disabled. */
export const DISABLE_AFTER_GIVE_UPS = 20;

export interface EndpointRow {
  id: string;
  tenant_id: string;
  project_id: string;
  url: string;
  events: string[];
  format: WebhookFormat;
  description: string | null;
  enabled: boolean;
  secret_sealed: string;
  consecutive_give_ups: number;
  disabled_reason: string | null;
  disabled_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export function toEndpoint(row: EndpointRow): WebhookEndpoint {
  return {
    id: row.id,
    project_id: row.project_id,
    url: row.url,
    events: row.events,
    format: row.format,
    description: row.description,
    enabled: row.enabled,
    disabled_reason: row.disabled_reason,
    disabled_at: row.disabled_at?.toISOString() ?? null,
    consecutive_give_ups: row.consecutive_give_ups,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

export interface DeliveryRow {
  id: string;
  tenant_id: string;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  attempt: number;
  status: DeliveryStatus;
  response_status: number | null;
  error: string | null;
  next_attempt_at: Date | null;
  created_at: Date;
  delivered_at: Date | null;
}

export function toDelivery(row: DeliveryRow): WebhookDelivery {
  return {
    id: row.id,
    event_id: row.event_id,
    event_type: row.event_type,
    attempt: row.attempt,
    status: row.status,
    response_status: row.response_status,
    error: row.error,
    next_attempt_at: row.next_attempt_at?.toISOString() ?? null,
    created_at: row.created_at.toISOString(),
    delivered_at: row.delivered_at?.toISOString() ?? null,
  };
}

/** Whether an endpoint subscribed to `events` wants an event of this type. */
export function subscribes(events: readonly string[], type: string): boolean {
  if (!(WEBHOOK_EVENTS as readonly string[]).includes(type)) return false;
  return events.includes(ALL_EVENTS) || events.includes(type);
}
