import type { SqlHandle } from '../../platform/postgres/postgres.js';
import { findIssueRow } from '../issues/issue-store.js';
import { findLink, listActivity, listPullRequests, type PullRequest, type TicketActivity, type TicketLinkRow } from './ticket-link-store.js';
import type { Ticket } from './tracker-types.js';

/** An issue's ticket link. `link` is null while no ticket is linked (pull requests and activity still show). */
export interface TicketLinkObject {
  project_id: string;
  issue_id: string;
  issue_assignee_user_id: string | null;
  link: {
    id: string;
    origin: string;
    linked_at: string;
    last_successful_sync_at: string | null;
    last_error_at: string | null;
    sync_status: string;
    last_error_code: string | null;
    last_error_message: string | null;
    ticket: Ticket;
  } | null;
  activity: TicketActivity[];
  pull_requests: PullRequest[];
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export function linkView(row: TicketLinkRow): NonNullable<TicketLinkObject['link']> {
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

export function ticketLinkSchemas(openapi: { addSchema(name: string, schema: Record<string, unknown>): Record<string, unknown> }) {
  const str = { type: 'string' };
  const nstr = { type: ['string', 'null'] };
  const Ticket = openapi.addSchema('Ticket', {
    type: 'object',
    required: ['id', 'identifier', 'url', 'title', 'team_id', 'team_name', 'team_key', 'tracker_project_id', 'tracker_project_name', 'state_id', 'state_name', 'state_type', 'tracker_assignee'],
    properties: {
      id: str, identifier: str, url: str, title: str, team_id: str, team_name: str, team_key: str,
      tracker_project_id: str, tracker_project_name: str, state_id: str, state_name: str, state_type: str,
      tracker_assignee: { oneOf: [{ type: 'null' }, { type: 'object', required: ['id', 'name', 'avatar_url'], properties: { id: str, name: str, avatar_url: str } }] },
    },
  });
  const PullRequest = openapi.addSchema('PullRequest', { type: 'object', required: ['id', 'title', 'url'], properties: { id: str, title: str, url: str } });
  const TicketLink = openapi.addSchema('TicketLink', {
    type: 'object',
    required: ['project_id', 'issue_id', 'issue_assignee_user_id', 'link', 'activity', 'pull_requests'],
    properties: {
      project_id: str, issue_id: str, issue_assignee_user_id: nstr,
      link: {
        oneOf: [{ type: 'null' }, {
          type: 'object',
          required: ['id', 'origin', 'linked_at', 'last_successful_sync_at', 'last_error_at', 'sync_status', 'last_error_code', 'last_error_message', 'ticket'],
          properties: {
            id: str, origin: str, linked_at: str, last_successful_sync_at: nstr, last_error_at: nstr,
            sync_status: { enum: ['healthy', 'error'] }, last_error_code: nstr, last_error_message: nstr, ticket: Ticket,
          },
        }],
      },
      activity: {
        type: 'array',
        items: {
          type: 'object', required: ['id', 'type', 'actor_type', 'actor_id', 'ticket_identifier', 'metadata', 'occurred_at'],
          properties: { id: str, type: str, actor_type: str, actor_id: str, ticket_identifier: str, metadata: { type: 'object' }, occurred_at: str },
        },
      },
      pull_requests: { type: 'array', items: PullRequest },
    },
  });
  const Preview = openapi.addSchema('TicketPreview', {
    type: 'object', required: ['preview_token', 'ticket', 'expires_at'],
    properties: {
      preview_token: str,
      ticket: {
        type: 'object', required: ['provider', 'title', 'description', 'team_id', 'team_key', 'team_name'],
        properties: { provider: str, title: str, description: str, team_id: str, team_key: str, team_name: str },
      },
      expires_at: str,
    },
  });
  return { Ticket, PullRequest, TicketLink, Preview };
}
