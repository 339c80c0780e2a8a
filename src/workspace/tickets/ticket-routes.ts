import type { Router } from 'express';
import type { AppDeps } from '../../app-deps.js';
import { defineRoute } from '../../http/route.js';
import { ConflictError, NotFoundError, ValidationError } from '../../http/errors.js';
import { issueForPrincipal } from '../issues/issue-access.js';
import type { IssueRow } from '../issues/issue-types.js';
import { ticketLinkObject, ticketLinkSchemas } from './ticket-link-object.js';
import { addActivity, addPullRequest, createPreview, findLink, insertLink, lockPreview } from './ticket-link-store.js';
import { trackerFor } from './tracker-access.js';
import { clearTrackerError, readTrackerSettings, recordTrackerError } from './tracker-settings-store.js';
import { TrackerError, type TicketDraft } from './tracker-types.js';
import type { Origin } from '../../origin.js';

function defaultDescription(issue: IssueRow): string {
  const lines = [issue.description ?? '', '', `Lookout issue ${issue.id}`];
  if (issue.occurrence_count > 0) {
    lines.push(`${issue.occurrence_count} occurrence(s), first seen ${issue.first_seen_at?.toISOString()}, last seen ${issue.last_seen_at?.toISOString()}`);
  }
  return lines.join('\n').trim();
}

/**
 * Links a ticket from a confirmed preview. The preview row stays locked during the tracker call,
 * so a second PUT with the same token waits and then finds it used. On a tracker failure the
 * transaction commits only the failure's record (attempt count, the tenant tracker's last_error_*,
 * a ticket_create_failed activity) — no link row, token still usable — and the error is answered.
 */
async function linkFromPreview(deps: AppDeps, tenantId: string, issue: IssueRow, token: string, actor: Origin): Promise<{ status: number }> {
  const outcome = await deps.sql.begin(async (tx) => {
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
    const current = (await tx<{ assignee_user_id: string | null }[]>`select assignee_user_id from issues where id = ${issue.id}`)[0];
    try {
      const tracker = trackerFor(deps, tx, tenantId, preview.draft.provider, settings);
      const ticket = await tracker.createTicket(preview.draft, preview.ticket_id, { maybeExists: preview.attempts > 0, assigneeUserId: current?.assignee_user_id ?? null });
      await insertLink(tx, tenantId, issue.id, preview.draft.provider, ticket);
      await tx`update ticket_previews set used_at = now() where token_hash = ${preview.token_hash}`;
      await addActivity(tx, tenantId, issue.id, {
        type: 'ticket_created', actor, ticketIdentifier: ticket.identifier,
        metadata: { provider: preview.draft.provider, ticket_id: ticket.id, url: ticket.url },
      });
      await clearTrackerError(tx, tenantId);
      return { status: 201 };
    } catch (error) {
      if (!(error instanceof TrackerError)) throw error;
      await tx`update ticket_previews set attempts = attempts + 1 where token_hash = ${preview.token_hash}`;
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

export function ticketRoutes(router: Router, deps: AppDeps): void {
  const s = ticketLinkSchemas(deps.openapi);

  defineRoute<{ title?: string; description?: string }>(router, deps, {
    method: 'post', path: '/issues/{issue_id}/tracker-ticket/preview', tag: 'ticket-tracker', scope: 'admin',
    summary: 'Draft the ticket the tenant\'s tracker would get; returns a single-use preview_token that expires in 15 minutes (a newer preview replaces it)',
    body: {
      type: 'object', additionalProperties: false,
      properties: { title: { type: 'string', minLength: 1, maxLength: 500 }, description: { type: 'string', maxLength: 20000 } },
    },
    responses: { 200: { description: 'Preview', schema: s.Preview } },
    handler: async ({ principal, tenantId, params, body }) => {
      const issue = await issueForPrincipal(deps, principal, params.issue_id);
      if (body.title !== undefined && !body.title.trim()) throw new ValidationError('title: must not be blank');
      const settings = await readTrackerSettings(deps.sql, tenantId);
      const draft: TicketDraft = {
        provider: settings.provider,
        title: body.title?.trim() ?? issue.title,
        description: body.description ?? defaultDescription(issue),
        team_id: settings.team_id,
        team_key: settings.team_key,
        team_name: settings.team_name,
      };
      const preview = await deps.sql.begin(async (tx) => {
        if (await findLink(tx, tenantId, issue.id)) throw new ConflictError('The issue already has a linked ticket; unlink it first');
        return createPreview(tx, tenantId, issue.id, draft);
      });
      return { preview_token: preview.token, ticket: draft, expires_at: preview.expiresAt.toISOString() };
    },
  });

  defineRoute<{ preview_token: string }>(router, deps, {
    method: 'put', path: '/issues/{issue_id}/tracker-ticket', tag: 'ticket-tracker', scope: 'admin',
    summary: 'Create the previewed ticket in the tracker and link it (201; 200 when this token already made the link). A tracker failure answers 502 tracker_error and links nothing',
    body: { type: 'object', additionalProperties: false, required: ['preview_token'], properties: { preview_token: { type: 'string', minLength: 1, maxLength: 200 } } },
    responses: { 201: { description: 'Linked', schema: s.TicketLink }, 200: { description: 'Already linked by this token', schema: s.TicketLink } },
    handler: async ({ principal, tenantId, params, body, actor }) => {
      const issue = await issueForPrincipal(deps, principal, params.issue_id);
      const { status } = await linkFromPreview(deps, tenantId, issue, body.preview_token, actor);
      return { status, body: await ticketLinkObject(deps.sql, tenantId, issue.id) };
    },
  });

  defineRoute(router, deps, {
    method: 'get', path: '/issues/{issue_id}/tracker-ticket', tag: 'ticket-tracker', scope: 'read',
    summary: 'The ticket link of an issue (link null when none), its activity and pull requests',
    responses: { 200: { description: 'Ticket link', schema: s.TicketLink } },
    handler: async ({ principal, tenantId, params }) => {
      const issue = await issueForPrincipal(deps, principal, params.issue_id);
      return ticketLinkObject(deps.sql, tenantId, issue.id);
    },
  });

  defineRoute(router, deps, {
    method: 'delete', path: '/issues/{issue_id}/tracker-ticket', tag: 'ticket-tracker', scope: 'admin',
    summary: 'Unlink the ticket (the ticket itself stays in the tracker); idempotent',
    responses: { 200: { description: 'Ticket link after unlinking', schema: s.TicketLink } },
    handler: async ({ principal, tenantId, params, actor }) => {
      const issue = await issueForPrincipal(deps, principal, params.issue_id);
      await deps.sql.begin(async (tx) => {
        const [removed] = await tx<{ provider: string; ticket: { id: string; identifier: string } }[]>`
          delete from issue_ticket_links where tenant_id = ${tenantId} and issue_id = ${issue.id} returning provider, ticket`;
        if (removed) {
          await addActivity(tx, tenantId, issue.id, {
            type: 'ticket_unlinked', actor, ticketIdentifier: removed.ticket.identifier, metadata: { provider: removed.provider, ticket_id: removed.ticket.id },
          });
        }
      });
      return ticketLinkObject(deps.sql, tenantId, issue.id);
    },
  });

  defineRoute(router, deps, {
    method: 'post', path: '/issues/{issue_id}/tracker-ticket/sync', tag: 'ticket-tracker', scope: 'admin',
    summary: 'Re-read the linked ticket from the tracker; a failure sets sync_status error with last_error_* and answers 502 tracker_error',
    responses: { 200: { description: 'Ticket link', schema: s.TicketLink } },
    handler: async ({ principal, tenantId, params, actor }) => {
      const issue = await issueForPrincipal(deps, principal, params.issue_id);
      const link = await findLink(deps.sql, tenantId, issue.id);
      if (!link) throw new NotFoundError('The issue has no linked ticket');
      const settings = await readTrackerSettings(deps.sql, tenantId);
      try {
        const ticket = await trackerFor(deps, deps.sql, tenantId, link.provider, settings).fetchTicket(link.ticket.id);
        await deps.sql.begin(async (tx) => {
          await tx`update issue_ticket_links set ticket = ${tx.json(ticket as never)}, sync_status = 'healthy', last_successful_sync_at = now()
            where id = ${link.id}`;
          if (ticket.state_id !== link.ticket.state_id) {
            await addActivity(tx, tenantId, issue.id, {
              type: 'ticket_state_changed', actor, ticketIdentifier: ticket.identifier,
              metadata: { from: link.ticket.state_name, to: ticket.state_name, state_type: ticket.state_type },
            });
          }
        });
      } catch (error) {
        if (!(error instanceof TrackerError)) throw error;
        await deps.sql.begin(async (tx) => {
          await tx`update issue_ticket_links set sync_status = 'error', last_error_code = ${error.trackerCode},
            last_error_message = ${error.detail}, last_error_at = now() where id = ${link.id}`;
          await addActivity(tx, tenantId, issue.id, {
            type: 'ticket_sync_failed', actor, ticketIdentifier: link.ticket.identifier, metadata: { error_code: error.trackerCode, error_message: error.detail },
          });
        });
        throw error;
      }
      return ticketLinkObject(deps.sql, tenantId, issue.id);
    },
  });

  defineRoute<{ title: string; url: string }>(router, deps, {
    method: 'post', path: '/issues/{issue_id}/pull-requests', tag: 'ticket-tracker', scope: 'admin',
    summary: 'Record a pull request that addresses the issue (201; the same URL again answers 200 with the existing one)',
    body: {
      type: 'object', additionalProperties: false, required: ['title', 'url'],
      properties: { title: { type: 'string', minLength: 1, maxLength: 500 }, url: { type: 'string', format: 'uri', maxLength: 2000 } },
    },
    responses: { 201: { description: 'Added', schema: s.PullRequest }, 200: { description: 'Already recorded', schema: s.PullRequest } },
    handler: async ({ principal, tenantId, params, body, actor }) => {
      if (!body.title.trim()) throw new ValidationError('title: must not be blank');
      if (!/^https?:\/\//i.test(body.url)) throw new ValidationError('url: must be an http or https URL');
      const issue = await issueForPrincipal(deps, principal, params.issue_id);
      const result = await deps.sql.begin(async (tx) => {
        const added = await addPullRequest(tx, tenantId, issue.id, body.title.trim(), body.url);
        if (added.created) {
          const link = await findLink(tx, tenantId, issue.id);
          await addActivity(tx, tenantId, issue.id, {
            type: 'pull_request_added', actor, ticketIdentifier: link?.ticket.identifier ?? '', metadata: { pull_request_id: added.pr.id, url: added.pr.url },
          });
        }
        return added;
      });
      return { status: result.created ? 201 : 200, body: result.pr };
    },
  });
}
