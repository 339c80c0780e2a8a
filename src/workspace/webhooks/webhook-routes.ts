import type { Router } from 'express';
import type { AppDeps } from '../../app/app-deps.js';
import { defineRoute } from '../../app/route.js';
import {
  NewWebhookEndpoint,
  WebhookDeliveriesQuery,
  WebhookDelivery,
  WebhookDeliveryList,
  WebhookEndpoint,
  WebhookEndpointList,
  WebhookEndpointPatch,
  WebhookEndpointWithSecret,
} from './webhook-schemas.js';
import { WebhookService } from './webhook-service.js';

/**
 * Webhook endpoints of a project (docs/webhooks.md), all admin scope. The signing secret is
 * returned by create and rotate-secret only; it is stored sealed (AES-256-GCM, as the other
 * integration secrets) and never appears in any other answer.
 */
export function webhookRoutes(router: Router, deps: AppDeps): void {
  const Endpoint = deps.openapi.addSchema('WebhookEndpoint', WebhookEndpoint);
  const Delivery = deps.openapi.addSchema('WebhookDelivery', WebhookDelivery);
  const s = {
    Endpoint,
    EndpointWithSecret: deps.openapi.addSchema('WebhookEndpointWithSecret', WebhookEndpointWithSecret),
    EndpointList: deps.openapi.addSchema('WebhookEndpointList', WebhookEndpointList),
    Delivery,
    DeliveryList: deps.openapi.addSchema('WebhookDeliveryList', WebhookDeliveryList),
  };
  const webhooks = new WebhookService(deps);

  defineRoute<NewWebhookEndpoint>(router, deps, {
    method: 'post', path: '/projects/{project_id}/webhooks', tag: 'webhooks', scope: 'admin', projectParam: true,
    summary: 'Add a webhook endpoint; the answer carries its signing secret (whsec_…), shown only here',
    body: NewWebhookEndpoint,
    responses: { 201: { description: 'Created, with the secret', schema: s.EndpointWithSecret } },
    handler: async ({ tenantId, project, body }) => ({ status: 201, body: await webhooks.create(tenantId, project.id, body) }),
  });

  defineRoute(router, deps, {
    method: 'get', path: '/projects/{project_id}/webhooks', tag: 'webhooks', scope: 'admin', projectParam: true,
    summary: "The project's webhook endpoints, oldest first (never their secrets)",
    responses: { 200: { description: 'Endpoints', schema: s.EndpointList } },
    handler: async ({ tenantId, project }) => ({ webhooks: await webhooks.list(tenantId, project.id) }),
  });

  defineRoute(router, deps, {
    method: 'get', path: '/webhooks/{webhook_id}', tag: 'webhooks', scope: 'admin',
    summary: 'A webhook endpoint; `enabled: false` with `disabled_reason` says why it stopped',
    responses: { 200: { description: 'Endpoint', schema: s.Endpoint } },
    handler: ({ principal, params }) => webhooks.get(principal, params.webhook_id),
  });

  defineRoute<WebhookEndpointPatch>(router, deps, {
    method: 'patch', path: '/webhooks/{webhook_id}', tag: 'webhooks', scope: 'admin',
    summary: 'Change url, events, format, description or enabled (enabling clears the give-up streak; disabling ends pending attempts)',
    body: WebhookEndpointPatch,
    responses: { 200: { description: 'Endpoint', schema: s.Endpoint } },
    handler: ({ principal, params, body }) => webhooks.update(principal, params.webhook_id, body),
  });

  defineRoute(router, deps, {
    method: 'delete', path: '/webhooks/{webhook_id}', tag: 'webhooks', scope: 'admin',
    summary: 'Delete a webhook endpoint with its delivery log',
    responses: { 204: { description: 'Deleted' } },
    handler: async ({ principal, params }) => {
      await webhooks.delete(principal, params.webhook_id);
      return { status: 204 };
    },
  });

  defineRoute(router, deps, {
    method: 'post', path: '/webhooks/{webhook_id}/rotate-secret', tag: 'webhooks', scope: 'admin',
    summary: 'Replace the signing secret; the answer carries the new one, shown only here. Attempts from now on are signed with it',
    responses: { 200: { description: 'Endpoint with its new secret', schema: s.EndpointWithSecret } },
    handler: ({ principal, params }) => webhooks.rotateSecret(principal, params.webhook_id),
  });

  defineRoute(router, deps, {
    method: 'post', path: '/webhooks/{webhook_id}/test', tag: 'webhooks', scope: 'admin',
    summary: 'Send a webhook.test event (also to a disabled endpoint) and answer with its delivery once tried; tried once, never retried',
    responses: { 200: { description: 'The delivery (still `pending` if no worker tried it within 15 s)', schema: s.Delivery } },
    handler: ({ principal, params }) => webhooks.sendTest(principal, params.webhook_id),
  });

  defineRoute<unknown, { limit: number }>(router, deps, {
    method: 'get', path: '/webhooks/{webhook_id}/deliveries', tag: 'webhooks', scope: 'admin',
    summary: 'The delivery log, newest first: one row per attempt',
    query: WebhookDeliveriesQuery,
    responses: { 200: { description: 'Attempts', schema: s.DeliveryList } },
    handler: async ({ principal, params, query }) => ({ deliveries: await webhooks.deliveries(principal, params.webhook_id, query.limit) }),
  });
}
