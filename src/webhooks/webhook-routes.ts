import crypto from 'node:crypto';
import type { Router } from 'express';
import type { AppDeps } from '../app-deps.js';
import { NotFoundError } from '../http/errors.js';
import { defineRoute } from '../http/route.js';
import type { Principal } from '../tenancy/tenancy-store.js';
import type { SqlHandle } from '../stores/postgres.js';
import { secretBox } from '../workspace/tickets/tracker-access.js';
import { findDelivery, insertEvent, listDeliveries, queueAttempt } from './delivery-store.js';
import { webhookDeliverer } from './webhook-access.js';
import { testEnvelope } from './webhook-payload.js';
import { descriptionField, eventsField, formatField, urlField, webhookSchemas } from './webhook-schemas.js';
import { DELIVERY_TIMEOUT_MS } from './webhook-sender.js';
import { newWebhookSecret, secretAssociation } from './webhook-signature.js';
import { deleteEndpoint, findEndpoint, insertEndpoint, listEndpoints, setEndpointSecret, updateEndpoint, type EndpointPatch } from './webhook-store.js';
import { TEST_EVENT, toDelivery, toEndpoint, type EndpointRow, type WebhookFormat } from './webhook-types.js';
import { checkWebhookUrl } from './url-guard.js';

interface CreateBody {
  url: string;
  events: string[];
  format?: WebhookFormat;
  description?: string | null;
}

/** The endpoint of a route keyed by webhook id: another tenant's, or one outside a project-limited key, is a 404 like an unknown id. */
async function endpointForPrincipal(deps: AppDeps, principal: Principal, id: string, options: { forUpdate?: boolean; sql?: SqlHandle } = {}): Promise<EndpointRow> {
  const row = await findEndpoint(options.sql ?? deps.sql, principal.tenantId, id, options);
  if (!row || (principal.projectId && row.project_id !== principal.projectId)) throw new NotFoundError('Webhook not found');
  return row;
}

const cleanDescription = (value: string | null | undefined) => (value == null ? value : value.trim() || null);

/**
 * Webhook endpoints of a project (docs/webhooks.md), all admin scope. The signing secret is
 * returned by create and rotate-secret only; it is stored sealed (AES-256-GCM, as the other
 * integration secrets) and never appears in any other answer.
 */
export function webhookRoutes(router: Router, deps: AppDeps): void {
  const s = webhookSchemas(deps.openapi);
  const allowPrivate = deps.config.webhooks.allowPrivate;
  const seal = (tenantId: string, endpointId: string, secret: string) => secretBox(deps).seal(secret, secretAssociation(tenantId, endpointId));

  defineRoute<CreateBody>(router, deps, {
    method: 'post', path: '/projects/{project_id}/webhooks', tag: 'webhooks', scope: 'admin', projectParam: true,
    summary: 'Add a webhook endpoint; the answer carries its signing secret (whsec_…), shown only here',
    body: {
      type: 'object', additionalProperties: false, required: ['url', 'events'],
      properties: { url: urlField, events: eventsField, format: formatField, description: descriptionField },
    },
    responses: { 201: { description: 'Created, with the secret', schema: s.EndpointWithSecret } },
    handler: async ({ tenantId, project, body }) => {
      const url = await checkWebhookUrl(body.url, allowPrivate);
      const id = crypto.randomUUID();
      const secret = newWebhookSecret();
      const row = await insertEndpoint(deps.sql, {
        id, tenantId, projectId: project.id, url, events: body.events, format: body.format ?? 'json',
        description: cleanDescription(body.description) ?? null, secretSealed: seal(tenantId, id, secret),
      });
      return { status: 201, body: { ...toEndpoint(row), secret } };
    },
  });

  defineRoute(router, deps, {
    method: 'get', path: '/projects/{project_id}/webhooks', tag: 'webhooks', scope: 'admin', projectParam: true,
    summary: "The project's webhook endpoints, oldest first (never their secrets)",
    responses: { 200: { description: 'Endpoints', schema: s.EndpointList } },
    handler: async ({ tenantId, project }) => ({ webhooks: (await listEndpoints(deps.sql, tenantId, project.id)).map(toEndpoint) }),
  });

  defineRoute(router, deps, {
    method: 'get', path: '/webhooks/{webhook_id}', tag: 'webhooks', scope: 'admin',
    summary: 'A webhook endpoint; `enabled: false` with `disabled_reason` says why it stopped',
    responses: { 200: { description: 'Endpoint', schema: s.Endpoint } },
    handler: async ({ principal, params }) => toEndpoint(await endpointForPrincipal(deps, principal, params.webhook_id)),
  });

  defineRoute<EndpointPatch>(router, deps, {
    method: 'patch', path: '/webhooks/{webhook_id}', tag: 'webhooks', scope: 'admin',
    summary: 'Change url, events, format, description or enabled (enabling clears the give-up streak; disabling ends pending attempts)',
    body: {
      type: 'object', additionalProperties: false, minProperties: 1,
      properties: { url: urlField, events: eventsField, format: formatField, description: descriptionField, enabled: { type: 'boolean' } },
    },
    responses: { 200: { description: 'Endpoint', schema: s.Endpoint } },
    handler: async ({ principal, params, body }) => {
      // Checked before the transaction: the DNS lookup must not hold the row lock.
      const url = body.url === undefined ? undefined : await checkWebhookUrl(body.url, allowPrivate);
      const row = await deps.sql.begin(async (tx) => {
        const current = await endpointForPrincipal(deps, principal, params.webhook_id, { forUpdate: true, sql: tx });
        return updateEndpoint(tx, current, { ...body, url, description: cleanDescription(body.description) });
      });
      webhookDeliverer(deps)?.kick();
      return toEndpoint(row);
    },
  });

  defineRoute(router, deps, {
    method: 'delete', path: '/webhooks/{webhook_id}', tag: 'webhooks', scope: 'admin',
    summary: 'Delete a webhook endpoint with its delivery log',
    responses: { 204: { description: 'Deleted' } },
    handler: async ({ principal, tenantId, params }) => {
      const row = await endpointForPrincipal(deps, principal, params.webhook_id);
      if (!(await deleteEndpoint(deps.sql, tenantId, row.id))) throw new NotFoundError('Webhook not found');
      return { status: 204 };
    },
  });

  defineRoute(router, deps, {
    method: 'post', path: '/webhooks/{webhook_id}/rotate-secret', tag: 'webhooks', scope: 'admin',
    summary: 'Replace the signing secret; the answer carries the new one, shown only here. Attempts from now on are signed with it',
    responses: { 200: { description: 'Endpoint with its new secret', schema: s.EndpointWithSecret } },
    handler: async ({ principal, tenantId, params }) => {
      const current = await endpointForPrincipal(deps, principal, params.webhook_id);
      const secret = newWebhookSecret();
      const row = await setEndpointSecret(deps.sql, tenantId, current.id, seal(tenantId, current.id, secret));
      if (!row) throw new NotFoundError('Webhook not found');
      return { ...toEndpoint(row), secret };
    },
  });

  defineRoute(router, deps, {
    method: 'post', path: '/webhooks/{webhook_id}/test', tag: 'webhooks', scope: 'admin',
    summary: 'Send a webhook.test event (also to a disabled endpoint) and answer with its delivery once tried; tried once, never retried',
    responses: { 200: { description: 'The delivery (still `pending` if no worker tried it within 15 s)', schema: s.Delivery } },
    handler: async ({ principal, tenantId, params }) => {
      const endpoint = await endpointForPrincipal(deps, principal, params.webhook_id);
      const now = new Date();
      const eventId = crypto.randomUUID();
      const envelope = await testEnvelope(deps.sql, tenantId, endpoint.project_id, endpoint.id, eventId, now);
      const deliveryId = await deps.sql.begin(async (tx) => {
        await insertEvent(tx, { eventId, tenantId, projectId: endpoint.project_id, type: TEST_EVENT, body: JSON.stringify(envelope) });
        return queueAttempt(tx, { tenantId, endpointId: endpoint.id, eventId, eventType: TEST_EVENT, attempt: 1, at: now });
      });
      // A worker sends it (this process's, or another's at its next poll); the request only waits.
      webhookDeliverer(deps)?.kick();
      const deadline = Date.now() + DELIVERY_TIMEOUT_MS + 5_000;
      let delivery = await findDelivery(deps.sql, tenantId, deliveryId!);
      while (delivery?.status === 'pending' && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 100));
        delivery = await findDelivery(deps.sql, tenantId, deliveryId!);
      }
      if (!delivery) throw new NotFoundError('Webhook not found');
      return toDelivery(delivery);
    },
  });

  defineRoute<unknown, { limit: number }>(router, deps, {
    method: 'get', path: '/webhooks/{webhook_id}/deliveries', tag: 'webhooks', scope: 'admin',
    summary: 'The delivery log, newest first: one row per attempt',
    query: { type: 'object', additionalProperties: false, properties: { limit: { type: 'integer', minimum: 1, maximum: 200, default: 50 } } },
    responses: { 200: { description: 'Attempts', schema: s.DeliveryList } },
    handler: async ({ principal, tenantId, params, query }) => {
      const endpoint = await endpointForPrincipal(deps, principal, params.webhook_id);
      return { deliveries: (await listDeliveries(deps.sql, tenantId, endpoint.id, query.limit)).map(toDelivery) };
    },
  });
}
