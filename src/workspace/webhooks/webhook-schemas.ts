import type { JsonSchema, OpenApiDocument } from '../../platform/http/openapi.js';
import { ALL_EVENTS, DELIVERY_STATUSES, WEBHOOK_EVENTS, WEBHOOK_FORMATS } from './webhook-types.js';

const dateTime = { type: 'string', format: 'date-time' };
const nullableDateTime = { type: ['string', 'null'], format: 'date-time' };

export const urlField = { type: 'string', minLength: 1, maxLength: 2048, description: 'http(s) URL; not loopback, private or link-local unless LOOKOUT_WEBHOOK_ALLOW_PRIVATE=1' };
export const eventsField = {
  type: 'array', minItems: 1, maxItems: WEBHOOK_EVENTS.length + 1, uniqueItems: true,
  items: { enum: [...WEBHOOK_EVENTS, ALL_EVENTS] },
  description: '`*` subscribes to every event',
};
export const formatField = { enum: [...WEBHOOK_FORMATS], description: '`json` (default) or `slack` (a {text, blocks} body for a Slack incoming webhook)' };
export const descriptionField = { type: ['string', 'null'], maxLength: 500 };

const endpointProperties = {
  id: { type: 'string', format: 'uuid' },
  project_id: { type: 'string', format: 'uuid' },
  url: { type: 'string' },
  events: { type: 'array', items: { type: 'string' } },
  format: { enum: [...WEBHOOK_FORMATS] },
  description: { type: ['string', 'null'] },
  enabled: { type: 'boolean' },
  disabled_reason: { type: ['string', 'null'], description: 'Why the endpoint is disabled (by a user, or after 20 deliveries in a row gave up)' },
  disabled_at: nullableDateTime,
  consecutive_give_ups: { type: 'integer', description: 'Deliveries that gave up in a row; 20 disables the endpoint' },
  created_at: dateTime,
  updated_at: dateTime,
};
const endpointRequired = Object.keys(endpointProperties);

/** Registers the webhook schemas once per OpenAPI document and returns their $refs. */
export function webhookSchemas(openapi: OpenApiDocument): Record<'Endpoint' | 'EndpointWithSecret' | 'EndpointList' | 'Delivery' | 'DeliveryList', JsonSchema> {
  const Endpoint = openapi.addSchema('WebhookEndpoint', { type: 'object', required: endpointRequired, properties: endpointProperties });
  const EndpointWithSecret = openapi.addSchema('WebhookEndpointWithSecret', {
    type: 'object',
    required: [...endpointRequired, 'secret'],
    properties: { ...endpointProperties, secret: { type: 'string', description: 'whsec_…: the signing secret, returned only by create and rotate-secret' } },
  });
  const EndpointList = openapi.addSchema('WebhookEndpointList', {
    type: 'object', required: ['webhooks'], properties: { webhooks: { type: 'array', items: Endpoint } },
  });
  const Delivery = openapi.addSchema('WebhookDelivery', {
    type: 'object',
    required: ['id', 'event_id', 'event_type', 'attempt', 'status', 'response_status', 'error', 'next_attempt_at', 'created_at', 'delivered_at'],
    properties: {
      id: { type: 'string', format: 'uuid' },
      event_id: { type: 'string', format: 'uuid', description: 'The Lookout-Event-Id header: the same on every attempt of an event' },
      event_type: { type: 'string' },
      attempt: { type: 'integer', minimum: 1 },
      status: { enum: [...DELIVERY_STATUSES], description: 'pending: not tried yet; failed: this attempt failed, the next runs at next_attempt_at; succeeded; gave_up' },
      response_status: { type: ['integer', 'null'] },
      error: { type: ['string', 'null'] },
      next_attempt_at: nullableDateTime,
      created_at: dateTime,
      delivered_at: nullableDateTime,
    },
  });
  const DeliveryList = openapi.addSchema('WebhookDeliveryList', {
    type: 'object', required: ['deliveries'], properties: { deliveries: { type: 'array', items: Delivery } },
  });
  return { Endpoint, EndpointWithSecret, EndpointList, Delivery, DeliveryList };
}
