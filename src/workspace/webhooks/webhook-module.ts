import { Router } from 'express';
import type { AppDeps } from '../../app/app-deps.js';
import type { LookoutModule } from '../../app/module.js';
import { secretBox } from '../../app/secret-box-access.js';
import { WebhookDeliverer } from './webhook-deliverer.js';
import { DEFAULT_BACKOFF_BASE_MS } from './retry-schedule.js';
import { deliveryBacklog } from './delivery-store.js';
import { webhookRoutes } from './webhook-routes.js';

declare module '../../app/app-deps.js' {
  interface ServiceRegistry {
    webhookDeliverer?: WebhookDeliverer;
  }
}

/**
 * Signed webhooks: endpoint routes, and the deliverer that reads the issue-event outbox.
 * The deliverer is started and stopped with the outbox relay (workspace/issues/issue-module.ts), so
 * it runs wherever the relay runs — the worker role — and never on a request path.
 */
export const webhooksModule: LookoutModule = {
  name: 'webhooks',
  init(deps: AppDeps) {
    deps.services.webhookDeliverer = new WebhookDeliverer(
      deps.sql,
      secretBox(deps),
      { ...deps.config.webhooks, backoffBaseMs: deps.harness.webhookBackoffBaseMs ?? DEFAULT_BACKOFF_BASE_MS, publicUrl: deps.config.publicUrl },
      deps.logger.child({ component: 'webhooks' }),
      { onOutcome: (outcome) => deps.metrics.webhookDeliveries.inc({ outcome }) },
    );
    deps.metrics.sources.webhookBacklog = () => deliveryBacklog(deps.sql);
  },
  api(deps: AppDeps) {
    const router = Router();
    webhookRoutes(router, deps);
    return router;
  },
};
