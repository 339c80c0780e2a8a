import crypto from 'node:crypto';
import type { SqlHandle } from '../../stores/postgres.js';
import { recordIssueEvent } from './issue-event-outbox.js';
import { ISSUE_COLUMNS } from './issue-store.js';
import type { IssueRow } from './issue-types.js';
import { SYSTEM_ORIGIN } from '../../origin.js';

/** One occurrence to attach: a failed span (extraction) or a matching call (a monitor). */
export interface FingerprintOccurrence {
  spanId: string;
  occurredAt: Date;
  errorType: string;
  spanName: string;
  toolName: string;
  message: string;
}

export interface FingerprintIssueInput {
  tenantId: string;
  projectId: string;
  fingerprint: string;
  title: string;
  description: string | null;
  traceId: string;
  otelTraceId: string;
  occurrences: FingerprintOccurrence[];
}

/** The project's issue for a fingerprint, created (recording issue.created) when there is none yet, locked for this transaction. */
async function issueForFingerprint(tx: SqlHandle, input: FingerprintIssueInput): Promise<{ issue: IssueRow; created: boolean }> {
  const [created] = await tx<IssueRow[]>`
    insert into issues (id, tenant_id, project_id, title, description, fingerprint)
    values (${crypto.randomUUID()}, ${input.tenantId}, ${input.projectId}, ${input.title.slice(0, 300)},
            ${input.description ? input.description.slice(0, 5000) : null}, ${input.fingerprint})
    on conflict (project_id, fingerprint) where fingerprint is not null do nothing
    returning ${tx.unsafe(ISSUE_COLUMNS)}`;
  if (created) {
    await recordIssueEvent(tx, { tenantId: input.tenantId, projectId: input.projectId, issueId: created.id, name: 'issue.created', actor: SYSTEM_ORIGIN, occurredAt: created.created_at });
    return { issue: created, created: true };
  }
  const [existing] = await tx<IssueRow[]>`
    select ${tx.unsafe(ISSUE_COLUMNS)} from issues
    where tenant_id = ${input.tenantId} and project_id = ${input.projectId} and fingerprint = ${input.fingerprint}
    for update`;
  return { issue: existing, created: false };
}

/**
 * Opens the project's issue for a fingerprint or attaches to it, in the caller's transaction — the
 * one way issues are opened by the system (trace extraction and monitors). Occurrences are keyed by
 * (issue, trace, span), so re-processing a trace counts nothing twice.
 *
 * Recurrence (docs/issues.md): a resolved issue whose failure happens again after it was resolved
 * is reopened (status open, issue.reopened by the system, assignee kept). A dismissed issue stays
 * dismissed but still counts the occurrence. Occurrences older than the resolution never reopen.
 */
export async function openOrAttachIssue(tx: SqlHandle, input: FingerprintIssueInput): Promise<{ issueId: string; created: boolean; attached: number }> {
  const { issue, created } = await issueForFingerprint(tx, input);
  if (input.occurrences.length === 0) return { issueId: issue.id, created, attached: 0 };
  const rows = input.occurrences.map((o) => ({
    tenant_id: input.tenantId,
    project_id: input.projectId,
    issue_id: issue.id,
    trace_id: input.traceId,
    otel_trace_id: input.otelTraceId,
    span_id: o.spanId,
    occurred_at: o.occurredAt,
    error_type: o.errorType,
    span_name: o.spanName,
    tool_name: o.toolName,
    message: o.message.slice(0, 5000),
  }));
  const inserted = await tx<{ occurred_at: Date }[]>`
    insert into issue_occurrences ${tx(rows)}
    on conflict (issue_id, trace_id, span_id) do nothing
    returning occurred_at`;
  if (inserted.length === 0) return { issueId: issue.id, created, attached: 0 };
  const earliest = new Date(Math.min(...inserted.map((r) => r.occurred_at.getTime())));
  const latest = new Date(Math.max(...inserted.map((r) => r.occurred_at.getTime())));
  const recurs = issue.status === 'resolved' && (!issue.resolved_at || latest > issue.resolved_at);
  await tx`
    update issues set
      occurrence_count = occurrence_count + ${inserted.length},
      first_seen_at = least(coalesce(first_seen_at, ${earliest}), ${earliest}),
      last_seen_at = greatest(coalesce(last_seen_at, ${latest}), ${latest}),
      ${recurs ? tx`status = 'open', resolved_at = null,` : tx``}
      updated_at = now()
    where id = ${issue.id}`;
  if (recurs) {
    await recordIssueEvent(tx, { tenantId: input.tenantId, projectId: input.projectId, issueId: issue.id, name: 'issue.reopened', actor: SYSTEM_ORIGIN });
  }
  return { issueId: issue.id, created, attached: inserted.length };
}
