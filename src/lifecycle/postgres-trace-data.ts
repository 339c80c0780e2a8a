/**
 * A deletion's PostgreSQL side: every table that keeps rows of a trace, in one place, deleted in one
 * transaction per batch. Trace ids are Lookout's (UUID text).
 *
 *  - issue_occurrences — a failed span attached to an issue. The issue stays: its occurrence_count
 *    becomes what is left, and one left with none gets occurrences_deleted_at (it says its evidence
 *    went, instead of pointing at traces that are gone).
 *  - trace_issue_extractions — a trace's issue_extraction block.
 *  - monitor_observations, metric_events — what a monitor saw in a trace, a metric's value for it.
 *  - settle_queue — a trace waiting to settle (emptied first, see quiesceSettling).
 *  - stored_traces — the registry of traces that have spans; without a row, a re-sent span is
 *    written again rather than taken for a duplicate of a deleted one.
 *  - issue_event_outbox — only for a whole project: issue events not yet relayed to ClickHouse.
 *  - shared_state — only for a whole project: its mark of having received log records
 *    (ingest/settle/logged-projects.ts).
 *
 * A project's deletion runs after the project's row is gone, which removed the rows that reference it
 * (issues with their occurrences, extractions, monitors, metrics); the statements below then find
 * only the tables without that reference (settle queue, registry, outbox).
 */
import type { Sql, SqlHandle } from '../platform/postgres/postgres.js';
import { loggedProjectState } from '../ingest/settle/logged-projects.js';

/** Traces of a project (ids as text), or the whole project (null). */
type TraceSet = readonly string[] | null;

export interface PostgresDeletion {
  rows: Record<string, number>;
  issuesEmptied: number;
}

/**
 * Takes the selection's traces out of the settle queue so no settler starts on them again, and says
 * how many are still claimed by a settle round in flight (that round may yet write their summaries
 * to ClickHouse and their occurrences here, so the caller waits for it before deleting). A claim
 * that ends deletes its row itself; a crashed round's lease lapses and the next call deletes it.
 */
export async function quiesceSettling(sql: Sql, tenantId: string, projectId: string, traces: TraceSet): Promise<{ removed: number; claimed: number }> {
  const only = traces === null ? sql`` : sql`and trace_id = any(${traces as string[]}::uuid[])`;
  const removed = await sql`
    delete from settle_queue where tenant_id = ${tenantId} and project_id = ${projectId} ${only}
      and (claim_token is null or lease_until < now()) returning 1`;
  const [{ claimed }] = await sql<{ claimed: number }[]>`
    select count(*)::int as claimed from settle_queue where tenant_id = ${tenantId} and project_id = ${projectId} ${only}`;
  return { removed: removed.length, claimed };
}

/** Deletes the traces' rows from every PostgreSQL table that holds per-trace data, in one transaction. */
export async function deletePostgresRows(sql: Sql, tenantId: string, projectId: string, traces: TraceSet): Promise<PostgresDeletion> {
  return sql.begin(async (tx) => {
    const rows: Record<string, number> = {};
    const ids = traces === null ? null : (traces as string[]);
    const onTraces = () => (ids === null ? tx`` : tx`and trace_id = any(${ids}::uuid[])`);
    const onTraceText = ids === null ? tx`` : tx`and o.trace_id = any(${ids}::text[])`;

    const occurrences = await tx<{ issue_id: string }[]>`
      delete from issue_occurrences where tenant_id = ${tenantId} and project_id = ${projectId} ${onTraces()} returning issue_id`;
    rows['pg.issue_occurrences'] = occurrences.length;
    const issuesEmptied = await recountIssues(tx, tenantId, [...new Set(occurrences.map((o) => o.issue_id))]);

    rows['pg.trace_issue_extractions'] = (await tx`
      delete from trace_issue_extractions where tenant_id = ${tenantId} and project_id = ${projectId} ${onTraces()} returning 1`).length;
    rows['pg.monitor_observations'] = (await tx`
      delete from monitor_observations o using monitors m
      where o.monitor_id = m.id and m.tenant_id = ${tenantId} and m.project_id = ${projectId} ${onTraceText} returning 1`).length;
    rows['pg.metric_events'] = (await tx`
      delete from metric_events o using metrics m
      where o.metric_id = m.id and m.tenant_id = ${tenantId} and m.project_id = ${projectId} ${onTraceText} returning 1`).length;
    rows['pg.settle_queue'] = (await tx`
      delete from settle_queue where tenant_id = ${tenantId} and project_id = ${projectId} ${onTraces()} returning 1`).length;
    rows['pg.stored_traces'] = (await tx`
      delete from stored_traces where tenant_id = ${tenantId} and project_id = ${projectId} ${onTraces()} returning 1`).length;
    if (ids === null) {
      rows['pg.issue_event_outbox'] = (await tx`
        delete from issue_event_outbox where tenant_id = ${tenantId} and project_id = ${projectId} returning 1`).length;
      rows['pg.shared_state'] = (await tx`
        delete from shared_state where name = ${loggedProjectState(tenantId, projectId)} returning 1`).length;
    }
    return { rows, issuesEmptied };
  });
}

/**
 * Sets each issue's occurrence_count to the occurrences it has left; an issue left with none is
 * marked with occurrences_deleted_at. Returns how many were left with none.
 */
async function recountIssues(tx: SqlHandle, tenantId: string, issueIds: string[]): Promise<number> {
  if (issueIds.length === 0) return 0;
  const updated = await tx<{ emptied: boolean }[]>`
    update issues i set
      occurrence_count = c.n,
      occurrences_deleted_at = case when c.n = 0 then now() else i.occurrences_deleted_at end,
      updated_at = now()
    from (
      select u.id, (select count(*)::int from issue_occurrences o where o.issue_id = u.id) as n
      from unnest(${issueIds}::uuid[]) as u(id)) as c
    where i.id = c.id and i.tenant_id = ${tenantId}
    returning c.n = 0 as emptied`;
  return updated.filter((u) => u.emptied).length;
}
