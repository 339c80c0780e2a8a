import type { AppDeps } from '../../app/app-deps.js';
import { ConflictError, NotFoundError, ValidationError } from '../../platform/http/errors.js';
import type { Origin } from '../../spans/origin.js';
import type { Principal } from '../../tenancy/tenancy-store.js';
import { issueForPrincipal } from '../issues/issue-access.js';
import type { IssueRow } from '../issues/issue-types.js';
import { ticketLinkObject, type TicketLinkObject } from './ticket-link-object.js';
import {
  addActivity,
  addPullRequest,
  countPreviewAttempt,
  createPreview,
  deleteLink,
  findLink,
  insertLink,
  issueAssignee,
  lockPreview,
  markLinkSynced,
  markLinkSyncFailed,
  markPreviewUsed,
  type PullRequest,
} from './ticket-link-store.js';
import { trackerFor } from './tracker-access.js';
import { clearTrackerError, readTrackerSettings, recordTrackerError } from './tracker-settings-store.js';
import { TrackerError, type TicketDraft } from './tracker-types.js';
import type { PullRequestInput, TicketPreview, TicketPreviewInput } from './ticket-schemas.js';

export type { TicketPreview };

/**
 * An issue's ticket as the routes see it: route → this service → ticket-link-store, the tenant's
 * tracker settings and the tracker. It owns the transactions that keep a link, its preview and its
 * activity consistent, and the access check by issue id (another tenant's issue is not found).
 */
export class TicketService {
  constructor(private readonly deps: AppDeps) {}

  async preview(principal: Principal, issueId: string, input: TicketPreviewInput): Promise<TicketPreview> {
    const tenantId = principal.tenantId;
    const issue = await issueForPrincipal(this.deps, principal, issueId);
    if (input.title !== undefined && !input.title.trim()) throw new ValidationError('title: must not be blank');
    const settings = await readTrackerSettings(this.deps.sql, tenantId);
    const draft: TicketDraft = {
      provider: settings.provider,
      title: input.title?.trim() ?? issue.title,
      description: input.description ?? defaultDescription(issue),
      team_id: settings.team_id,
      team_key: settings.team_key,
      team_name: settings.team_name,
    };
    const preview = await this.deps.sql.begin(async (tx) => {
      if (await findLink(tx, tenantId, issue.id)) throw new ConflictError('The issue already has a linked ticket; unlink it first');
      return createPreview(tx, tenantId, issue.id, draft);
    });
    return { preview_token: preview.token, ticket: draft, expires_at: preview.expiresAt.toISOString() };
  }

  /** Creates the previewed ticket and links it: 201, or 200 when this token already made the link. */
  async link(principal: Principal, issueId: string, token: string, actor: Origin): Promise<{ status: number; link: TicketLinkObject }> {
    const issue = await issueForPrincipal(this.deps, principal, issueId);
    const { status } = await this.linkFromPreview(principal.tenantId, issue, token, actor);
    return { status, link: await ticketLinkObject(this.deps.sql, principal.tenantId, issue.id) };
  }

  async get(principal: Principal, issueId: string): Promise<TicketLinkObject> {
    const issue = await issueForPrincipal(this.deps, principal, issueId);
    return ticketLinkObject(this.deps.sql, principal.tenantId, issue.id);
  }

  /** Unlinks the ticket (it stays in the tracker); idempotent. */
  async unlink(principal: Principal, issueId: string, actor: Origin): Promise<TicketLinkObject> {
    const tenantId = principal.tenantId;
    const issue = await issueForPrincipal(this.deps, principal, issueId);
    await this.deps.sql.begin(async (tx) => {
      const removed = await deleteLink(tx, tenantId, issue.id);
      if (removed) {
        await addActivity(tx, tenantId, issue.id, {
          type: 'ticket_unlinked', actor, ticketIdentifier: removed.ticket.identifier, metadata: { provider: removed.provider, ticket_id: removed.ticket.id },
        });
      }
    });
    return ticketLinkObject(this.deps.sql, tenantId, issue.id);
  }

  /** Re-reads the linked ticket; a tracker failure is recorded on the link and then answered. */
  async sync(principal: Principal, issueId: string, actor: Origin): Promise<TicketLinkObject> {
    const tenantId = principal.tenantId;
    const issue = await issueForPrincipal(this.deps, principal, issueId);
    const link = await findLink(this.deps.sql, tenantId, issue.id);
    if (!link) throw new NotFoundError('The issue has no linked ticket');
    const settings = await readTrackerSettings(this.deps.sql, tenantId);
    try {
      const ticket = await trackerFor(this.deps, this.deps.sql, tenantId, link.provider, settings).fetchTicket(link.ticket.id);
      await this.deps.sql.begin(async (tx) => {
        await markLinkSynced(tx, link.id, ticket);
        if (ticket.state_id !== link.ticket.state_id) {
          await addActivity(tx, tenantId, issue.id, {
            type: 'ticket_state_changed', actor, ticketIdentifier: ticket.identifier,
            metadata: { from: link.ticket.state_name, to: ticket.state_name, state_type: ticket.state_type },
          });
        }
      });
    } catch (error) {
      if (!(error instanceof TrackerError)) throw error;
      await this.deps.sql.begin(async (tx) => {
        await markLinkSyncFailed(tx, link.id, error.trackerCode, error.detail);
        await addActivity(tx, tenantId, issue.id, {
          type: 'ticket_sync_failed', actor, ticketIdentifier: link.ticket.identifier, metadata: { error_code: error.trackerCode, error_message: error.detail },
        });
      });
      throw error;
    }
    return ticketLinkObject(this.deps.sql, tenantId, issue.id);
  }

  /** Records a pull request (created false when the URL was already recorded for the issue). */
  async addPullRequest(principal: Principal, issueId: string, input: PullRequestInput, actor: Origin): Promise<{ pr: PullRequest; created: boolean }> {
    if (!input.title.trim()) throw new ValidationError('title: must not be blank');
    if (!/^https?:\/\//i.test(input.url)) throw new ValidationError('url: must be an http or https URL');
    const tenantId = principal.tenantId;
    const issue = await issueForPrincipal(this.deps, principal, issueId);
    return this.deps.sql.begin(async (tx) => {
      const added = await addPullRequest(tx, tenantId, issue.id, input.title.trim(), input.url);
      if (added.created) {
        const link = await findLink(tx, tenantId, issue.id);
        await addActivity(tx, tenantId, issue.id, {
          type: 'pull_request_added', actor, ticketIdentifier: link?.ticket.identifier ?? '', metadata: { pull_request_id: added.pr.id, url: added.pr.url },
        });
      }
      return added;
    });
  }

  /**
   * Links a ticket from a confirmed preview. The preview row stays locked during the tracker call,
   * so a second PUT with the same token waits and then finds it used. On a tracker failure the
   * transaction commits only the failure's record (attempt count, the tenant tracker's last_error_*,
   * a ticket_create_failed activity) — no link row, token still usable — and the error is answered.
   */
  private async linkFromPreview(tenantId: string, issue: IssueRow, token: string, actor: Origin): Promise<{ status: number }> {
    const outcome = await this.deps.sql.begin<{ status: number } | { failure: TrackerError }>(async (tx) => {
      const preview = await lockPreview(tx, tenantId, issue.id, token);
      if (!preview) throw new ValidationError('preview_token: unknown for this issue; request a preview first');
      const existing = await findLink(tx, tenantId, issue.id);
      if (preview.used_at) {
        // A retried PUT whose first answer was lost: the link it made is the answer.
        if (existing?.ticket.id === preview.ticket_id) return { status: 200 };
        throw new ConflictError('preview_token has already been used');
      }
      if (existing) throw new ConflictError('The issue already has a linked ticket; unlink it first');
      if (preview.expires_at.getTime() <= Date.now()) throw new ValidationError('preview_token has expired; request a new preview');
      const settings = await readTrackerSettings(tx, tenantId);
      if (settings.provider !== preview.draft.provider || settings.team_id !== preview.draft.team_id) {
        throw new ConflictError('The ticket tracker settings changed since the preview; request a new preview');
      }
      const assigneeUserId = await issueAssignee(tx, issue.id);
      try {
        const tracker = trackerFor(this.deps, tx, tenantId, preview.draft.provider, settings);
        const ticket = await tracker.createTicket(preview.draft, preview.ticket_id, { maybeExists: preview.attempts > 0, assigneeUserId });
        await insertLink(tx, tenantId, issue.id, preview.draft.provider, ticket);
        await markPreviewUsed(tx, preview);
        await addActivity(tx, tenantId, issue.id, {
          type: 'ticket_created', actor, ticketIdentifier: ticket.identifier,
          metadata: { provider: preview.draft.provider, ticket_id: ticket.id, url: ticket.url },
        });
        await clearTrackerError(tx, tenantId);
        return { status: 201 };
      } catch (error) {
        if (!(error instanceof TrackerError)) throw error;
        await countPreviewAttempt(tx, preview);
        await recordTrackerError(tx, tenantId, error.trackerCode, error.detail);
        await addActivity(tx, tenantId, issue.id, {
          type: 'ticket_create_failed', actor,
          metadata: { provider: preview.draft.provider, error_code: error.trackerCode, error_message: error.detail },
        });
        return { failure: error };
      }
    });
    if ('failure' in outcome) throw outcome.failure;
    return outcome;
  }
}

function defaultDescription(issue: IssueRow): string {
  const lines = [issue.description ?? '', '', `Lookout issue ${issue.id}`];
  if (issue.occurrence_count > 0) {
    lines.push(`${issue.occurrence_count} occurrence(s), first seen ${issue.first_seen_at?.toISOString()}, last seen ${issue.last_seen_at?.toISOString()}`);
  }
  return lines.join('\n').trim();
}
