import type { AppDeps } from '../../app/app-deps.js';
import { NotFoundError } from '../../platform/http/errors.js';
import type { Principal } from '../../tenancy/tenancy-store.js';
import type { OutboxRelay } from './outbox-relay.js';
import { webhookDeliverer } from '../webhooks/webhook-access.js';
import { findIssueRow } from './issue-store.js';
import type { IssueRow } from './issue-types.js';

/**
 * Loads an issue for a route keyed by issue id: another tenant's issue, or one outside a
 * project-limited key, is a 404 exactly like an unknown id, so ids of others leak nothing.
 */
export async function issueForPrincipal(deps: AppDeps, principal: Principal, issueId: string): Promise<IssueRow> {
  const row = await findIssueRow(deps.sql, principal.tenantId, issueId);
  if (!row || (principal.projectId && row.project_id !== principal.projectId)) throw new NotFoundError('Issue not found');
  return row;
}

/** The outbox relay of this process (set up by the issues module); routes wake it after a commit. */
export function issueRelay(deps: AppDeps): OutboxRelay | undefined {
  return deps.services.issueOutboxRelay;
}

/** Wakes every reader of the outbox in this process: the analytics relay and the webhook deliverer. */
export function kickRelay(deps: AppDeps): void {
  issueRelay(deps)?.kick();
  webhookDeliverer(deps)?.kick();
}
