/**
 * A deletion's ClickHouse side: which traces a selection names, how many rows each table holds of
 * them, and their lightweight DELETE in every per-trace table (src/platform/clickhouse/trace-tables.ts,
 * the one list) — on a project's deletion also the tables that are only per project.
 *
 * Reads run with apply_mutations_on_fly = 1: a delete this job (or an earlier attempt of it) already
 * submitted counts as done, so a batch is never counted twice and a resumed job does not find the
 * traces it already removed.
 */
import type { ClickHouseStore } from '../platform/clickhouse/clickhouse.js';
import { lightweightDelete, type SubmittedDeletes, type TableDelete } from '../platform/clickhouse/lightweight-delete.js';
import { param, sql, type Fragment } from '../platform/clickhouse/sql/fragment.js';
import { scopedTable, tenantGuard, type TenantScope } from '../platform/clickhouse/sql/tenant-guard.js';
import { PROJECT_ONLY_TABLES, TRACE_TABLES } from '../platform/clickhouse/trace-tables.js';
import type { Selection } from './deletion-store.js';

/** Traces of a project (ids as text), or the whole project (null). */
export type TraceSet = readonly string[] | null;

const PENDING_DELETES_APPLIED = { apply_mutations_on_fly: 1 } as const;

function traceCondition(table: string, traces: TraceSet): Fragment {
  if (traces === null) return sql``;
  const type = TRACE_TABLES[table] === 'uuid' ? 'Array(UUID)' : 'Array(String)';
  return sql` AND trace_id IN ${param(type, traces)}`;
}

/** The tables a deletion of `traces` touches: every per-trace table, and the per-project ones for a whole project. */
function tablesFor(traces: TraceSet): string[] {
  return [...Object.keys(TRACE_TABLES), ...(traces === null ? PROJECT_ONLY_TABLES : [])];
}

/**
 * Up to `limit` traces of a thread or a time selection that are still stored, as written up to
 * `asOf` (the job's creation): spans written later are new data, so a job under steady ingest into
 * the thread still ends. `before` names every trace with a span (or a log record) that started
 * before the instant, i.e. every trace that started before it, with all its spans.
 */
export async function nextTraceBatch(ch: ClickHouseStore, scope: TenantScope, selection: Selection, asOf: Date, limit: number): Promise<string[]> {
  const written = param("DateTime64(3, 'UTC')", asOf);
  let statement: Fragment;
  if (selection.kind === 'thread') {
    statement = sql`SELECT DISTINCT trace_id FROM ${scopedTable(ch.table('spans'))} WHERE ${tenantGuard(scope)} AND thread_id = ${param('String', selection.threadId)} AND ingested_at <= ${written} LIMIT ${param('UInt32', limit)}`;
  } else if (selection.kind === 'before') {
    const before = param("DateTime64(3, 'UTC')", selection.before);
    statement = sql`SELECT DISTINCT trace_id FROM (
      SELECT trace_id FROM ${scopedTable(ch.table('spans'))} WHERE ${tenantGuard(scope)} AND timestamp < ${before} AND ingested_at <= ${written}
      UNION ALL
      SELECT trace_id FROM ${scopedTable(ch.table('span_logs'))} WHERE ${tenantGuard(scope)} AND timestamp < ${before} AND ingested_at <= ${written}
    ) LIMIT ${param('UInt32', limit)}`;
  } else {
    throw new Error(`a ${selection.kind} deletion names its traces itself`);
  }
  const rows = await ch.read<{ trace_id: string }>(statement, { lane: 'system', scope, settings: PENDING_DELETES_APPLIED });
  return rows.map((r) => r.trace_id);
}

/** Rows each table holds of the traces (or of the whole project), pending deletes applied. */
export async function countRows(ch: ClickHouseStore, scope: TenantScope, traces: TraceSet): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const table of tablesFor(traces)) {
    const [row] = await ch.read<{ n: number | string }>(
      sql`SELECT count() AS n FROM ${scopedTable(ch.table(table))} WHERE ${tenantGuard(scope)}${traceCondition(table, traces)}`,
      { lane: 'system', scope, settings: PENDING_DELETES_APPLIED },
    );
    counts[table] = Number(row?.n ?? 0);
  }
  return counts;
}

/**
 * Deletes the rows of the traces (or of the whole project) from every table and waits up to
 * `waitMs` for the deletes to apply; the answer says whether they did and can be asked again (the
 * job waits on for these deletes only; a retried attempt submits them again, which is harmless).
 */
export async function deleteRows(ch: ClickHouseStore, scope: TenantScope, traces: TraceSet, waitMs: number): Promise<SubmittedDeletes> {
  const deletes: TableDelete[] = tablesFor(traces).map((table) => ({ table, where: sql`${tenantGuard(scope)}${traceCondition(table, traces)}` }));
  return lightweightDelete(ch, deletes, { lane: 'system', waitMs });
}

/** How many of the traces (or of the project's traces) still have spans or log records. */
export async function countTraces(ch: ClickHouseStore, scope: TenantScope, traces: TraceSet): Promise<number> {
  const only = traces === null ? sql`` : sql` AND trace_id IN ${param('Array(String)', traces)}`;
  const [row] = await ch.read<{ n: number | string }>(
    sql`SELECT uniqExact(trace_id) AS n FROM (
      SELECT trace_id FROM ${scopedTable(ch.table('spans'))} WHERE ${tenantGuard(scope)}${only}
      UNION ALL
      SELECT trace_id FROM ${scopedTable(ch.table('span_logs'))} WHERE ${tenantGuard(scope)}${only})`,
    { lane: 'system', scope, settings: PENDING_DELETES_APPLIED },
  );
  return Number(row?.n ?? 0);
}
