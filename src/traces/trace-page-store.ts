import type { ClickHouseStore } from '../platform/clickhouse/clickhouse.js';
import { param, raw, sql } from '../platform/clickhouse/sql/fragment.js';
import { scopedTable, tenantGuard } from '../platform/clickhouse/sql/tenant-guard.js';
import { selectJsonEachRowBytes, STORED_SPAN_COLUMNS } from '../spans/stored-spans.js';
import type { TraceRow } from '../spans/trace-summary.js';
import { traceIdColumn, type TraceScope } from './trace-store.js';

/**
 * The reads of a trace-detail page served from what settling stored (trace-page.ts): the `traces`
 * summary row, how many spans are stored now, and one keyset page of spans ordered by ClickHouse.
 * All on the interactive lane, each carrying the tenant guard; every value is bound.
 */

/** The summary columns of a `traces` row, as summarizeTrace wrote them (TraceRow). */
const SUMMARY_COLUMNS =
  'tenant_id, project_id, trace_id, otel_trace_id, toString(timestamp) AS ts, service_name, agent_name, thread_id, release, ' +
  'agent_input_display, agent_input, agent_output, tool_calls, interaction, has_error, total_duration_ms, span_count, ' +
  'total_tokens, error_count, models_used, stats_tool_calls, estimated_cost_usd, toString(processed_at) AS processed';

type SummaryRow = Omit<TraceRow, 'timestamp' | 'processed_at'> & { ts: string; processed: string };

export interface StoredTraceState {
  summary: TraceRow;
  /** Distinct spans stored now (equal to summary.span_count once the trace is settled and unchanged). */
  spans: number;
  /** Whether two spans share a start time: then the page order needs span depths. */
  ties: boolean;
}

/**
 * The stored summary of the trace named by a Lookout trace UUID or an OpenTelemetry trace id, with
 * its current span count; null unless exactly one trace matches, it has more than `minSpans` spans
 * and a summary row. The span count is read first: most traces are small and are built whole, so
 * they never pay for the summary read.
 */
export async function readStoredTraceState(ch: ClickHouseStore, scope: TraceScope, id: string, minSpans: number): Promise<StoredTraceState | null> {
  const idColumn = traceIdColumn(id);
  const counts = await ch.read<{ trace_id: string; spans: number | string; starts: number | string }>(
    sql`SELECT trace_id, uniqExact(span_id) AS spans, uniqExact(start_time_ns) AS starts FROM ${scopedTable(ch.table('spans'))}
            WHERE ${tenantGuard(scope)} AND ${idColumn} = ${param('String', id)}
            GROUP BY trace_id
            LIMIT 2`,
    { lane: 'interactive', scope },
  );
  if (counts.length !== 1 || Number(counts[0].spans) <= minSpans) return null;
  const summaries = await ch.read<SummaryRow>(
    sql`SELECT ${raw(SUMMARY_COLUMNS)} FROM ${scopedTable(ch.table('traces'))} FINAL
            WHERE ${tenantGuard(scope)} AND ${idColumn} = ${param('String', id)} AND preview = 0
            LIMIT 2`,
    { lane: 'interactive', scope },
  );
  if (summaries.length !== 1 || counts[0].trace_id !== summaries[0].trace_id) return null;
  const { ts, processed, ...row } = summaries[0];
  const summary: TraceRow = {
    ...row,
    timestamp: ts,
    processed_at: processed,
    has_error: Number(row.has_error),
    total_duration_ms: Number(row.total_duration_ms),
    span_count: Number(row.span_count),
    total_tokens: Number(row.total_tokens),
    error_count: Number(row.error_count),
    estimated_cost_usd: row.estimated_cost_usd === null ? null : Number(row.estimated_cost_usd),
  };
  return { summary, spans: Number(counts[0].spans), ties: Number(counts[0].spans) > Number(counts[0].starts) };
}

export interface PageRead {
  /** Spans starting at the cursor's start time (all of them: the cursor splits them by depth and id), when paging on. */
  atCursor: Uint8Array | null;
  /** The next `limit + 1` spans after the cursor's start time by start time, with every span tying with the last. */
  after: Uint8Array;
  /** span_id and parent_span_id of every span, when the trace has spans starting together (their depth orders them). */
  skeleton: Uint8Array | null;
}

/**
 * One page's spans, ordered and cut by ClickHouse (`ORDER BY start_time_ns LIMIT n`, so
 * a group of spans that start together is never split by the LIMIT); the worker orders each group
 * by depth and span id. Only a trace with such groups also reads its parent links (two short
 * columns), from which the worker takes depths.
 */
export async function readTracePage(
  ch: ClickHouseStore,
  scope: TraceScope,
  traceId: string,
  options: { limit: number; afterStartNs: string | null; ties: boolean },
): Promise<PageRead> {
  const opts = { lane: 'interactive' as const, scope };
  const spans = () => scopedTable(ch.table('spans'));
  const trace = () => sql`${tenantGuard(scope)} AND trace_id = ${param('String', traceId)}`;
  const start = options.afterStartNs;
  const [atCursor, after, skeleton] = await Promise.all([
    start === null
      ? Promise.resolve(null)
      : selectJsonEachRowBytes(ch, sql`SELECT ${raw(STORED_SPAN_COLUMNS)} FROM ${spans()} FINAL WHERE ${trace()} AND start_time_ns = ${param('UInt64', start)}`, opts),
    selectJsonEachRowBytes(
      ch,
      sql`SELECT ${raw(STORED_SPAN_COLUMNS)} FROM ${spans()} FINAL
              WHERE ${trace()}${start === null ? sql`` : sql` AND start_time_ns > ${param('UInt64', start)}`}
              ORDER BY start_time_ns
              LIMIT ${param('UInt32', options.limit + 1)} WITH TIES`,
      opts,
    ),
    options.ties
      ? selectJsonEachRowBytes(ch, sql`SELECT span_id, parent_span_id FROM ${spans()} FINAL WHERE ${trace()} ORDER BY span_id`, opts)
      : Promise.resolve(null),
  ]);
  return { atCursor, after, skeleton };
}
