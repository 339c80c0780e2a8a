import type { ClickHouseStore } from '../platform/clickhouse/clickhouse.js';
import { shardLocalTable } from '../platform/clickhouse/clickhouse-layout.js';
import { join, param, raw, sql, type Fragment } from '../platform/clickhouse/sql/fragment.js';
import { processedTraces } from '../platform/clickhouse/sql/processed-traces.js';
import { scopedTable, tenantGuard } from '../platform/clickhouse/sql/tenant-guard.js';
import { selectJsonEachRowBytes, STORED_SPAN_COLUMNS } from '../spans/stored-spans.js';
import { isOtelTraceId } from '../spans/trace-id.js';
import { msToDateTime64 } from '../platform/clickhouse/clickhouse-time.js';
import type { SearchQuery } from './search-query.js';
import { matchingTraceIds, matchRows, type MatchRow } from './search-sql.js';

/**
 * ClickHouse reads of the traces API: every statement carries the layer's tenant guard (and the
 * key's project when the key is project-limited); every value is bound.
 *
 * Lanes, decided per read: lookups of one trace by id and the keyset-paged list (a LIMIT) run on
 * the `interactive` lane, so a person opening a trace never queues behind heavy analytics of their
 * own tenant; the agent-name list (DISTINCT over every trace of the tenant, no bound) stays on the
 * `analytics` lane with the other aggregations.
 */

export interface TraceScope {
  tenantId: string;
  /** Set for a project-limited key, or when the caller names the project. */
  projectId: string | null;
}

/** The column a trace id names: an OpenTelemetry trace id (32 hex) or Lookout's trace UUID. */
export const traceIdColumn = (id: string) => raw(isOtelTraceId(id) ? 'otel_trace_id' : 'trace_id');

/**
 * The stored spans matching a Lookout trace UUID or a 32-hex OpenTelemetry trace id, as the
 * JSONEachRow bytes ClickHouse returns (interactive lane, the layer's tenant guard): the compute pool
 * parses them and picks the trace (trace-detail-build.ts), so a 100,000-span trace is never decoded
 * on the event loop.
 *
 * Read without FINAL: a copy of a span that a concurrent writer left in another part (the only way
 * `spans` holds one twice: the writer skips spans already stored, and a span's copies are the same
 * exported span) is dropped by span id where the rows are parsed, as the settle read-back does.
 * FINAL would merge the trace's rows of every active part on the fly, at a cost that grows with the
 * table's parts (bench/results/2026-11-30.md). `limit`: at most that many rows (any of them).
 */
export async function readTraceBytes(ch: ClickHouseStore, scope: TraceScope, id: string, limit?: number): Promise<Uint8Array> {
  const idColumn = traceIdColumn(id);
  return selectJsonEachRowBytes(
    ch,
    sql`SELECT ${raw(STORED_SPAN_COLUMNS)} FROM ${scopedTable(ch.table('spans'))}
            WHERE ${tenantGuard(scope)} AND ${idColumn} = ${param('String', id)}${limit === undefined ? sql`` : sql` LIMIT ${param('UInt32', limit)}`}`,
    { lane: 'interactive', scope },
  );
}

/** Traces of the project that share the thread (processed summaries). */
export async function threadTraceCount(ch: ClickHouseStore, tenantId: string, projectId: string, threadId: string, traceId: string): Promise<number> {
  if (threadId === '') return 0;
  const scope = { tenantId, projectId };
  const [row] = await ch.read<{ others: number | string }>(
    sql`SELECT uniqExactIf(trace_id, trace_id != ${param('String', traceId)}) AS others FROM ${scopedTable(ch.table('traces'))}
            WHERE ${tenantGuard(scope)} AND thread_id = ${param('String', threadId)}`,
    { lane: 'interactive', scope },
  );
  // The trace itself counts even before its summary row is written.
  return Number(row?.others ?? 0) + 1;
}

/** A trace's cost as processing wrote it; basis `pending` until the trace is processed (docs/cost.md). */
export interface StoredTraceCostView {
  estimated_cost_usd: number | null;
  estimated_cost_basis: 'stored' | 'partial' | 'unpriced' | 'unavailable' | 'pending';
  cost_unpriced_models: string[];
}

export async function storedTraceCost(ch: ClickHouseStore, tenantId: string, projectId: string, traceId: string): Promise<StoredTraceCostView> {
  const scope = { tenantId, projectId };
  const [row] = await ch.read<{ estimated_cost_usd: number | string | null; estimated_cost_basis: string; cost_unpriced_models: string[] }>(
    sql`SELECT estimated_cost_usd, estimated_cost_basis, cost_unpriced_models
            FROM ${processedTraces(ch.table('event_trace_processed'), sql`${tenantGuard(scope)} AND trace_id = ${param('String', traceId)}`)}
            LIMIT 1`,
    { lane: 'interactive', scope },
  );
  if (!row) return { estimated_cost_usd: null, estimated_cost_basis: 'pending', cost_unpriced_models: [] };
  const known = ['stored', 'partial', 'unpriced', 'unavailable'] as const;
  // A row written before cost existed has basis '': read as unavailable, like the analytics do.
  const basis = known.find((b) => b === row.estimated_cost_basis) ?? 'unavailable';
  return {
    estimated_cost_usd: row.estimated_cost_usd === null ? null : Number(row.estimated_cost_usd),
    estimated_cost_basis: basis,
    cost_unpriced_models: row.cost_unpriced_models,
  };
}

/**
 * Distinct agent names of the tenant's settled traces (within the key's project when limited), sorted.
 * Each trace names its agent by its newest summary (FINAL, then the conditions, as the list reads
 * them): a trace settled again under another agent no longer names the former one, whether or not
 * the engine merged its rows yet. A preview (trace-preview.ts) carries the oldest version, so a
 * settled summary always replaces it; a trace with only its preview is left out, as it may name its
 * agent otherwise once it settles.
 */
export async function agentNames(ch: ClickHouseStore, scope: TraceScope): Promise<string[]> {
  const rows = await ch.read<{ agent_name: string }>(
    sql`SELECT DISTINCT agent_name FROM ${scopedTable(ch.table('traces'))} FINAL
            WHERE ${tenantGuard(scope)} AND agent_name != '' AND preview = 0
            ORDER BY agent_name`,
    { lane: 'analytics', scope },
  );
  return rows.map((r) => r.agent_name);
}

/** Inclusive bounds; either may be absent. */
export interface NumberRange {
  min?: number;
  max?: number;
}

export interface TraceListFilters {
  agentName?: string;
  hasError?: boolean;
  threadId?: string;
  /** One of the trace's models_used. */
  model?: string;
  /** The name of one of the trace's tool calls (stats_tool_calls). */
  tool?: string;
  release?: string;
  /** Inclusive bounds on total_duration_ms. */
  durationMs?: NumberRange;
  /** Inclusive bounds on estimated_cost_usd; a trace without a cost (NULL) is outside every bound. */
  costUsd?: NumberRange;
  /** DateTime64 text, inclusive. */
  start?: string;
  /** DateTime64 text, exclusive. */
  end?: string;
  /** Keyset position: rows strictly older than (timestamp, trace_id). */
  before?: { timestamp: string; traceId: string };
  /** Only traces whose content matches (docs/search.md). */
  search?: SearchQuery;
  /** Also traces not settled yet, by their preview rows (trace-preview.ts); otherwise settled traces only. */
  includeUnsettled?: boolean;
  /** Only these traces (a search among a page of candidates, trace-search.ts). */
  within?: string[];
  /** DateTime64 text, inclusive: the lower end of a probed slice of the newest traces (trace-search.ts). */
  notBefore?: string;
  /**
   * Content of traces that started before this instant (ms) has expired (retention): a search does
   * not find it, whether or not the engine removed it yet.
   */
  contentSinceMs?: number;
  limit: number;
}

export interface TraceListRow {
  trace_id: string;
  otel_trace_id: string;
  project_id: string;
  /** timestamp as DateTime64 text (UTC). */
  ts: string;
  service_name: string;
  agent_name: string;
  thread_id: string;
  release: string;
  agent_input_display: string;
  has_error: number;
  total_duration_ms: number;
  span_count: number;
  total_tokens: number | string;
  error_count: number;
  models_used: string[];
  estimated_cost_usd: number | null;
  stats_tool_calls: string;
  /** 1 while the row is the trace's preview (trace-preview.ts), 0 once it settled. */
  preview: number;
}

/** `column` within the bounds (inclusive); NULL is within none. */
function inRange(column: string, range: NumberRange): Fragment[] {
  const conditions: Fragment[] = [];
  if (range.min !== undefined) conditions.push(sql`${raw(column)} >= ${param('Float64', range.min)}`);
  if (range.max !== undefined) conditions.push(sql`${raw(column)} <= ${param('Float64', range.max)}`);
  return conditions;
}

/**
 * The list's conditions on a summary row's values, each tested on the trace's newest summary only
 * (read through FINAL, or picked per trace by newestSummaries): the page and the total read the same
 * ones, the page adds the keyset position.
 */
function rowConditions(scope: TraceScope, f: Omit<TraceListFilters, 'limit'>): Fragment[] {
  const where: Fragment[] = [tenantGuard(scope)];
  if (f.agentName !== undefined) where.push(sql`agent_name = ${param('String', f.agentName)}`);
  if (f.hasError !== undefined) where.push(sql`has_error = ${param('UInt8', f.hasError ? 1 : 0)}`);
  if (f.threadId !== undefined) where.push(sql`thread_id = ${param('String', f.threadId)}`);
  if (f.model !== undefined) where.push(sql`has(models_used, ${param('String', f.model)})`);
  // stats_tool_calls lists the run's tool calls by name and status (JSON written by trace-summary.ts),
  // kept for analytics_days like the other figures, so the filter outlives the content.
  if (f.tool !== undefined) where.push(sql`arrayExists(call -> JSONExtractString(call, 'name') = ${param('String', f.tool)}, JSONExtractArrayRaw(stats_tool_calls))`);
  if (f.release !== undefined) where.push(sql`release = ${param('String', f.release)}`);
  if (f.durationMs) where.push(...inRange('total_duration_ms', f.durationMs));
  if (f.costUsd) where.push(...inRange('estimated_cost_usd', f.costUsd));
  if (f.start !== undefined) where.push(sql`timestamp >= toDateTime64(${param('String', f.start)}, 3, 'UTC')`);
  if (f.end !== undefined) where.push(sql`timestamp < toDateTime64(${param('String', f.end)}, 3, 'UTC')`);
  if (f.notBefore !== undefined) where.push(sql`timestamp >= toDateTime64(${param('String', f.notBefore)}, 3, 'UTC')`);
  if (f.before) {
    where.push(sql`(timestamp, trace_id) < (toDateTime64(${param('String', f.before.timestamp)}, 3, 'UTC'), ${param('String', f.before.traceId)})`);
  }
  // After FINAL: a settled trace's summary has replaced its preview, whichever landed first.
  if (!f.includeUnsettled) where.push(sql`preview = 0`);
  return where;
}

/** The list's conditions on the trace alone (every row of a trace passes or fails them together). */
function traceConditions(ch: ClickHouseStore, scope: TraceScope, f: Omit<TraceListFilters, 'limit'>): Fragment[] {
  const where: Fragment[] = [];
  if (f.within) where.push(sql`trace_id IN ${param('Array(String)', f.within)}`);
  if (f.threadId !== undefined) where.push(sql`trace_id IN (${threadTraceIds(ch, scope, f.threadId)})`);
  if (f.search) {
    // The content rows carry their trace's timestamp: the list's bounds narrow the search too.
    const contentSince = f.contentSinceMs === undefined ? undefined : msToDateTime64(f.contentSinceMs);
    where.push(sql`trace_id IN (${matchingTraceIds(ch, scope, f.search, { start: f.start, end: f.end, notAfter: f.before?.timestamp, within: f.within, contentSince })})`);
  }
  return where;
}

/**
 * `SELECT trace_id` of every summary row that names the thread, whichever version: a superset of the
 * traces whose newest summary names it, which the row condition then picks after FINAL. Read without
 * FINAL, the index on thread_id (clickhouse/022) skips every granule without the thread; the list's
 * FINAL read then takes those traces by the primary key. FINAL itself cannot use the index well: a
 * fresh part of a few dozen summaries spans nearly the whole trace id range in one granule, and FINAL
 * reads every granule of other parts sharing a selected granule's key range, which was most of the
 * project. On a cluster the subquery names the shard's local table, as search-sql.ts explains (a
 * trace's summaries all live on one shard).
 */
function threadTraceIds(ch: ClickHouseStore, scope: TraceScope, threadId: string): Fragment {
  const table = scopedTable(ch.table(shardLocalTable('traces', ch.cluster)));
  return sql`SELECT trace_id FROM ${table} WHERE ${tenantGuard(scope)} AND thread_id = ${param('String', threadId)}`;
}

function listConditions(ch: ClickHouseStore, scope: TraceScope, f: Omit<TraceListFilters, 'limit'>): Fragment[] {
  return [...rowConditions(scope, f), ...traceConditions(ch, scope, f)];
}

/**
 * How many processed traces match the list's filters and search, on every page together (the
 * keyset position is left out). A count over the project's summaries: the analytics lane.
 */
export async function countTraces(ch: ClickHouseStore, tenantId: string, projectId: string, f: Omit<TraceListFilters, 'limit' | 'before' | 'within'>): Promise<number> {
  const scope = { tenantId, projectId };
  const [row] = await ch.read<{ total: number | string }>(
    sql`SELECT count() AS total FROM ${scopedTable(ch.table('traces'))} FINAL WHERE ${join(listConditions(ch, scope, f), ' AND ')}`,
    { lane: 'analytics', scope },
  );
  return Number(row?.total ?? 0);
}

/** A summary's values the list shows and its conditions test, besides its keys and time. */
const SUMMARY_VALUES =
  'service_name, agent_name, thread_id, release, agent_input_display, has_error, total_duration_ms, span_count, ' +
  'total_tokens, error_count, models_used, estimated_cost_usd, stats_tool_calls, preview';

const LIST_COLUMNS = `trace_id, otel_trace_id, project_id, toString(timestamp) AS ts, ${SUMMARY_VALUES}`;

/** What newestSummaries reads of a row: the list's columns and those its conditions test. */
const SUMMARY_ROW_COLUMNS = `tenant_id, project_id, trace_id, otel_trace_id, timestamp, ${SUMMARY_VALUES}`;

/**
 * Processed traces of a project, newest first (timestamp, then trace id), after the cursor.
 *
 * Among given settled traces (`within`: a search's candidates or probed slice, trace-search.ts) the
 * summaries are read by newestSummaries instead of FINAL: FINAL reads every listed column of every
 * granule around each id and merges the parts, where a plain read checks the trace_id column first
 * (PREWHERE) and reads the other columns only where one of the traces is.
 */
export async function listTraces(ch: ClickHouseStore, tenantId: string, projectId: string, f: TraceListFilters): Promise<TraceListRow[]> {
  const scope = { tenantId, projectId };
  const byId = f.within !== undefined && !f.includeUnsettled;
  const source = byId ? sql`(${newestSummaries(ch, scope, f)})` : sql`${scopedTable(ch.table('traces'))} FINAL`;
  return ch.read<TraceListRow>(
    sql`SELECT ${raw(LIST_COLUMNS)}
            FROM ${source}
            WHERE ${join(byId ? rowConditions(scope, f) : listConditions(ch, scope, f), ' AND ')}
            ORDER BY timestamp DESC, trace_id DESC
            LIMIT ${param('UInt32', f.limit)}`,
    // A search reads every content row holding a word: an aggregation without a small bound
    // (unless it is among given traces, which the primary key finds).
    f.search && !f.within ? { lane: 'analytics', scope } : { lane: 'interactive', scope },
  );
}

/**
 * The newest settled summary of each trace passing the list's conditions on the trace (its ids, its
 * content), as FINAL would keep it: the row of the highest processed_at. Each settling stamps its
 * own processed_at, so two settled rows of a trace never tie; previews (which all carry the oldest
 * processed_at and may tie, trace-preview.ts) are left out, so this serves settled-only lists. The
 * conditions on a row's values are tested on the result, as after FINAL. On a cluster the read goes
 * to each shard, which answers for its own traces (their content included, search-sql.ts).
 */
function newestSummaries(ch: ClickHouseStore, scope: TraceScope, f: TraceListFilters): Fragment {
  return sql`SELECT ${raw(SUMMARY_ROW_COLUMNS)} FROM ${scopedTable(ch.table('traces'))}
            WHERE ${join([tenantGuard(scope), ...traceConditions(ch, scope, f), sql`preview = 0`], ' AND ')}
            ORDER BY trace_id, processed_at DESC
            LIMIT 1 BY trace_id`;
}

/**
 * A slice of the newest traces under the list's filters (without a search), for a search to check
 * (trace-search.ts): every trace whose newest summary passes the filters and lies at or after `since`
 * (and before the cursor) is among `traceIds`; `complete` when no older trace passes them.
 */
export interface TraceSlice {
  /** DateTime64 text: the slice's oldest timestamp. */
  since: string;
  /** A superset of the slice's traces (also traces whose older summaries lie in it). */
  traceIds: string[];
  complete: boolean;
}

/**
 * The slice of about `f.limit` newest summary rows, read without FINAL: first the time of the
 * `limit`-th newest row passing the filters (only the timestamp and filter columns of the project's
 * rows are read), then the ids of the rows from that time on (their trace_id only where such rows
 * are). A row that is not its trace's newest only adds a trace to check; the newest row of every
 * trace in the slice is among the rows, since it passes the same conditions. Null when no row passes.
 */
export async function newestTraceSlice(ch: ClickHouseStore, tenantId: string, projectId: string, f: Omit<TraceListFilters, 'search'>): Promise<TraceSlice | null> {
  const scope = { tenantId, projectId };
  const opts = { lane: 'interactive' as const, scope };
  const { before, ...filters } = f;
  const where = listConditions(ch, scope, filters);
  // The keyset position by its time alone (a superset): listTraces applies the exact one.
  if (before) where.push(sql`timestamp <= toDateTime64(${param('String', before.timestamp)}, 3, 'UTC')`);
  const [edge] = await ch.read<{ since: string; found: number | string }>(
    sql`SELECT toString(min(timestamp)) AS since, count() AS found FROM (
              SELECT timestamp FROM ${scopedTable(ch.table('traces'))}
              WHERE ${join(where, ' AND ')}
              ORDER BY timestamp DESC
              LIMIT ${param('UInt32', f.limit)}
            )`,
    opts,
  );
  if (!edge || Number(edge.found) === 0) return null;
  const ids = await ch.read<{ trace_id: string }>(
    sql`SELECT DISTINCT trace_id FROM ${scopedTable(ch.table('traces'))}
            WHERE ${join([...where, sql`timestamp >= toDateTime64(${param('String', edge.since)}, 3, 'UTC')`], ' AND ')}`,
    opts,
  );
  return { since: edge.since, traceIds: ids.map((r) => r.trace_id), complete: Number(edge.found) < f.limit };
}

/** The rows of the listed traces that hold a searched word, each with a window of text around it (search-snippet.ts). */
export async function searchMatchRows(ch: ClickHouseStore, tenantId: string, projectId: string, search: SearchQuery, traceIds: string[]): Promise<MatchRow[]> {
  if (traceIds.length === 0) return [];
  const scope = { tenantId, projectId };
  return ch.read<MatchRow>(matchRows(ch, scope, search, traceIds), { lane: 'interactive', scope });
}
