import type { Router } from 'express';
import type { AppDeps } from '../../app/app-deps.js';
import { defineRoute } from '../../app/route.js';
import { ticketLinkSchemas } from './ticket-link-object.js';
import { TicketService } from './ticket-service.js';
import { PullRequestInput, TicketLinkInput, TicketPreviewInput } from './ticket-schemas.js';

export function ticketRoutes(router: Router, deps: AppDeps): void {
  const s = ticketLinkSchemas(deps.openapi);
  const tickets = new TicketService(deps);

  defineRoute<TicketPreviewInput>(router, deps, {
    method: 'post', path: '/issues/{issue_id}/tracker-ticket/preview', tag: 'ticket-tracker', scope: 'admin',
    summary: 'Draft the ticket the tenant\'s tracker would get; returns a single-use preview_token that expires in 15 minutes (a newer preview replaces it)',
    body: TicketPreviewInput,
    responses: { 200: { description: 'Preview', schema: s.Preview } },
    handler: ({ principal, params, body }) => tickets.preview(principal, params.issue_id, body),
  });

  defineRoute<TicketLinkInput>(router, deps, {
    method: 'put', path: '/issues/{issue_id}/tracker-ticket', tag: 'ticket-tracker', scope: 'admin',
    summary: 'Create the previewed ticket in the tracker and link it (201; 200 when this token already made the link). A tracker failure answers 502 tracker_error and links nothing',
    body: TicketLinkInput,
    responses: { 201: { description: 'Linked', schema: s.TicketLink }, 200: { description: 'Already linked by this token', schema: s.TicketLink } },
    handler: async ({ principal, params, body, actor }) => {
      const { status, link } = await tickets.link(principal, params.issue_id, body.preview_token, actor);
      return { status, body: link };
    },
  });

  defineRoute(router, deps, {
    method: 'get', path: '/issues/{issue_id}/tracker-ticket', tag: 'ticket-tracker', scope: 'read',
    summary: 'The ticket link of an issue (link null when none), its activity and pull requests',
    responses: { 200: { description: 'Ticket link', schema: s.TicketLink } },
    handler: ({ principal, params }) => tickets.get(principal, params.issue_id),
  });

  defineRoute(router, deps, {
    method: 'delete', path: '/issues/{issue_id}/tracker-ticket', tag: 'ticket-tracker', scope: 'admin',
    summary: 'Unlink the ticket (the ticket itself stays in the tracker); idempotent',
    responses: { 200: { description: 'Ticket link after unlinking', schema: s.TicketLink } },
    handler: ({ principal, params, actor }) => tickets.unlink(principal, params.issue_id, actor),
  });

  defineRoute(router, deps, {
    method: 'post', path: '/issues/{issue_id}/tracker-ticket/sync', tag: 'ticket-tracker', scope: 'admin',
    summary: 'Re-read the linked ticket from the tracker; a failure sets sync_status error with last_error_* and answers 502 tracker_error',
    responses: { 200: { description: 'Ticket link', schema: s.TicketLink } },
    handler: ({ principal, params, actor }) => tickets.sync(principal, params.issue_id, actor),
  });

  defineRoute<PullRequestInput>(router, deps, {
    method: 'post', path: '/issues/{issue_id}/pull-requests', tag: 'ticket-tracker', scope: 'admin',
    summary: 'Record a pull request that addresses the issue (201; the same URL again answers 200 with the existing one)',
    body: PullRequestInput,
    responses: { 201: { description: 'Added', schema: s.PullRequest }, 200: { description: 'Already recorded', schema: s.PullRequest } },
    handler: async ({ principal, params, body, actor }) => {
      const result = await tickets.addPullRequest(principal, params.issue_id, body, actor);
      return { status: result.created ? 201 : 200, body: result.pr };
    },
  });
}
