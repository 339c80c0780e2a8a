import type { NewWebhookEndpoint, WebhookEndpointWithSecret } from './webhook-schemas.js';
import crypto from 'node:crypto';
import type { AppDeps } from '../../app/app-deps.js';
import { NotFoundError } from '../../platform/http/errors.js';
import type { SqlHandle } from '../../platform/postgres/postgres.js';
import type { Principal } from '../../tenancy/tenancy-store.js';
import { secretBox } from '../../app/secret-box-access.js';
import { findDelivery, insertEvents, listDeliveries, queueAttempts } from './delivery-store.js';
import { checkWebhookUrl } from './url-guard.js';
import { webhookDeliverer } from './webhook-access.js';
import { testEnvelope } from './webhook-payload.js';
import { DELIVERY_TIMEOUT_MS } from './webhook-sender.js';
import { newWebhookSecret, secretAssociation } from './webhook-signature.js';
import { deleteEndpoint, findEndpoint, insertEndpoint, listEndpoints, setEndpointSecret, updateEndpoint, type EndpointPatch } from './webhook-store.js';
import { TEST_EVENT, toDelivery, toEndpoint, type EndpointRow, type WebhookDelivery, type WebhookEndpoint } from './webhook-types.js';

/** The create body (webhook-schemas.ts). */
export type NewEndpointInput = NewWebhookEndpoint;

/** An endpoint as create and rotate-secret answer it: with the signing secret, shown only there. */
export type EndpointWithSecret = WebhookEndpointWithSecret;

/**
 * Webhook endpoints as the routes see them: route → this service → webhook-store and
 * delivery-store. It owns the URL check (before any row lock), the sealing of the signing secret
 * (AES-256-GCM, as the other integration secrets), the access check by webhook id, and waking the
 * deliverer after a commit that gives it work.
 */
export class WebhookService {
  constructor(private readonly deps: AppDeps) {}

  async create(tenantId: string, projectId: string, input: NewEndpointInput): Promise<EndpointWithSecret> {
    const url = await checkWebhookUrl(input.url, this.deps.config.webhooks.allowPrivate);
    const id = crypto.randomUUID();
    const secret = newWebhookSecret();
    const row = await insertEndpoint(this.deps.sql, {
      id, tenantId, projectId, url, events: input.events, format: input.format ?? 'json',
      description: cleanDescription(input.description) ?? null, secretSealed: this.seal(tenantId, id, secret),
    });
    return { ...toEndpoint(row), secret };
  }

  async list(tenantId: string, projectId: string): Promise<WebhookEndpoint[]> {
    return (await listEndpoints(this.deps.sql, tenantId, projectId)).map(toEndpoint);
  }

  async get(principal: Principal, id: string): Promise<WebhookEndpoint> {
    return toEndpoint(await this.endpointForPrincipal(principal, id));
  }

  async update(principal: Principal, id: string, patch: EndpointPatch): Promise<WebhookEndpoint> {
    // Checked before the transaction: the DNS lookup must not hold the row lock.
    const url = patch.url === undefined ? undefined : await checkWebhookUrl(patch.url, this.deps.config.webhooks.allowPrivate);
    const row = await this.deps.sql.begin(async (tx) => {
      const current = await this.endpointForPrincipal(principal, id, { forUpdate: true, sql: tx });
      return updateEndpoint(tx, current, { ...patch, url, description: cleanDescription(patch.description) });
    });
    webhookDeliverer(this.deps)?.kick();
    return toEndpoint(row);
  }

  async delete(principal: Principal, id: string): Promise<void> {
    const row = await this.endpointForPrincipal(principal, id);
    if (!(await deleteEndpoint(this.deps.sql, principal.tenantId, row.id))) throw new NotFoundError('Webhook not found');
  }

  async rotateSecret(principal: Principal, id: string): Promise<EndpointWithSecret> {
    const tenantId = principal.tenantId;
    const current = await this.endpointForPrincipal(principal, id);
    const secret = newWebhookSecret();
    const row = await setEndpointSecret(this.deps.sql, tenantId, current.id, this.seal(tenantId, current.id, secret));
    if (!row) throw new NotFoundError('Webhook not found');
    return { ...toEndpoint(row), secret };
  }

  /** Queues a webhook.test event (also to a disabled endpoint) and answers its delivery once tried, or still pending. */
  async sendTest(principal: Principal, id: string): Promise<WebhookDelivery> {
    const tenantId = principal.tenantId;
    const endpoint = await this.endpointForPrincipal(principal, id);
    const now = new Date();
    const eventId = crypto.randomUUID();
    const envelope = await testEnvelope(this.deps.sql, tenantId, endpoint.project_id, endpoint.id, eventId, now);
    const deliveryId = await this.deps.sql.begin(async (tx) => {
      await insertEvents(tx, [{ eventId, tenantId, projectId: endpoint.project_id, type: TEST_EVENT, body: JSON.stringify(envelope) }]);
      const [queued] = await queueAttempts(tx, [{ tenantId, endpointId: endpoint.id, eventId, eventType: TEST_EVENT, attempt: 1, at: now }]);
      return queued;
    });
    // A worker sends it (this process's, or another's at its next poll); the request only waits.
    webhookDeliverer(this.deps)?.kick();
    const deadline = Date.now() + DELIVERY_TIMEOUT_MS + 5_000;
    let delivery = await findDelivery(this.deps.sql, tenantId, deliveryId);
    while (delivery?.status === 'pending' && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      delivery = await findDelivery(this.deps.sql, tenantId, deliveryId);
    }
    if (!delivery) throw new NotFoundError('Webhook not found');
    return toDelivery(delivery);
  }

  async deliveries(principal: Principal, id: string, limit: number): Promise<WebhookDelivery[]> {
    const endpoint = await this.endpointForPrincipal(principal, id);
    return (await listDeliveries(this.deps.sql, principal.tenantId, endpoint.id, limit)).map(toDelivery);
  }

  /** Another tenant's endpoint, or one outside a project-limited key, is a 404 like an unknown id. */
  private async endpointForPrincipal(principal: Principal, id: string, options: { forUpdate?: boolean; sql?: SqlHandle } = {}): Promise<EndpointRow> {
    const row = await findEndpoint(options.sql ?? this.deps.sql, principal.tenantId, id, options);
    if (!row || (principal.projectId && row.project_id !== principal.projectId)) throw new NotFoundError('Webhook not found');
    return row;
  }

  private seal(tenantId: string, endpointId: string, secret: string): string {
    return secretBox(this.deps).seal(secret, secretAssociation(tenantId, endpointId));
  }
}

function cleanDescription(value: string | null | undefined): string | null | undefined {
  return value == null ? value : value.trim() || null;
}
