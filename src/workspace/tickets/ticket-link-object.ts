import type { SqlHandle } from '../../platform/postgres/postgres.js';
import { findIssueRow } from '../issues/issue-store.js';
import { findLink, listActivity, listPullRequests, type TicketLinkRow } from './ticket-link-store.js';
import type { OpenApiDocument } from '../../platform/http/openapi.js';
import { PullRequest, Ticket, TicketLink, TicketPreview, type TicketLinkDetail } from './ticket-schemas.js';

export type TicketLinkObject = TicketLink;

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export function linkView(row: TicketLinkRow): TicketLinkDetail {
  return {
    id: row.id,
    origin: row.origin,
    linked_at: row.linked_at.toISOString(),
    last_successful_sync_at: iso(row.last_successful_sync_at),
    last_error_at: iso(row.last_error_at),
    sync_status: row.sync_status,
    last_error_code: row.last_error_code,
    last_error_message: row.last_error_message,
    ticket: row.ticket,
  };
}

export async function ticketLinkObject(sql: SqlHandle, tenantId: string, issueId: string): Promise<TicketLinkObject> {
  const [issue, link, activity, pullRequests] = await Promise.all([
    findIssueRow(sql, tenantId, issueId),
    findLink(sql, tenantId, issueId),
    listActivity(sql, tenantId, issueId),
    listPullRequests(sql, tenantId, issueId),
  ]);
  return {
    project_id: issue!.project_id,
    issue_id: issueId,
    issue_assignee_user_id: issue!.assignee_user_id,
    link: link ? linkView(link) : null,
    activity,
    pull_requests: pullRequests,
  };
}

/** Registers the ticket link components once per OpenAPI document and returns their $refs. */
export function ticketLinkSchemas(openapi: OpenApiDocument) {
  const TicketRef = openapi.addSchema('Ticket', Ticket);
  const PullRequestRef = openapi.addSchema('PullRequest', PullRequest);
  const TicketLinkRef = openapi.addSchema('TicketLink', TicketLink);
  const Preview = openapi.addSchema('TicketPreview', TicketPreview);
  return { Ticket: TicketRef, PullRequest: PullRequestRef, TicketLink: TicketLinkRef, Preview };
}
