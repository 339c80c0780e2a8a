/**
 * The one read of trace.processed (`event_trace_processed`): its rows as FINAL would give them — the
 * newest processing per trace key (tenant, project, trace_id) — without paying FINAL for the traces
 * that were processed once.
 *
 * Why: the table is keyed by trace only (a late root span may move a run's start, so the key cannot
 * hold the timestamp), settle rounds write runs from the whole key range, and so on fresh data every
 * part overlaps every other: FINAL merges every part of the project whatever the window, 10–15× the
 * plain read (bench/README.md, issue 17).
 *
 * What makes it exact: the settler writes `first_processing = 1` on at most one row per key, the
 * first one ever written for it (ClickHouse migration 006); every later row of the key
 * (re-processing after a late span, a retry after a crash) and every row from before the migration
 * carries 0. So with S = the trace ids of the scope's rows with first_processing = 0:
 *  - a key whose trace id is not in S has no 0 row, hence exactly one row (its first): read plain;
 *  - a key whose trace id is in S is read through FINAL, restricted to those trace ids before the
 *    merge (PREWHERE on key columns only — every version of a key passes or fails together, so the
 *    merge sees whole keys and still keeps the newest).
 * The two branches split the keys, so every key is counted once, by the same row FINAL keeps. S is
 * taken over the whole scope, not the window: a key's rows may straddle the window edge or a
 * partition (a re-processed row may carry another timestamp than the first), and the newest row
 * decides. S over-selecting (a trace id shared by two projects of a tenant-wide scope) only sends a
 * key through FINAL, which is exact for any key.
 *
 * `where` (guard included) is the caller's condition over the table's columns; it is applied in both
 * branches after FINAL, exactly where `FROM t FINAL WHERE <where>` applies it. On a cluster the
 * tables are Distributed: the set goes GLOBAL (built once on the initiator), as the cost module's
 * live set does; on one node GLOBAL IN is plain IN.
 */
import { sql, type Fragment } from './fragment.js';
import { scopedTable, tenantGuard, type TenantScope } from './tenant-guard.js';

/**
 * `(SELECT * … UNION ALL SELECT * … FINAL …)`: trace.processed rows of `where`, one per trace key, the
 * newest processing. Use it where `<table> FINAL WHERE <where>` was written: `FROM ${processedTraces(…)}`.
 * The caller's SELECT names the columns it needs; the engine reads only those in both branches.
 */
export function processedTraces(table: string, scope: TenantScope, where: Fragment): Fragment {
  // One guard object, printed three times: its values are bound once (the runner still counts three guards).
  const guard = tenantGuard(scope);
  const reprocessed = () => sql`(SELECT trace_id FROM ${scopedTable(table)} WHERE ${guard} AND first_processing = 0)`;
  return sql`(
  SELECT * FROM ${scopedTable(table)}
  WHERE (${where}) AND first_processing = 1 AND trace_id GLOBAL NOT IN ${reprocessed()}
  UNION ALL
  SELECT * FROM ${scopedTable(table)} FINAL
  PREWHERE ${guard} AND trace_id GLOBAL IN ${reprocessed()}
  WHERE ${where}
)`;
}
