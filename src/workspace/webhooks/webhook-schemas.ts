/**
 * The webhook routes' requests and answers, declared once as TypeBox schemas: the JSON Schema the
 * OpenAPI document carries and ajv validates bodies with, and the TypeScript types derived from
 * them (`Static`) that the service returns and the dashboard imports. This file imports nothing of
 * the server, so the dashboard's type check can read it; the routes register the schemas.
 */
import { Type, type Static } from 'typebox';
import { componentRef, nullable } from '../../platform/http/shape-kit.js';

/** The events an endpoint can subscribe to (docs/webhooks.md "Events"); `*` is all of them. */
export const WEBHOOK_EVENTS = ['issue.created', 'issue.reopened', 'issue.resolved', 'issue.dismissed', 'issue.review_started', 'monitor.activated'] as const;
export const ALL_EVENTS = '*';
export const WEBHOOK_FORMATS = ['json', 'slack'] as const;
export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed', 'gave_up'] as const;

const dateTime = Type.String({ format: 'date-time' });
const nullableDateTime = nullable(Type.String({ format: 'date-time' }));

const urlField = Type.String({ minLength: 1, maxLength: 2048, description: 'http(s) URL; not loopback, private or link-local unless LOOKOUT_WEBHOOK_ALLOW_PRIVATE=1' });
const eventsField = Type.Array(Type.Enum([...WEBHOOK_EVENTS, ALL_EVENTS]), {
  minItems: 1,
  maxItems: WEBHOOK_EVENTS.length + 1,
  uniqueItems: true,
  description: '`*` subscribes to every event',
});
const formatField = Type.Enum([...WEBHOOK_FORMATS], { description: '`json` (default) or `slack` (a {text, blocks} body for a Slack incoming webhook)' });
const descriptionField = nullable(Type.String({ maxLength: 500 }));

/** POST /projects/{project_id}/webhooks. */
export const NewWebhookEndpoint = Type.Object(
  { url: urlField, events: eventsField, format: Type.Optional(formatField), description: Type.Optional(descriptionField) },
  { additionalProperties: false },
);
export type NewWebhookEndpoint = Static<typeof NewWebhookEndpoint>;

/** PATCH /webhooks/{webhook_id}: any of the fields, at least one. */
export const WebhookEndpointPatch = Type.Object(
  {
    url: Type.Optional(urlField),
    events: Type.Optional(eventsField),
    format: Type.Optional(formatField),
    description: Type.Optional(descriptionField),
    enabled: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type WebhookEndpointPatch = Static<typeof WebhookEndpointPatch>;

/** GET /webhooks/{webhook_id}/deliveries: the query string. */
export const WebhookDeliveriesQuery = Type.Object({ limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })) }, { additionalProperties: false });

const endpointProperties = {
  id: Type.String({ format: 'uuid' }),
  project_id: Type.String({ format: 'uuid' }),
  url: Type.String(),
  events: Type.Array(Type.String()),
  format: Type.Enum([...WEBHOOK_FORMATS]),
  description: nullable(Type.String()),
  enabled: Type.Boolean(),
  disabled_reason: nullable(Type.String({ description: 'Why the endpoint is disabled (by a user, or after 20 deliveries in a row gave up)' })),
  disabled_at: nullableDateTime,
  consecutive_give_ups: Type.Integer({ description: 'Deliveries that gave up in a row; 20 disables the endpoint' }),
  created_at: dateTime,
  updated_at: dateTime,
};

/** An endpoint as the routes answer it: never its secret, sealed or not. */
export const WebhookEndpoint = Type.Object(endpointProperties);
export type WebhookEndpoint = Static<typeof WebhookEndpoint>;

/** Create and rotate-secret answer the endpoint with its signing secret, shown only there. */
export const WebhookEndpointWithSecret = Type.Object({
  ...endpointProperties,
  secret: Type.String({ description: 'whsec_…: the signing secret, returned only by create and rotate-secret' }),
});
export type WebhookEndpointWithSecret = Static<typeof WebhookEndpointWithSecret>;

/** One delivery attempt of the webhook log. */
export const WebhookDelivery = Type.Object({
  id: Type.String({ format: 'uuid' }),
  event_id: Type.String({ format: 'uuid', description: 'The Lookout-Event-Id header: the same on every attempt of an event' }),
  event_type: Type.String(),
  attempt: Type.Integer({ minimum: 1 }),
  status: Type.Enum([...DELIVERY_STATUSES], { description: 'pending: not tried yet; failed: this attempt failed, the next runs at next_attempt_at; succeeded; gave_up' }),
  response_status: nullable(Type.Integer()),
  error: nullable(Type.String()),
  next_attempt_at: nullableDateTime,
  created_at: dateTime,
  delivered_at: nullableDateTime,
});
export type WebhookDelivery = Static<typeof WebhookDelivery>;

/** GET /projects/{project_id}/webhooks and GET /webhooks/{webhook_id}/deliveries. */
export const WebhookEndpointList = Type.Object({ webhooks: Type.Array(componentRef('WebhookEndpoint', WebhookEndpoint)) });
export const WebhookDeliveryList = Type.Object({ deliveries: Type.Array(componentRef('WebhookDelivery', WebhookDelivery)) });
