import { ISSUE_STATUSES, type Issue, type IssueStatus, type IssueTag } from './issue-schemas.js';

export { ISSUE_STATUSES, type Issue, type IssueStatus, type IssueTag };

export function isTerminal(status: IssueStatus): boolean {
  return status === 'resolved' || status === 'dismissed';
}

export interface IssueRow {
  id: string;
  seq: bigint;
  tenant_id: string;
  project_id: string;
  title: string;
  description: string | null;
  status: IssueStatus;
  assignee_user_id: string | null;
  fingerprint: string | null;
  flagged: boolean;
  first_seen_at: Date | null;
  last_seen_at: Date | null;
  occurrence_count: number;
  occurrences_deleted_at: Date | null;
  resolved_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

const iso = (d: Date | null): string | null => (d ? d.toISOString() : null);

export function toIssue(row: IssueRow, tags: IssueTag[]): Issue {
  return {
    id: row.id,
    project_id: row.project_id,
    title: row.title,
    description: row.description,
    status: row.status,
    assignee_user_id: row.assignee_user_id,
    fingerprint: row.fingerprint,
    flagged: row.flagged,
    first_seen_at: iso(row.first_seen_at),
    last_seen_at: iso(row.last_seen_at),
    occurrence_count: row.occurrence_count,
    occurrences_deleted_at: iso(row.occurrences_deleted_at),
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    tags,
  };
}
