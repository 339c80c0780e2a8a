import { Router } from 'express';
import type { AppDeps } from '../../app/app-deps.js';
import type { LookoutModule } from '../../app/module.js';
import { OutboxRelay } from './outbox-relay.js';
import { traceHooks } from '../../ingest/trace-hook-registry.js';
import { webhookDeliverer } from '../webhooks/webhook-access.js';
import { ticketRoutes } from '../tickets/ticket-routes.js';
import { trackerSettingsRoutes } from '../tickets/tracker-settings-routes.js';
import { issueRelay, kickRelay } from './issue-access.js';
import { extractionGroupListener, readExtraction, readTraceOccurrences } from './issue-extraction.js';
import { issueRoutes, registerIssueSchemas } from './issue-routes.js';
import { tagRoutes } from './tag-routes.js';

declare module '../../app/app-deps.js' {
  interface ServiceRegistry {
    /** The issue-event outbox relay of this process; routes wake it after a commit. */
    issueOutboxRelay?: OutboxRelay;
  }
}

/**
 * Issues found in traces: routes for issues, tags, ticket tracker and pull requests;
 * extraction hooked into trace processing; and the outbox relay that delivers issue.* events to
 * ClickHouse in the background.
 */
export const issuesModule: LookoutModule = {
  name: 'issues',
  init(deps: AppDeps) {
    deps.services.issueOutboxRelay = new OutboxRelay(deps.sql, deps.ch, deps.logger.child({ component: 'issue-outbox' }));
    const hooks = traceHooks(deps);
    hooks.onTracesProcessed.push(extractionGroupListener(deps.sql, deps.logger.child({ component: 'issue-extraction' }), () => kickRelay(deps)));
    hooks.issueExtraction = (tenantId, projectId, traceId) => readExtraction(deps.sql, tenantId, projectId, traceId);
    hooks.traceOccurrences = (tenantId, projectId, traceId) => readTraceOccurrences(deps.sql, tenantId, projectId, traceId);
  },
  api(deps: AppDeps) {
    const router = Router();
    registerIssueSchemas(deps.openapi);
    // Fixed paths (/issues/tags) before /issues/{issue_id}.
    tagRoutes(router, deps);
    issueRoutes(router, deps);
    ticketRoutes(router, deps);
    trackerSettingsRoutes(router, deps);
    return router;
  },
  start(deps: AppDeps) {
    issueRelay(deps)?.start();
    // The webhook deliverer reads the same outbox: it runs wherever the relay runs (webhooks/webhook-module.ts).
    webhookDeliverer(deps)?.start();
  },
  async stop(deps: AppDeps) {
    await webhookDeliverer(deps)?.stop();
    const relay = issueRelay(deps);
    if (!relay) return;
    await relay.stop();
    // One last best-effort delivery on a clean shutdown; anything left relays at the next start.
    await relay.drain().catch((error) => deps.logger.warn({ err: error }, 'issue event drain at shutdown failed'));
  },
};
