/**
 * How the preset views talk to ClickHouse: each statement is a tree of the analytics query AST
 * (../query/ast.ts) printed by its printer (../query/print.ts), which reads every table it names
 * qualified, with FINAL (a re-sent span or a re-processed trace counts once; trace.processed
 * through the SQL layer's processedTraces, the one place that decides how that table is
 * deduplicated) and with the layer's tenant and project guard in the WHERE of the select that
 * reads it. A view cannot write a table without its guard: it has no way to name a table but a
 * Table node. No identifier comes from a caller, every value is a bound value, and every statement
 * runs on the analytics lane (read-only, time-limited, gated), where the runner counts guards
 * against tables once more.
 */
import { ValidationError } from '../../platform/http/errors.js';
import type { ClickHouseStore } from '../../platform/clickhouse/clickhouse.js';
import { isEngineError } from '../../platform/clickhouse/sql/engine-errors.js';
import { clickhouseDateText } from '../../platform/clickhouse/sql/typed-literal.js';
import type { Fragment } from '../../platform/clickhouse/sql/fragment.js';
import type { Sql } from '../../platform/postgres/postgres.js';
import type { PriceCatalog } from '../../cost/price-catalog.js';
import { aggregate, and, call, column, compare, literal, ref, selectItem, table, value, type Expr, type SelectItemNode, type SelectNode, type TableNode } from '../query/ast.js';
import { DEFAULT_MAX_MEMORY_BYTES } from '../query/build.js';
import { Printer, type PrintContext } from '../query/print.js';
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

/** The event tables the views read. */
export type ViewTable = 'event_trace_processed' | 'event_generation_completed' | 'event_tool_called' | 'event_span_errored' | 'event_issue';

/** A table a view reads (with FINAL unless `final: false`); the printer adds its guard. */
export function viewTable(name: ViewTable, options: { final?: boolean } = {}): TableNode {
  return table(name, options);
}

const TIMESTAMP = "DateTime64(3, 'UTC')";

/** Rows whose own timestamp is in the window: the two conditions, for an `and` with others. */
export function inWindow(window: ViewWindow): Expr[] {
  return [
    compare('>=', column('timestamp'), value(TIMESTAMP, clickhouseDateText(window.start))),
    compare('<', column('timestamp'), value(TIMESTAMP, clickhouseDateText(window.endExclusive))),
  ];
}

/** The window's rows, as a select's WHERE. */
export function windowWhere(window: ViewWindow, ...more: Expr[]): Expr {
  return and([...inWindow(window), ...more]);
}

/** Run outcome columns shared by the trace.processed statements (docs/analytics.md "Run outcomes"). */
export function outcomeItems(): SelectItemNode[] {
  const hasRoot = (v: number) => compare('=', column('has_root'), literal(v));
  return [
    selectItem(aggregate('count', null, null), 'traces'),
    selectItem(aggregate('count', null, and([hasRoot(1), compare('=', column('root_status_code'), value('String', 'ERROR'))])), 'failed_runs'),
    selectItem(aggregate('count', null, hasRoot(1)), 'root_status_known'),
    selectItem(aggregate('count', null, hasRoot(0)), 'root_absent'),
  ];
}

/** `grouping(<alias>)`: 1 on rows where the column was aggregated away (standard semantics, pinned in SETTINGS). */
export function isTotal(alias: string): Expr {
  return call('grouping', ref(alias));
}

/** The printer's context for a view's scope: the caller's tenant and project, the store's database. */
export function printContext(scope: ViewScope): PrintContext {
  return { tenantId: scope.tenantId, projectId: scope.projectId, qualify: (t) => scope.deps.ch.table(t) };
}

/** A view's statement as the SQL layer runs it; its settings are the views' own (VIEW_SETTINGS). */
export function printView(statement: SelectNode, context: PrintContext): Fragment {
  const printed = Printer.query(statement, context);
  if (Object.keys(printed.settings).length > 0) throw new Error('a view statement takes its settings from selectRows');
  return printed.statement;
}

/** Settings of every view statement, besides the runner's time limit and the memory ceiling. */
export const VIEW_SETTINGS = {
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
export async function selectRows<Row>(scope: ViewScope, statement: SelectNode): Promise<Row[]> {
  try {
    return await scope.deps.ch.read<Row>(printView(statement, printContext(scope)), {
      lane: 'analytics',
      scope,
      timeoutSeconds: scope.deps.queryTimeoutSeconds,
      settings: { ...VIEW_SETTINGS, max_memory_usage: scope.deps.maxMemoryBytes ?? DEFAULT_MAX_MEMORY_BYTES },
    });
  } catch (error) {
    if (isEngineError(error, 'MEMORY_LIMIT_EXCEEDED')) {
      throw new ValidationError('The view needs more memory than a query may use; narrow its window (days or hours)');
    }
    throw error;
  }
}

/**
 * A grouped statement with its totals row from the same scan. The statement groups with
 * BY_DATE_WITH_TOTALS (`GROUP BY GROUPING SETS ((date), ())`) and selects `isTotal('date') AS is_total`
 * (1 on the totals row under standard GROUPING semantics, pinned in VIEW_SETTINGS). GROUPING SETS rather than
 * WITH TOTALS: the embedded engine writes WITH TOTALS over no rows as malformed JSON, and
 * JSONEachRow has no totals at all. Over no rows at all the totals row is still there (count 0).
 */
export async function selectWithTotals<Row>(scope: ViewScope, statement: SelectNode): Promise<{ rows: Row[]; totals: Row | undefined }> {
  const all = await selectRows<Row & { is_total: number }>(scope, statement);
  return { rows: all.filter((r) => Number(r.is_total) === 0), totals: all.find((r) => Number(r.is_total) === 1) };
}

/** The grouping of selectWithTotals statements: per bucket, and the whole window. */
export const BY_DATE_WITH_TOTALS: readonly (readonly ReturnType<typeof ref>[])[] = Object.freeze([Object.freeze([ref('date')]), Object.freeze([])]);

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
