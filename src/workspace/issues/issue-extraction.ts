import crypto from 'node:crypto';
import type { Logger } from 'pino';
import type { IssueExtraction, ProcessedTrace, TraceFailure, TraceIssueOccurrence } from '../../trace-hooks.js';
import type { Sql, SqlHandle } from '../../stores/postgres.js';
import { recordIssueEvent, SYSTEM_ACTOR } from '../../outbox/issue-event-outbox.js';
import { fingerprintOf, issueTitleFor } from './issue-fingerprint.js';
import { ISSUE_COLUMNS } from './issue-store.js';
import type { IssueRow } from './issue-types.js';
import { isUuid } from '../projects/project-store.js';

/** issue_extraction.status / reason values (SPEC.md shows none; docs/issues.md lists these). */
export const EXTRACTION = {
  completed: 'completed',
  failed: 'failed',
  noFailures: 'no_failures',
  failuresAttached: 'failures_attached',
  error: 'extraction_error',
} as const;

function failureTime(failure: TraceFailure, trace: ProcessedTrace): Date {
  for (const candidate of [failure.timestamp, trace.timestamp]) {
    const d = new Date(candidate);
    if (candidate && !Number.isNaN(d.getTime())) return d;
  }
  return new Date();
}

/** Failures grouped by fingerprint, in fingerprint order so concurrent extractions lock issues in one order (no deadlocks). */
function groupByFingerprint(failures: TraceFailure[]): [string, TraceFailure[]][] {
  const groups = new Map<string, TraceFailure[]>();
  for (const failure of failures) {
    const key = fingerprintOf(failure);
    const group = groups.get(key);
    if (group) group.push(failure);
    else groups.set(key, [failure]);
  }
  return [...groups.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/** The project's issue for a fingerprint, created (with issue.created) when there is none yet, locked for this transaction. */
async function issueForFingerprint(tx: SqlHandle, trace: ProcessedTrace, fingerprint: string, first: TraceFailure): Promise<IssueRow> {
  const [created] = await tx<IssueRow[]>`
    insert into issues (id, tenant_id, project_id, title, description, fingerprint)
    values (${crypto.randomUUID()}, ${trace.tenantId}, ${trace.projectId}, ${issueTitleFor(first)},
            ${first.message ? first.message.slice(0, 5000) : null}, ${fingerprint})
    on conflict (project_id, fingerprint) where fingerprint is not null do nothing
    returning ${tx.unsafe(ISSUE_COLUMNS)}`;
  if (created) {
    await recordIssueEvent(tx, { tenantId: trace.tenantId, projectId: trace.projectId, issueId: created.id, name: 'issue.created', actor: SYSTEM_ACTOR, occurredAt: created.created_at });
    return created;
  }
  const [existing] = await tx<IssueRow[]>`
    select ${tx.unsafe(ISSUE_COLUMNS)} from issues
    where tenant_id = ${trace.tenantId} and project_id = ${trace.projectId} and fingerprint = ${fingerprint}
    for update`;
  return existing;
}

/**
 * Attaches a processed trace's failures to issues (DESIGN.md "Issue extraction"). Idempotent: an
 * occurrence is keyed by (issue, trace, span), so re-processing a trace (a late span) adds only new
 * failures and counts nothing twice.
 *
 * Recurrence (docs/issues.md): a resolved issue whose failure happens again after it was resolved
 * is reopened (status open, issue.reopened by the system, assignee kept) — a regression should be
 * seen. A dismissed issue stays dismissed (the team said it does not matter) but still counts the
 * occurrence. Failures older than the resolution (a late re-processed trace) never reopen.
 */
export async function extractIssues(sql: Sql, trace: ProcessedTrace): Promise<IssueExtraction> {
  return sql.begin(async (tx) => {
    for (const [fingerprint, failures] of groupByFingerprint(trace.failures)) {
      const times = failures.map((f) => failureTime(f, trace));
      const issue = await issueForFingerprint(tx, trace, fingerprint, failures[0]);
      const rows = failures.map((f, i) => ({
        tenant_id: trace.tenantId,
        project_id: trace.projectId,
        issue_id: issue.id,
        trace_id: trace.traceId,
        otel_trace_id: trace.otelTraceId,
        span_id: f.span_id,
        occurred_at: times[i],
        error_type: f.error_type,
        span_name: f.span_name,
        tool_name: f.tool_name,
        message: f.message.slice(0, 5000),
      }));
      const inserted = await tx<{ occurred_at: Date }[]>`
        insert into issue_occurrences ${tx(rows)}
        on conflict (issue_id, trace_id, span_id) do nothing
        returning occurred_at`;
      if (inserted.length === 0) continue;
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
        await recordIssueEvent(tx, { tenantId: trace.tenantId, projectId: trace.projectId, issueId: issue.id, name: 'issue.reopened', actor: SYSTEM_ACTOR });
      }
    }
    const [totals] = await tx<{ issue_count: number; occurrence_count: number }[]>`
      select count(distinct issue_id)::int as issue_count, count(*)::int as occurrence_count from issue_occurrences
      where tenant_id = ${trace.tenantId} and project_id = ${trace.projectId} and trace_id = ${trace.traceId}`;
    const extraction: IssueExtraction = {
      status: EXTRACTION.completed,
      reason: totals.occurrence_count > 0 ? EXTRACTION.failuresAttached : EXTRACTION.noFailures,
      issue_count: totals.issue_count,
      occurrence_count: totals.occurrence_count,
      completed_at: new Date().toISOString(),
    };
    await saveExtraction(tx, trace, extraction);
    return extraction;
  });
}

async function saveExtraction(sql: SqlHandle, trace: Pick<ProcessedTrace, 'tenantId' | 'projectId' | 'traceId'>, e: IssueExtraction): Promise<void> {
  await sql`
    insert into trace_issue_extractions (tenant_id, project_id, trace_id, status, reason, issue_count, occurrence_count, completed_at)
    values (${trace.tenantId}, ${trace.projectId}, ${trace.traceId}, ${e.status}, ${e.reason}, ${e.issue_count}, ${e.occurrence_count}, ${e.completed_at})
    on conflict (tenant_id, project_id, trace_id) do update set status = excluded.status, reason = excluded.reason,
      issue_count = excluded.issue_count, occurrence_count = excluded.occurrence_count, completed_at = excluded.completed_at`;
}

/**
 * The listener registered in traceHooks().onTraceProcessed. A failed extraction is recorded on the
 * trace (status failed) and rethrown so the caller can log it; the next processing of the trace retries.
 */
export function extractionListener(sql: Sql, logger: Logger, afterCommit: () => void) {
  return async (trace: ProcessedTrace): Promise<void> => {
    try {
      await extractIssues(sql, trace);
      afterCommit();
    } catch (error) {
      logger.error({ err: error, trace_id: trace.traceId }, 'issue extraction failed');
      await saveExtraction(sql, trace, {
        status: EXTRACTION.failed, reason: EXTRACTION.error, issue_count: 0, occurrence_count: 0, completed_at: new Date().toISOString(),
      }).catch(() => undefined);
      throw error;
    }
  };
}

export async function readExtraction(sql: SqlHandle, tenantId: string, projectId: string, traceId: string): Promise<IssueExtraction | null> {
  if (!isUuid(traceId) || !isUuid(projectId)) return null;
  const [row] = await sql<(Omit<IssueExtraction, 'completed_at'> & { completed_at: Date | null })[]>`
    select status, reason, issue_count, occurrence_count, completed_at from trace_issue_extractions
    where tenant_id = ${tenantId} and project_id = ${projectId} and trace_id = ${traceId}`;
  return row ? { ...row, completed_at: row.completed_at?.toISOString() ?? null } : null;
}

export async function readTraceOccurrences(sql: SqlHandle, tenantId: string, projectId: string, traceId: string): Promise<TraceIssueOccurrence[]> {
  if (!isUuid(traceId) || !isUuid(projectId)) return [];
  const rows = await sql<{ issue_id: string; issue_title: string; issue_status: string; span_id: string; occurred_at: Date }[]>`
    select o.issue_id, i.title as issue_title, i.status as issue_status, o.span_id, o.occurred_at
    from issue_occurrences o join issues i on i.id = o.issue_id
    where o.tenant_id = ${tenantId} and o.project_id = ${projectId} and o.trace_id = ${traceId}
    order by o.occurred_at, o.span_id`;
  return rows.map((r) => ({ ...r, occurred_at: r.occurred_at.toISOString() }));
}
