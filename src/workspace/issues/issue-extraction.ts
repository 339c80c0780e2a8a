import type { Logger } from 'pino';
import type { IssueExtraction, ProcessedTrace, TraceFailure, TraceIssueOccurrence } from '../../trace-hooks.js';
import type { Sql, SqlHandle } from '../../stores/postgres.js';
import { fingerprintOf, issueTitleFor } from './issue-fingerprint.js';
import { openOrAttachIssue } from './issue-open.js';
import { isUuid } from '../../uuid.js';

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

/**
 * Attaches a processed trace's failures to issues (DESIGN.md "Issue extraction"), one issue per
 * fingerprint, through openOrAttachIssue (idempotent; recurrence rules there).
 */
export async function extractIssues(sql: Sql, trace: ProcessedTrace): Promise<IssueExtraction> {
  if (trace.failures.length === 0) return recordWithoutFailures(sql, trace);
  return sql.begin(async (tx) => {
    for (const [fingerprint, failures] of groupByFingerprint(trace.failures)) {
      const first = failures[0];
      await openOrAttachIssue(tx, {
        tenantId: trace.tenantId,
        projectId: trace.projectId,
        fingerprint,
        title: issueTitleFor(first),
        description: first.message || null,
        traceId: trace.traceId,
        otelTraceId: trace.otelTraceId,
        occurrences: failures.map((f) => ({
          spanId: f.span_id,
          occurredAt: failureTime(f, trace),
          errorType: f.error_type,
          spanName: f.span_name,
          toolName: f.tool_name,
          message: f.message,
        })),
      });
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

/**
 * The common case at volume, a trace without failed spans: nothing to attach, so the record is
 * written by one statement (no transaction round trips). Its counts still come from the trace's
 * stored occurrences (an earlier processing, or a monitor), as in the general path.
 */
async function recordWithoutFailures(sql: SqlHandle, trace: ProcessedTrace): Promise<IssueExtraction> {
  const completedAt = new Date().toISOString();
  const [row] = await sql<{ reason: string; issue_count: number; occurrence_count: number }[]>`
    insert into trace_issue_extractions (tenant_id, project_id, trace_id, status, reason, issue_count, occurrence_count, completed_at)
    select ${trace.tenantId}::uuid, ${trace.projectId}::uuid, ${trace.traceId}::uuid, ${EXTRACTION.completed},
      case when count(*) > 0 then ${EXTRACTION.failuresAttached} else ${EXTRACTION.noFailures} end,
      count(distinct issue_id)::int, count(*)::int, ${completedAt}::timestamptz
    from issue_occurrences
    where tenant_id = ${trace.tenantId} and project_id = ${trace.projectId} and trace_id = ${trace.traceId}
    on conflict (tenant_id, project_id, trace_id) do update set status = excluded.status, reason = excluded.reason,
      issue_count = excluded.issue_count, occurrence_count = excluded.occurrence_count, completed_at = excluded.completed_at
    returning reason, issue_count, occurrence_count`;
  return { status: EXTRACTION.completed, ...row, completed_at: completedAt };
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
      // Only attaching failures writes issue events to the outbox; waking its relay for every
      // trace would make it poll PostgreSQL continuously under load.
      if (trace.failures.length > 0) afterCommit();
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
