import crypto from 'node:crypto';
import { ConflictError } from '../../platform/http/errors.js';
import type { SqlHandle } from '../../platform/postgres/postgres.js';
import { isUuid } from '../../platform/uuid.js';
import type { IssueTag } from './issue-types.js';

/** Tag name order (and uniqueness) use the trimmed, lower-cased name. */
export function normalizeTagName(name: string): string {
  return name.trim().toLowerCase();
}

export async function createTag(sql: SqlHandle, tenantId: string, projectId: string, name: string, color: string): Promise<IssueTag> {
  const rows = await sql<IssueTag[]>`
    insert into issue_tags (id, tenant_id, project_id, name, normalized_name, color)
    values (${crypto.randomUUID()}, ${tenantId}, ${projectId}, ${name.trim()}, ${normalizeTagName(name)}, ${color})
    on conflict (project_id, normalized_name) do nothing
    returning id, name, color`;
  if (rows.length === 0) throw new ConflictError(`A tag named '${name.trim()}' already exists in this project`);
  return rows[0];
}

export async function listTags(sql: SqlHandle, tenantId: string, projectId: string): Promise<IssueTag[]> {
  return sql<IssueTag[]>`
    select id, name, color from issue_tags where tenant_id = ${tenantId} and project_id = ${projectId}
    order by normalized_name, id`;
}

export async function findTag(sql: SqlHandle, tenantId: string, projectId: string, tagId: string): Promise<IssueTag | null> {
  if (!isUuid(tagId)) return null;
  const [row] = await sql<IssueTag[]>`
    select id, name, color from issue_tags where tenant_id = ${tenantId} and project_id = ${projectId} and id = ${tagId}`;
  return row ?? null;
}

/** Attaching twice leaves one link. */
export async function attachTag(sql: SqlHandle, tenantId: string, issueId: string, tagId: string): Promise<void> {
  await sql`insert into issue_tag_links (issue_id, tag_id, tenant_id) values (${issueId}, ${tagId}, ${tenantId})
    on conflict (issue_id, tag_id) do nothing`;
}

/** Detaching a tag that is not attached is not an error. */
export async function detachTag(sql: SqlHandle, tenantId: string, issueId: string, tagId: string): Promise<void> {
  await sql`delete from issue_tag_links where tenant_id = ${tenantId} and issue_id = ${issueId} and tag_id = ${tagId}`;
}
