import { ValidationError } from '../../platform/http/errors.js';
import type { SqlHandle } from '../../platform/postgres/postgres.js';
import type { IssueOccurrence, IssueOccurrenceList } from './issue-schemas.js';

export type { IssueOccurrence };

function decode(cursor: string): bigint {
  const match = /^occ:(\d{1,19})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!match) throw new ValidationError('cursor: not a cursor returned by this list');
  return BigInt(match[1]);
}

/** Occurrences newest first by attachment order, with an opaque cursor. */
export async function listOccurrences(sql: SqlHandle, tenantId: string, issueId: string, limit: number, cursor: string | null): Promise<IssueOccurrenceList> {
  const before = cursor ? decode(cursor) : null;
  const rows = await sql<(Omit<IssueOccurrence, 'occurred_at'> & { id: string; occurred_at: Date })[]>`
    select id::text as id, trace_id, otel_trace_id, span_id, occurred_at, error_type, span_name, tool_name, message
    from issue_occurrences where tenant_id = ${tenantId} and issue_id = ${issueId}
      ${before === null ? sql`` : sql`and id < ${before.toString()}::bigint`}
    order by id desc limit ${limit + 1}`;
  const page = rows.slice(0, limit);
  return {
    occurrences: page.map(({ id: _id, occurred_at, ...rest }) => ({ ...rest, occurred_at: occurred_at.toISOString() })),
    next_cursor: rows.length > limit ? Buffer.from(`occ:${page[page.length - 1].id}`).toString('base64url') : null,
  };
}
