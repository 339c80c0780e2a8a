/**
 * How the preset views talk to ClickHouse: through the SQL layer (src/platform/clickhouse/sql). Their
 * SQL is fixed text written in this directory — no identifier comes from a caller — and every value
 * is a typed value of a fragment. Every statement carries the layer's tenant and project guard (every
 * query filters by tenant), runs on the analytics lane
 * (read-only, time-limited, gated) and reads event tables with FINAL so a re-sent span or a
 * re-processed trace counts once; trace.processed through the SQL layer's
 * processedTraces, the one place that decides how that table is deduplicated.
 */
import { ValidationError } from '../../platform/http/errors.js';
import type { ClickHouseStore } from '../../platform/clickhouse/clickhouse.js';
import { isEngineError } from '../../platform/clickhouse/sql/engine-errors.js';
import { param, sql, type Fragment } from '../../platform/clickhouse/sql/fragment.js';
import { processedTraces as processedTraceRows } from '../../platform/clickhouse/sql/processed-traces.js';
import { scopedTable, tenantGuard } from '../../platform/clickhouse/sql/tenant-guard.js';
import type { Sql } from '../../platform/postgres/postgres.js';
import type { PriceCatalog } from '../../cost/price-catalog.js';
import { DEFAULT_MAX_MEMORY_BYTES } from '../query/build.js';
import type { ViewWindow } from './time-buckets.js';

/** What a view needs: both stores, plus optional overrides for tests (price catalog, clock). */
export interface ViewDeps {
  ch: ClickHouseStore;
  sql: Sql;
  /** ClickHouse max_execution_time of each statement (15 s for analytics by default). */
  queryTimeoutSeconds?: number;
  /** Price catalog for the cost module: omitted → the process's price book; null → no prices. */
  catalog?: PriceCatalog | null;
  /** ClickHouse max_memory_usage of each statement; omitted → the DSL's ceiling (DEFAULT_MAX_MEMORY_BYTES). */
  maxMemoryBytes?: number;
}

export interface ViewScope {
  deps: ViewDeps;
  tenantId: string;
  projectId: string;
}

/** The guard every statement starts its WHERE with (the SQL layer's). */
export function guard(scope: ViewScope): Fragment {
  return tenantGuard(scope);
}

/** Rows whose own timestamp is in the window. */
export function inWindow(window: ViewWindow): Fragment {
  const type = "DateTime64(3, 'UTC')";
  return sql`timestamp >= ${param(type, window.start)} AND timestamp < ${param(type, window.endExclusive)}`;
}

const SETTINGS = {
  // Counts and token sums stay far below 2^53; plain JSON numbers keep the shaping simple.
  output_format_json_quote_64bit_integers: 0,
  // GROUPING(x) is 1 on rows where x was aggregated away (the SQL standard), which the
  // GROUPING SETS statements below rely on; pinned so a server default cannot flip it.
  force_grouping_standard_compatibility: 1,
} as const;

/**
 * A view's statement on the analytics lane. Its memory has the DSL's ceiling, so one wide window of
 * exact percentiles cannot take the engine's memory from every other tenant; over it the caller
 * learns what to change (400), as the DSL answers, instead of a bare 500.
 */
export async function selectRows<Row>(scope: ViewScope, statement: Fragment): Promise<Row[]> {
  try {
    return await scope.deps.ch.read<Row>(statement, {
      lane: 'analytics',
      scope,
      timeoutSeconds: scope.deps.queryTimeoutSeconds,
      settings: { ...SETTINGS, max_memory_usage: scope.deps.maxMemoryBytes ?? DEFAULT_MAX_MEMORY_BYTES },
    });
  } catch (error) {
    if (isEngineError(error, 'MEMORY_LIMIT_EXCEEDED')) {
      throw new ValidationError('The view needs more memory than a query may use; narrow its window (days or hours)');
    }
    throw error;
  }
}

/**
 * A grouped statement with its totals row from the same scan. The SQL groups with
 * `GROUP BY GROUPING SETS ((date), ())` and selects `grouping(date) AS is_total` (1 on the totals
 * row under standard GROUPING semantics, pinned in SETTINGS above). GROUPING SETS rather than
 * WITH TOTALS: the embedded engine writes WITH TOTALS over no rows as malformed JSON, and
 * JSONEachRow has no totals at all. Over no rows at all the totals row is still there (count 0).
 */
export async function selectWithTotals<Row>(scope: ViewScope, statement: Fragment): Promise<{ rows: Row[]; totals: Row | undefined }> {
  const all = await selectRows<Row & { is_total: number }>(scope, statement);
  return { rows: all.filter((r) => Number(r.is_total) === 0), totals: all.find((r) => Number(r.is_total) === 1) };
}

/** The grouping of selectWithTotals statements: per bucket, and the whole window. */
export const BY_DATE_WITH_TOTALS = 'GROUP BY GROUPING SETS ((date), ())';

export function table(scope: ViewScope, name: 'event_trace_processed' | 'event_generation_completed' | 'event_tool_called' | 'event_span_errored' | 'event_issue'): Fragment {
  return scopedTable(scope.deps.ch.table(name));
}

/** trace.processed rows of `where` (which starts with guard(scope)), newest processing per trace, as a FROM source. */
export function processedTraces(scope: ViewScope, where: Fragment): Fragment {
  return processedTraceRows(scope.deps.ch.table('event_trace_processed'), where);
}

/** A quantile list from quantilesExact, or nulls when no value went into it (ClickHouse answers 0s). */
export function quantilesOrNull(values: unknown, contributing: number, count: number): (number | null)[] {
  const list = Array.isArray(values) ? values.map(Number) : [];
  return Array.from({ length: count }, (_, i) => (contributing > 0 && list[i] !== undefined ? list[i] : null));
}

/** a / b, or null when b is 0 (error rates over nothing are unknown, not 0). */
export function ratio(a: number, b: number): number | null {
  return b > 0 ? a / b : null;
}

/** Rows keyed by their `date` column, for completeSeries. */
export function byDate<Row extends { date: string }>(rows: readonly Row[]): Map<string, Row> {
  return new Map(rows.map((row) => [row.date, row]));
}
