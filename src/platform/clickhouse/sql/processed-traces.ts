/**
 * The one read of trace.processed (`event_trace_processed`): the rows of a condition, one per trace
 * key (tenant, project, trace_id), the newest processing — what `FINAL` then `WHERE` selects. The
 * readers of one row per trace (views, cost module, DSL printer, metric presets, the traces API) take
 * their rows from here. Two read the table directly: the coverage view (views/coverage.ts: a max()
 * over every row, which any version of a key answers alike) and the cost backfill (cost/backfill.ts:
 * its own FINAL, paged in key order), so a change of deduplication must look at those too.
 *
 * Why FINAL and not a split read: were the first row written for a trace marked (clickhouse/006 has
 * the first_processing column for it; nothing sets it today), keys whose only row is that one could
 * be read plain and only the others through FINAL. That read was built, tested equal to FINAL (re-processed
 * runs, runs moved across the window edge or a month's partition, rows from before the mark) and
 * measured: on chdb 26.7 it is slower than FINAL —
 * telling a row's key from the re-processed ones means reading and hashing every trace_id of the
 * project twice (the window's rows, and all rows to find the re-processed keys' versions, which
 * straddle partitions), and that costs more than FINAL's merge of the parts' sorted trace_id streams.
 * If a server measures the split faster, this file is the place to change.
 *
 * `where` (the tenant guard included) is applied after FINAL, as `FROM t FINAL WHERE <where>` does:
 * a condition on a column a re-processing changed sees the newest row only.
 */
import { sql, type Fragment } from './fragment.js';
import { scopedTable } from './tenant-guard.js';

/** `(SELECT * FROM <table> FINAL WHERE <where>)`, a FROM source; the caller's SELECT names the columns it reads. */
export function processedTraces(table: string, where: Fragment): Fragment {
  return sql`(SELECT * FROM ${scopedTable(table)} FINAL WHERE ${where})`;
}
