/**
 * Cost for analytics views — the API the preset views build on (the cost object and the
 * cost parts of each view; docs/cost.md for every rule).
 *
 *   const result = await computeCostObject(ctx, { start, endExclusive, groupBy });
 *
 *   ctx      { ch, tenantId, projectId, catalog?, limits?, now? }
 *            catalog: a PriceCatalog, or null for "no prices"; omitted → the process's price book.
 *   groupBy  omitted / 'none'               one figure for the window
 *            'agent'                        per agent_name (agent_scorecard)
 *            { bucket: 'hour'|'day'|'week'|'month' }  per bucket of the trace timestamp (base);
 *                                           day/week/month values are 'YYYY-MM-DD' (week = Sunday).
 *   options  agentName?  restricts to one agent; maxGroups? (default 1000) caps the groups returned;
 *            storedRows?  the stored-cost aggregates already computed by the caller in its own scan
 *                         of the same trace.processed rows (storedCostColumns()), so they are not
 *                         read twice; the answer is the same as without.
 *
 *   → { total: CostDetail, groups: { group, detail }[], cost_rollup_truncated }
 *
 * A CostDetail holds `cost` (the cost object), `traces`, `cost_trace_counts`,
 * `model_tokens_truncated`, `unpriced_models_truncated` and `attribution` {coverage, values,
 * attributed_traces} (query-time cost per model). The views shape it with:
 *
 *   windowCost(detail)         window view `cost`: cost object + model_tokens_truncated,
 *                              unpriced_models_truncated, cost_trace_counts
 *   scorecardCost(detail)      agent_scorecard row fields: cost, cost_is_lower_bound, cost_source,
 *                              cost_lower_bound_reasons, model_breakdown_truncated
 *   costByModel(group, detail) base view cost_by_model entry {date, values, coverage,
 *                              attributed_traces, traces}; base `cost` entries are
 *                              { date, traces, ...detail.cost }
 *   computeModelScorecardCost(ctx, {start, endExclusive, stored?}) model_scorecard: cost object +
 *                              cost_attribution_coverage + cost_attribution_source, and
 *                              rowCost(model) → { priced, estimated_cost_usd } for each row;
 *                              `stored`: the caller's own pass answered storedCostColumns() and
 *                              storedModelCostsColumn() (read with storedModelCostsOf).
 *
 * Which traces count: trace.processed rows (FINAL) of the project whose timestamp is in
 * [start, endExclusive). Each is priced at write time (stored) or, when written without prices, at
 * query time from its generation.completed rows.
 */
import type { ClickHouseStore } from '../platform/clickhouse/clickhouse.js';
import { resolveModel } from './model-match.js';
import type { PriceCatalog } from './price-catalog.js';
import { currentCatalog } from './price-book.js';
import { DEFAULT_LIMITS, DEFAULT_TIMEOUT_SECONDS, emptyPartial, mergePartial, queryRows, runTraceCost, type CostLimits, type CostPartial } from './cost-engine.js';
import { fromText, raw, sql, type Fragment } from '../platform/clickhouse/sql/fragment.js';
import { tenantGuard } from '../platform/clickhouse/sql/tenant-guard.js';
import { storedColumns, storedModelCostsColumn, storedModelCostsOf, storedModelCostsSql, type TraceSelection } from './cost-sql.js';
import { roundUsd } from './stored-cost.js';
import { summarize, type AttributionCoverage, type CostDetail, type CostObject, type CostTraceCounts, type LowerBoundReason } from './cost-summary.js';

export { storedModelCostsColumn, storedModelCostsOf };

export type { CostDetail, CostObject, CostTraceCounts, LowerBoundReason, AttributionCoverage, CostLimits };

export interface CostContext {
  ch: ClickHouseStore;
  tenantId: string;
  projectId: string;
  /** Injected catalog; null = no prices; undefined = the process's price book. */
  catalog?: PriceCatalog | null;
  limits?: Partial<CostLimits>;
  /** Price time for prices that do not vary with time; defaults to the call time. */
  now?: Date;
  /** Per-statement time limit; defaults to 15 s (config.queryTimeoutSeconds in the service). */
  timeoutSeconds?: number;
}

export type CostGroupBy = 'none' | 'agent' | { bucket: 'hour' | 'day' | 'week' | 'month' };

export interface CostWindowOptions {
  start: Date;
  endExclusive: Date;
  groupBy?: CostGroupBy;
  agentName?: string;
  maxGroups?: number;
  /**
   * The stored-cost rows of this exact selection (same project, window, agentName and groupBy),
   * when the caller computed them in its own scan of trace.processed: one row per group with the
   * group value as `cg_0` (none when ungrouped), `traces` = count() and STORED_COLUMNS
   * (storedCostColumns). Saves the module's own pass over the trace rows; the answer is the same.
   */
  storedRows?: readonly Record<string, unknown>[];
}

/** The select list a caller adds to its trace.processed statement for `storedRows` (it carries its own values). */
export function storedCostColumns(limits?: Partial<CostLimits>): Fragment {
  return storedColumns(resolveLimits(limits).unpricedModels);
}

export interface CostWindowResult {
  total: CostDetail;
  /** Group value as ClickHouse returns it (agent name, 'YYYY-MM-DD', or 'YYYY-MM-DD hh:mm:ss' for hours), ascending. */
  groups: { group: string; detail: CostDetail }[];
  /** More groups than maxGroups: the busiest were kept; `total` still covers all. */
  cost_rollup_truncated: boolean;
}

export const DEFAULT_MAX_GROUPS = 1000;

const BUCKET_SQL = {
  hour: 'toStartOfHour(timestamp)',
  day: 'toDate(timestamp)',
  week: 'toStartOfWeek(timestamp, 0)',
  month: 'toStartOfMonth(timestamp)',
} as const;

export async function resolveCatalog(catalog: PriceCatalog | null | undefined): Promise<PriceCatalog | null> {
  return catalog === undefined ? currentCatalog() : catalog;
}

export function resolveLimits(limits?: Partial<CostLimits>): CostLimits {
  return { ...DEFAULT_LIMITS, ...limits };
}

function windowSelection(ctx: CostContext, options: CostWindowOptions): TraceSelection {
  const where = fromText(
    `timestamp >= {start:DateTime64(3, 'UTC')} AND timestamp < {end:DateTime64(3, 'UTC')}${options.agentName !== undefined ? ' AND agent_name = {agent:String}' : ''}`,
    { start: options.start, end: options.endExclusive, ...(options.agentName !== undefined ? { agent: options.agentName } : {}) },
  );
  const groupBy = options.groupBy ?? 'none';
  const groups = groupBy === 'none' ? [] : groupBy === 'agent' ? [{ alias: 'agent', sql: raw('agent_name') }] : [{ alias: 'bucket', sql: raw(BUCKET_SQL[groupBy.bucket]) }];
  return { table: ctx.ch.table('event_trace_processed'), where: sql`${tenantGuard(ctx)} AND ${where}`, groups };
}

export async function computeCostObject(ctx: CostContext, options: CostWindowOptions): Promise<CostWindowResult> {
  const catalog = await resolveCatalog(ctx.catalog);
  const limits = resolveLimits(ctx.limits);
  const selection = windowSelection(ctx, options);
  const result = await runTraceCost(
    { ch: ctx.ch, tenantId: ctx.tenantId, projectId: ctx.projectId, start: options.start, endExclusive: options.endExclusive, catalog, limits, now: ctx.now ?? new Date(), timeoutSeconds: ctx.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS },
    selection,
    options.storedRows,
  );
  const entries = [...result.groups.values()];
  const total = entries.reduce<CostPartial>((acc, e) => mergePartial(acc, e.partial), emptyPartial());
  const maxGroups = options.maxGroups ?? DEFAULT_MAX_GROUPS;
  const grouped = selection.groups.length > 0;
  const kept = grouped
    ? [...entries].sort((a, b) => b.partial.traces - a.partial.traces || String(a.values[0]).localeCompare(String(b.values[0]))).slice(0, maxGroups)
    : [];
  const truncated = grouped && entries.length > kept.length;
  const summary = { catalog, limits, modelRollupTruncated: result.modelRollupTruncated };
  return {
    total: summarize(total, { ...summary, costRollupTruncated: truncated }),
    groups: kept
      .sort((a, b) => String(a.values[0]).localeCompare(String(b.values[0])))
      .map((e) => ({ group: String(e.values[0]), detail: summarize(e.partial, summary) })),
    cost_rollup_truncated: truncated,
  };
}

/** The window view's `cost`: the cost object plus its three companions. */
export function windowCost(detail: CostDetail): CostObject & { model_tokens_truncated: boolean; unpriced_models_truncated: boolean; cost_trace_counts: CostTraceCounts } {
  return {
    ...detail.cost,
    model_tokens_truncated: detail.model_tokens_truncated,
    unpriced_models_truncated: detail.unpriced_models_truncated,
    cost_trace_counts: detail.cost_trace_counts,
  };
}

/** The cost fields of an agent_scorecard row. */
export function scorecardCost(detail: CostDetail): { cost: number | null; cost_is_lower_bound: boolean; cost_source: CostObject['cost_source']; cost_lower_bound_reasons: LowerBoundReason[]; model_breakdown_truncated: boolean } {
  return {
    cost: detail.cost.estimated_cost_usd,
    cost_is_lower_bound: detail.cost.cost_lower_bound,
    cost_source: detail.cost.cost_source,
    cost_lower_bound_reasons: detail.cost.cost_lower_bound_reasons,
    model_breakdown_truncated: detail.cost.model_breakdown_truncated,
  };
}

/** One base view cost_by_model entry (cost_by_model_source is the constant 'query_time'). */
export function costByModel(date: string, detail: CostDetail): { date: string; values: Record<string, number>; coverage: AttributionCoverage; attributed_traces: number; traces: number } {
  return { date, values: detail.attribution.values, coverage: detail.attribution.coverage, attributed_traces: detail.attribution.attributed_traces, traces: detail.traces };
}

export interface ModelScorecardCost {
  cost: CostObject;
  cost_attribution_coverage: AttributionCoverage;
  cost_attribution_source: 'query_time';
  /**
   * A model_scorecard row's cost. `priced` says whether the catalog prices the model (under every
   * provider given); the figure is the model's stored (write-time) plus query-time cost, shown when
   * coverage is 'all', i.e. when the rows add up to the overall figure (null is allowed there; a
   * stored row always carries its per-model costs, so in practice it is 'all').
   */
  rowCost(model: string, providers?: readonly string[]): { priced: boolean; estimated_cost_usd: number | null };
}

export interface ModelScorecardCostOptions {
  start: Date;
  endExclusive: Date;
  /**
   * The window's stored-cost row (storedCostColumns() and `count() AS traces`) and the stored
   * dollars per model ({model, cost} of the rows priced at write time: storedModelCostsSql's answer),
   * when the caller computed both in its own scan of the window's trace.processed rows (the view
   * does: one FINAL pass instead of three). Omitted → queried here.
   */
  stored?: { row: Record<string, unknown>; byModel: readonly { model: string; cost: number }[] };
}

export async function computeModelScorecardCost(ctx: CostContext, options: ModelScorecardCostOptions): Promise<ModelScorecardCost> {
  const catalog = await resolveCatalog(ctx.catalog);
  const window = { start: options.start, endExclusive: options.endExclusive };
  const [{ total }, storedByModel] = await Promise.all([
    computeCostObject({ ...ctx, catalog }, { ...window, storedRows: options.stored ? [options.stored.row] : undefined }),
    options.stored
      ? options.stored.byModel
      : queryRows({ ch: ctx.ch, tenantId: ctx.tenantId, projectId: ctx.projectId, timeoutSeconds: ctx.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS }, storedModelCostsSql(windowSelection(ctx, window))),
  ]);
  // Per model: the dollars stored at write time (trace.processed cost_model_costs) plus the
  // query-time attribution of the traces priced now. When those add up to the overall figure,
  // every priced dollar has a model and coverage is 'all'.
  const values = new Map<string, number>();
  for (const row of storedByModel) values.set(String(row.model), Number(row.cost));
  for (const [model, cost] of Object.entries(total.attribution.values)) values.set(model, (values.get(model) ?? 0) + cost);
  const attributed = [...values.values()].reduce((sum, v) => sum + v, 0);
  const overall = total.cost.estimated_cost_usd ?? 0;
  const addsUp = Math.abs(attributed - overall) <= 1e-9 + 1e-9 * Math.abs(overall);
  const coverage: AttributionCoverage = addsUp ? 'all' : total.attribution.coverage;
  return {
    cost: total.cost,
    cost_attribution_coverage: coverage,
    cost_attribution_source: 'query_time',
    rowCost(model, providers) {
      const hints = providers && providers.length > 0 ? providers : [''];
      const priced = catalog !== null && model.trim() !== '' && hints.every((p) => resolveModel(catalog, model, p) !== null);
      const value = values.get(model) ?? values.get(model.trim());
      return { priced, estimated_cost_usd: coverage === 'all' && priced && value !== undefined ? roundUsd(value) : null };
    },
  };
}
