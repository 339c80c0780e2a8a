import crypto from 'node:crypto';
import type { SqlHandle } from '../../platform/postgres/postgres.js';
import type { Ticket, TicketDraft, TrackerProvider } from './tracker-types.js';
import type { PullRequest, SyncStatus, TicketActivity } from './ticket-schemas.js';

export type { PullRequest, TicketActivity };
import type { Origin } from '../../spans/origin.js';

export interface TicketLinkRow {
  id: string;
  issue_id: string;
  provider: TrackerProvider;
  origin: string;
  sync_status: SyncStatus;
  linked_at: Date;
  last_successful_sync_at: Date | null;
  last_error_code: string | null;
  last_error_message: string | null;
  last_error_at: Date | null;
  ticket: Ticket;
}

export interface PreviewRow {
  token_hash: string;
  issue_id: string;
  ticket_id: string;
  draft: TicketDraft;
  attempts: number;
  expires_at: Date;
  used_at: Date | null;
}

export const PREVIEW_TTL_MS = 15 * 60 * 1000;

export function hashPreviewToken(token: string): string {
  return crypto.createHash('sha256').update(token).digest('hex');
}

/** Activity names who acted: the key's user, else the key itself, else the system. */
export function activityActor(actor: Origin): { actor_type: string; actor_id: string } {
  if (actor.user_id) return { actor_type: 'user', actor_id: actor.user_id };
  if (actor.api_key_id) return { actor_type: 'api_key', actor_id: actor.api_key_id };
  return { actor_type: 'system', actor_id: '' };
}

export async function addActivity(
  sql: SqlHandle,
  tenantId: string,
  issueId: string,
  a: { type: string; actor: Origin; ticketIdentifier?: string; metadata?: Record<string, unknown> },
): Promise<void> {
  const who = activityActor(a.actor);
  await sql`
    insert into issue_ticket_activity (id, tenant_id, issue_id, type, actor_type, actor_id, ticket_identifier, metadata)
    values (${crypto.randomUUID()}, ${tenantId}, ${issueId}, ${a.type}, ${who.actor_type}, ${who.actor_id},
            ${a.ticketIdentifier ?? ''}, ${sql.json((a.metadata ?? {}) as never)})`;
}

/** A new single-use preview; any earlier unused preview of the issue stops working, so one issue can never get two tickets. */
export async function createPreview(sql: SqlHandle & { begin?: unknown }, tenantId: string, issueId: string, draft: TicketDraft): Promise<{ token: string; expiresAt: Date }> {
  const token = `tkp_${crypto.randomBytes(24).toString('base64url')}`;
  const expiresAt = new Date(Date.now() + PREVIEW_TTL_MS);
  await sql`delete from ticket_previews where tenant_id = ${tenantId} and issue_id = ${issueId} and used_at is null`;
  await sql`
    insert into ticket_previews (token_hash, tenant_id, issue_id, ticket_id, draft, expires_at)
    values (${hashPreviewToken(token)}, ${tenantId}, ${issueId}, ${crypto.randomUUID()}, ${sql.json(draft)}, ${expiresAt})`;
  return { token, expiresAt };
}

export async function lockPreview(sql: SqlHandle, tenantId: string, issueId: string, token: string): Promise<PreviewRow | null> {
  const [row] = await sql<PreviewRow[]>`
    select token_hash, issue_id, ticket_id, draft, attempts, expires_at, used_at from ticket_previews
    where token_hash = ${hashPreviewToken(token)} and tenant_id = ${tenantId} and issue_id = ${issueId}
    for update`;
  return row ?? null;
}

export async function markPreviewUsed(sql: SqlHandle, preview: PreviewRow): Promise<void> {
  await sql`update ticket_previews set used_at = now() where token_hash = ${preview.token_hash}`;
}

/** A failed tracker call with this preview: the next attempt must allow that the ticket may exist. */
export async function countPreviewAttempt(sql: SqlHandle, preview: PreviewRow): Promise<void> {
  await sql`update ticket_previews set attempts = attempts + 1 where token_hash = ${preview.token_hash}`;
}

/** Whether a ticket was previewed for an issue of the project (a local ticket's project). */
export async function ticketPreviewedInProject(sql: SqlHandle, tenantId: string, ticketId: string, projectId: string): Promise<boolean> {
  const rows = await sql`
    select 1 from ticket_previews p join issues i on i.id = p.issue_id
    where p.tenant_id = ${tenantId} and p.ticket_id = ${ticketId} and i.project_id = ${projectId}
    limit 1`;
  return rows.length > 0;
}

/** The issue's current assignee, read inside the linking transaction so the ticket gets the latest one. */
export async function issueAssignee(sql: SqlHandle, issueId: string): Promise<string | null> {
  const current = (await sql<{ assignee_user_id: string | null }[]>`select assignee_user_id from issues where id = ${issueId}`)[0];
  return current?.assignee_user_id ?? null;
}

export async function findLink(sql: SqlHandle, tenantId: string, issueId: string, options: { forUpdate?: boolean } = {}): Promise<TicketLinkRow | null> {
  const [row] = await sql<TicketLinkRow[]>`
    select id, issue_id, provider, origin, sync_status, linked_at, last_successful_sync_at, last_error_code, last_error_message, last_error_at, ticket
    from issue_ticket_links where tenant_id = ${tenantId} and issue_id = ${issueId}
    ${options.forUpdate ? sql`for update` : sql``}`;
  return row ?? null;
}

export async function insertLink(sql: SqlHandle, tenantId: string, issueId: string, provider: TrackerProvider, ticket: Ticket): Promise<void> {
  await sql`
    insert into issue_ticket_links (id, tenant_id, issue_id, provider, origin, sync_status, last_successful_sync_at, ticket)
    values (${crypto.randomUUID()}, ${tenantId}, ${issueId}, ${provider}, 'created', 'healthy', now(), ${sql.json(ticket)})`;
}

/** Removes the issue's link and answers what it linked (null when there was none). */
export async function deleteLink(sql: SqlHandle, tenantId: string, issueId: string): Promise<{ provider: string; ticket: { id: string; identifier: string } } | null> {
  const [removed] = await sql<{ provider: string; ticket: { id: string; identifier: string } }[]>`
    delete from issue_ticket_links where tenant_id = ${tenantId} and issue_id = ${issueId} returning provider, ticket`;
  return removed ?? null;
}

export async function markLinkSynced(sql: SqlHandle, linkId: string, ticket: Ticket): Promise<void> {
  await sql`update issue_ticket_links set ticket = ${sql.json(ticket)}, sync_status = 'healthy', last_successful_sync_at = now()
    where id = ${linkId}`;
}

export async function markLinkSyncFailed(sql: SqlHandle, linkId: string, code: string, message: string): Promise<void> {
  await sql`update issue_ticket_links set sync_status = 'error', last_error_code = ${code},
    last_error_message = ${message}, last_error_at = now() where id = ${linkId}`;
}

export async function listActivity(sql: SqlHandle, tenantId: string, issueId: string): Promise<TicketActivity[]> {
  const rows = await sql<(Omit<TicketActivity, 'occurred_at'> & { occurred_at: Date })[]>`
    select id, type, actor_type, actor_id, ticket_identifier, metadata, occurred_at from issue_ticket_activity
    where tenant_id = ${tenantId} and issue_id = ${issueId} order by seq`;
  return rows.map((r) => ({ ...r, occurred_at: r.occurred_at.toISOString() }));
}

export async function listPullRequests(sql: SqlHandle, tenantId: string, issueId: string): Promise<PullRequest[]> {
  return sql<PullRequest[]>`
    select id, title, url from issue_pull_requests where tenant_id = ${tenantId} and issue_id = ${issueId} order by created_at, id`;
}

/** Adds a pull request; the same URL twice on one issue is one pull request (created false the second time). */
export async function addPullRequest(sql: SqlHandle, tenantId: string, issueId: string, title: string, url: string): Promise<{ pr: PullRequest; created: boolean }> {
  const [inserted] = await sql<PullRequest[]>`
    insert into issue_pull_requests (id, tenant_id, issue_id, title, url) values (${crypto.randomUUID()}, ${tenantId}, ${issueId}, ${title}, ${url})
    on conflict (issue_id, url) do nothing returning id, title, url`;
  if (inserted) return { pr: inserted, created: true };
  const [existing] = await sql<PullRequest[]>`select id, title, url from issue_pull_requests where issue_id = ${issueId} and url = ${url}`;
  return { pr: existing, created: false };
}
