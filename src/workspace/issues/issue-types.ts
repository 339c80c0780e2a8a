/** The four issue states; resolved and dismissed are terminal. */
export const ISSUE_STATUSES = ['open', 'in_progress', 'resolved', 'dismissed'] as const;
export type IssueStatus = (typeof ISSUE_STATUSES)[number];

export function isTerminal(status: IssueStatus): boolean {
  return status === 'resolved' || status === 'dismissed';
}

export interface IssueTag {
  id: string;
  name: string;
  color: string;
}

/** The issue record returned by the issue routes (docs/issues.md lists the fields). */
export interface Issue {
  id: string;
  project_id: string;
  title: string;
  description: string | null;
  status: IssueStatus;
  assignee_user_id: string | null;
  fingerprint: string | null;
  flagged: boolean;
  first_seen_at: string | null;
  last_seen_at: string | null;
  occurrence_count: number;
  /** When a deletion removed the last of its occurrences (their traces are gone); null otherwise. */
  occurrences_deleted_at: string | null;
  created_at: string;
  updated_at: string;
  tags: IssueTag[];
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
