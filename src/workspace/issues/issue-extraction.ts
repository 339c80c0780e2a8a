import type { Logger } from 'pino';
import type { IssueExtraction, ProcessedTrace, TraceFailure, TraceIssueOccurrence } from '../../ingest/trace-hooks.js';
import type { Sql, SqlHandle } from '../../platform/postgres/postgres.js';
import { fingerprintOf, issueTitleFor } from './issue-fingerprint.js';
import { attachToIssues, type FingerprintIssueInput } from './issue-open.js';
import { isUuid } from '../../platform/uuid.js';

/** issue_extraction.status / reason values (docs/issues.md lists these). */
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

/** A trace's failures as attach inputs, one per fingerprint in fingerprint order (title and description from its first failure). */
function inputsOf(trace: ProcessedTrace): FingerprintIssueInput[] {
  return groupByFingerprint(trace.failures).map(([fingerprint, failures]) => ({
    tenantId: trace.tenantId,
    projectId: trace.projectId,
    fingerprint,
    title: issueTitleFor(failures[0]),
    description: failures[0].message || null,
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
  }));
}

const traceKey = (t: Pick<ProcessedTrace, 'tenantId' | 'projectId' | 'traceId'>) => `${t.tenantId}\u0000${t.projectId}\u0000${t.traceId}`.toLowerCase();

/**
 * Issue extraction for a group of processed traces: every failure
 * attached to its fingerprint's issue and every trace's extraction record written, in a fixed
 * number of statements whatever the group holds. Traces without failures — nearly all at volume —
 * need one statement and no transaction; with failures, one transaction attaches them all
 * (attachToIssues: the same issues, counts, recurrences and events as trace after trace) and
 * writes the records. A trace may come twice (two settle versions together): the failures of both
 * are attached, its record written once. Each record counts the trace's stored occurrences — an
 * earlier processing's or a monitor's included — so re-processing counts nothing twice.
 * Returns each trace's record, by trace, and how many outbox events were written.
 */
export async function extractIssueGroup(sql: Sql, traces: ProcessedTrace[]): Promise<{ extractions: Map<string, IssueExtraction>; events: number }> {
  const inputs = traces.flatMap(inputsOf);
  if (inputs.length === 0) return { extractions: await recordExtractions(sql, traces), events: 0 };
  return sql.begin(async (tx) => {
    const attached = await attachToIssues(tx, inputs);
    const extractions = await recordExtractions(tx, traces);
    return { extractions, events: attached.events };
  });
}

/** Issue extraction for one trace (a group of one). */
export async function extractIssues(sql: Sql, trace: ProcessedTrace): Promise<IssueExtraction> {
  const { extractions } = await extractIssueGroup(sql, [trace]);
  return extractions.get(traceKey(trace))!;
}

/**
 * Writes the extraction record of each trace in one statement: completed, with the counts of its
 * stored occurrences (an earlier processing, or a monitor, counts as well) as this transaction sees
 * them; readExtraction counts again on read (a concurrent extraction of the same trace may be missing).
 */
async function recordExtractions(sql: SqlHandle, traces: ProcessedTrace[]): Promise<Map<string, IssueExtraction>> {
  const unique = new Map<string, ProcessedTrace>();
  // An upsert may not touch one row twice.
  for (const t of traces) unique.set(traceKey(t), t);
  const rows = [...unique.values()];
  const extractions = new Map<string, IssueExtraction>();
  if (rows.length === 0) return extractions;
  const completedAt = new Date().toISOString();
  const written = await sql<{ tenant_id: string; project_id: string; trace_id: string; reason: string; issue_count: number; occurrence_count: number }[]>`
    insert into trace_issue_extractions (tenant_id, project_id, trace_id, status, reason, issue_count, occurrence_count, completed_at)
    select v.t, v.p, v.tr, ${EXTRACTION.completed},
      case when count(o.id) > 0 then ${EXTRACTION.failuresAttached} else ${EXTRACTION.noFailures} end,
      count(distinct o.issue_id)::int, count(o.id)::int, ${completedAt}::timestamptz
    from unnest(${rows.map((t) => t.tenantId)}::uuid[], ${rows.map((t) => t.projectId)}::uuid[], ${rows.map((t) => t.traceId)}::uuid[]) as v(t, p, tr)
    left join issue_occurrences o on o.tenant_id = v.t and o.project_id = v.p and o.trace_id = v.tr
    group by v.t, v.p, v.tr
    order by v.t, v.p, v.tr
    on conflict (tenant_id, project_id, trace_id) do update set status = excluded.status, reason = excluded.reason,
      issue_count = excluded.issue_count, occurrence_count = excluded.occurrence_count, completed_at = excluded.completed_at
    returning tenant_id, project_id, trace_id, reason, issue_count, occurrence_count`;
  for (const r of written) {
    extractions.set(traceKey({ tenantId: r.tenant_id, projectId: r.project_id, traceId: r.trace_id }), {
      status: EXTRACTION.completed, reason: r.reason, issue_count: r.issue_count, occurrence_count: r.occurrence_count, completed_at: completedAt,
    });
  }
  return extractions;
}

async function saveExtraction(sql: SqlHandle, trace: Pick<ProcessedTrace, 'tenantId' | 'projectId' | 'traceId'>, e: IssueExtraction): Promise<void> {
  await sql`
    insert into trace_issue_extractions (tenant_id, project_id, trace_id, status, reason, issue_count, occurrence_count, completed_at)
    values (${trace.tenantId}, ${trace.projectId}, ${trace.traceId}, ${e.status}, ${e.reason}, ${e.issue_count}, ${e.occurrence_count}, ${e.completed_at})
    on conflict (tenant_id, project_id, trace_id) do update set status = excluded.status, reason = excluded.reason,
      issue_count = excluded.issue_count, occurrence_count = excluded.occurrence_count, completed_at = excluded.completed_at`;
}

/**
 * The listener registered in traceHooks().onTracesProcessed: a group of processed traces, extracted
 * by extractIssueGroup. The outbox's readers are woken only when the group wrote events (an issue
 * opened or reopened): attaching to an open issue writes none, and waking them for every failing
 * trace made them poll PostgreSQL continuously under load. If the group fails, its traces are
 * extracted one by one, each failure recorded on its trace (status failed) and the last rethrown
 * for the caller to log; the next processing of a failed trace retries it.
 */
export function extractionGroupListener(sql: Sql, logger: Logger, afterCommit: () => void) {
  const one = async (trace: ProcessedTrace): Promise<number> => {
    try {
      return (await extractIssueGroup(sql, [trace])).events;
    } catch (error) {
      logger.error({ err: error, trace_id: trace.traceId }, 'issue extraction failed');
      await saveExtraction(sql, trace, {
        status: EXTRACTION.failed, reason: EXTRACTION.error, issue_count: 0, occurrence_count: 0, completed_at: new Date().toISOString(),
      }).catch(() => undefined);
      throw error;
    }
  };
  return async (traces: ProcessedTrace[]): Promise<void> => {
    let events = 0;
    const failures: Error[] = [];
    try {
      events = (await extractIssueGroup(sql, traces)).events;
    } catch (error) {
      logger.warn({ err: error, traces: traces.length }, 'issue extraction of a group failed; extracting its traces one by one');
      for (const t of traces) events += await one(t).catch((e: unknown) => (failures.push(e instanceof Error ? e : new Error('issue extraction failed', { cause: e })), 0));
    }
    if (events > 0) afterCommit();
    if (failures.length > 0) throw failures[0];
  };
}

/**
 * A trace's extraction record as the traces API shows it. A completed record's reason and counts
 * are read from the trace's occurrences as they stand (indexed by tenant, project, trace), not from
 * the stored counts: two versions of one trace extracted at once by different groups (attaching to
 * different issues, so no issue lock orders them) each count from their own snapshot, and the later
 * write can miss the other's occurrences. The stored row keeps the status (and a failed record's zeros).
 */
export async function readExtraction(sql: SqlHandle, tenantId: string, projectId: string, traceId: string): Promise<IssueExtraction | null> {
  if (!isUuid(traceId) || !isUuid(projectId)) return null;
  const [row] = await sql<(Omit<IssueExtraction, 'completed_at'> & { completed_at: Date | null })[]>`
    select e.status, e.completed_at,
      case when e.status <> ${EXTRACTION.completed} then e.reason when o.occurrences > 0 then ${EXTRACTION.failuresAttached} else ${EXTRACTION.noFailures} end as reason,
      case when e.status = ${EXTRACTION.completed} then o.issues else e.issue_count end as issue_count,
      case when e.status = ${EXTRACTION.completed} then o.occurrences else e.occurrence_count end as occurrence_count
    from trace_issue_extractions e
    cross join lateral (
      select count(distinct issue_id)::int as issues, count(*)::int as occurrences from issue_occurrences
      where tenant_id = e.tenant_id and project_id = e.project_id and trace_id = e.trace_id
    ) o
    where e.tenant_id = ${tenantId} and e.project_id = ${projectId} and e.trace_id = ${traceId}`;
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
