import crypto from 'node:crypto';
import { isUuid } from '../../platform/uuid.js';
import type { SqlHandle } from '../../platform/postgres/postgres.js';
import { recordIssueEvent } from './issue-event-outbox.js';
import { toIssue, type Issue, type IssueRow, type IssueStatus, type IssueTag } from './issue-types.js';
import type { Origin } from '../../spans/origin.js';

export const ISSUE_COLUMNS = 'id, seq, tenant_id, project_id, title, description, status, assignee_user_id, fingerprint, flagged, first_seen_at, last_seen_at, occurrence_count, occurrences_deleted_at, resolved_at, created_at, updated_at';

export async function findIssueRow(sql: SqlHandle, tenantId: string, issueId: string, options: { forUpdate?: boolean } = {}): Promise<IssueRow | null> {
  if (!isUuid(issueId)) return null;
  const [row] = await sql<IssueRow[]>`
    select ${sql.unsafe(ISSUE_COLUMNS)} from issues where tenant_id = ${tenantId} and id = ${issueId}
    ${options.forUpdate ? sql`for update` : sql``}`;
  return row ?? null;
}

/** Tags of each issue, in normalized name order. */
export async function tagsOfIssues(sql: SqlHandle, issueIds: string[]): Promise<Map<string, IssueTag[]>> {
  const byIssue = new Map<string, IssueTag[]>(issueIds.map((id) => [id, []]));
  if (issueIds.length === 0) return byIssue;
  const rows = await sql<{ issue_id: string; id: string; name: string; color: string }[]>`
    select l.issue_id, t.id, t.name, t.color from issue_tag_links l join issue_tags t on t.id = l.tag_id
    where l.issue_id = any(${issueIds}::uuid[]) order by t.normalized_name, t.id`;
  for (const r of rows) byIssue.get(r.issue_id)?.push({ id: r.id, name: r.name, color: r.color });
  return byIssue;
}

export async function issueWithTags(sql: SqlHandle, row: IssueRow): Promise<Issue> {
  return toIssue(row, (await tagsOfIssues(sql, [row.id])).get(row.id) ?? []);
}

export interface IssueListFilters {
  statuses: IssueStatus[] | null;
  tagId: string | null;
  /** A user id, or 'none' for unassigned issues. */
  assignee: string | null;
  flagged: boolean | null;
  /** Issues older than this list position (exclusive). */
  beforeSeq: bigint | null;
  limit: number;
}

/** Newest first by creation (the `seq` identity), so a cursor never skips or repeats an issue. */
export async function listIssues(sql: SqlHandle, tenantId: string, projectId: string, f: IssueListFilters): Promise<{ issues: Issue[]; nextSeq: bigint | null }> {
  const rows = await sql<IssueRow[]>`
    select ${sql.unsafe(ISSUE_COLUMNS)} from issues i
    where tenant_id = ${tenantId} and project_id = ${projectId}
      ${f.statuses ? sql`and status = any(${f.statuses}::text[])` : sql``}
      ${f.tagId ? sql`and exists (select 1 from issue_tag_links l where l.issue_id = i.id and l.tag_id = ${f.tagId})` : sql``}
      ${f.assignee === 'none' ? sql`and assignee_user_id is null` : f.assignee ? sql`and assignee_user_id = ${f.assignee}` : sql``}
      ${f.flagged === null ? sql`` : sql`and flagged = ${f.flagged}`}
      ${f.beforeSeq === null ? sql`` : sql`and seq < ${f.beforeSeq.toString()}::bigint`}
    order by seq desc
    limit ${f.limit + 1}`;
  const page = rows.slice(0, f.limit);
  const tags = await tagsOfIssues(sql, page.map((r) => r.id));
  return {
    issues: page.map((r) => toIssue(r, tags.get(r.id) ?? [])),
    nextSeq: rows.length > f.limit ? BigInt(page[page.length - 1].seq) : null,
  };
}

export interface NewIssue {
  tenantId: string;
  projectId: string;
  title: string;
  description: string | null;
  assigneeUserId: string | null;
  flagged: boolean;
}

/** Creates an issue by hand and records issue.created in the same transaction. */
export async function createIssue(tx: SqlHandle, input: NewIssue, actor: Origin): Promise<IssueRow> {
  const [row] = await tx<IssueRow[]>`
    insert into issues (id, tenant_id, project_id, title, description, assignee_user_id, flagged)
    values (${crypto.randomUUID()}, ${input.tenantId}, ${input.projectId}, ${input.title}, ${input.description},
            ${input.assigneeUserId}, ${input.flagged})
    returning ${tx.unsafe(ISSUE_COLUMNS)}`;
  await recordIssueEvent(tx, { tenantId: input.tenantId, projectId: input.projectId, issueId: row.id, name: 'issue.created', actor, occurredAt: row.created_at });
  if (input.flagged) {
    await recordIssueEvent(tx, { tenantId: input.tenantId, projectId: input.projectId, issueId: row.id, name: 'issue.flagged', actor, occurredAt: row.created_at });
  }
  return row;
}

export interface IssueEdit {
  title?: string;
  description?: string | null;
  assigneeUserId?: string | null;
}

/** Edits title, description and assignee. These have no lifecycle event among the eight. */
export async function editIssue(tx: SqlHandle, tenantId: string, issueId: string, edit: IssueEdit): Promise<IssueRow | null> {
  const [row] = await tx<IssueRow[]>`
    update issues set
      title = ${edit.title === undefined ? tx`title` : edit.title},
      description = ${edit.description === undefined ? tx`description` : edit.description},
      assignee_user_id = ${edit.assigneeUserId === undefined ? tx`assignee_user_id` : edit.assigneeUserId},
      updated_at = now()
    where tenant_id = ${tenantId} and id = ${issueId}
    returning ${tx.unsafe(ISSUE_COLUMNS)}`;
  return row ?? null;
}
