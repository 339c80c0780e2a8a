import type { ClickHouseStore } from '../platform/clickhouse/clickhouse.js';
import type { PriceCatalog } from './price-catalog.js';
import { bucketSpecFor, DEFAULT_TIMEOUT_SECONDS, pairKey, priceBucket, queryRows, rolledUp, runTraceCost, type CostLimits, type ResolvedPair } from './cost-engine.js';
import { generationModelsSql, generationRollupSql, type SqlFragment } from './cost-sql.js';
import { summarize } from './cost-summary.js';
import { resolveCatalog, resolveLimits } from './cost-object.js';
import { roundUsd } from './stored-cost.js';
import { rowText } from '../platform/clickhouse/row-text.js';

/**
 * The analytics query's cost measures (trace_cost on trace.processed,
 * generation_cost on generation.completed). The query compiler validates the request and prints
 * the primary table's guard + window + filters as `where`, and its groups as SQL; this module
 * prices what they select and answers one cost row per group.
 *
 * Contract with the compiler:
 * - `where` and each `groups[i].sql` (fragments with their own values) reference the primary table's columns unqualified; they
 *   are used as `FROM <table> FINAL WHERE <where>` and `SELECT <group sql> …`.
 * - Map keys are JSON.stringify(group values in order) with the values exactly as ClickHouse's
 *   JSONEachRow returns them for the same expressions under default settings ('[]' without groups).
 *   A group with no rows is absent from the map.
 * - Rows do not use the measure's alias.
 */
export interface CostQueryContext {
  ch: ClickHouseStore;
  tenantId: string;
  projectId: string;
  start: Date;
  endExclusive: Date;
  /** Injected catalog (tests); null = no prices; omitted = the process's price book. */
  catalog?: PriceCatalog | null;
  limits?: Partial<CostLimits>;
  now?: Date;
  /** Per-statement time limit; defaults to 15 s like the query itself. */
  timeoutSeconds?: number;
}

export interface CostQueryRequest {
  kind: 'trace_cost' | 'generation_cost';
  /** Qualified primary table. */
  table: string;
  where: SqlFragment;
  groups: { alias: string; sql: SqlFragment }[];
}

function costScope(ctx: CostQueryContext) {
  return { ch: ctx.ch, tenantId: ctx.tenantId, projectId: ctx.projectId, timeoutSeconds: ctx.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS };
}

export async function computeCostRows(ctx: CostQueryContext, request: CostQueryRequest): Promise<Map<string, Record<string, unknown>>> {
  const catalog = await resolveCatalog(ctx.catalog);
  const now = ctx.now ?? new Date();
  switch (request.kind) {
    case 'trace_cost':
      return traceCostRows(ctx, request, catalog, now);
    case 'generation_cost':
      return generationCostRows(ctx, request, catalog, now);
    default: {
      const never: never = request.kind;
      throw new Error(`unknown cost measure ${String(never)}`);
    }
  }
}

async function traceCostRows(ctx: CostQueryContext, request: CostQueryRequest, catalog: PriceCatalog | null, now: Date): Promise<Map<string, Record<string, unknown>>> {
  const limits = resolveLimits(ctx.limits);
  const result = await runTraceCost(
    { ch: ctx.ch, tenantId: ctx.tenantId, projectId: ctx.projectId, start: ctx.start, endExclusive: ctx.endExclusive, catalog, limits, now, timeoutSeconds: ctx.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS },
    { table: request.table, where: request.where, groups: request.groups },
  );
  const rows = new Map<string, Record<string, unknown>>();
  for (const [key, { partial }] of result.groups) {
    // A grouped query only answers groups that have rows; the ungrouped one always answers.
    if (partial.traces === 0 && request.groups.length > 0) continue;
    const { cost, attribution } = summarize(partial, { catalog, limits, modelRollupTruncated: result.modelRollupTruncated });
    rows.set(key, {
      estimated_cost_usd: cost.estimated_cost_usd,
      priced_tokens: cost.priced_tokens,
      total_tokens: cost.total_tokens,
      priced_token_share: cost.priced_token_share,
      unpriced_models: cost.unpriced_models,
      pricing_fetched_at: cost.pricing_fetched_at,
      cost_source: cost.cost_source,
      cost_lower_bound: cost.cost_lower_bound,
      cost_lower_bound_reasons: cost.cost_lower_bound_reasons,
      model_breakdown_truncated: cost.model_breakdown_truncated,
      attribution: { coverage: attribution.coverage, values: attribution.values },
    });
  }
  return rows;
}

/**
 * generation_cost: per group (which always includes the model), the group's calls priced at their
 * model's list price. `priced` is true when every call of the group has a price; the figure is
 * null when none has (an unknown model is never $0).
 */
async function generationCostRows(ctx: CostQueryContext, request: CostQueryRequest, catalog: PriceCatalog | null, now: Date): Promise<Map<string, Record<string, unknown>>> {
  const pairs = (await queryRows(costScope(ctx), generationModelsSql(request.table, request.where))).map((r) => ({
    model: rowText(r.model),
    provider: rowText(r.provider),
  }));
  const { spec, resolved } = catalog ? bucketSpecFor(catalog, pairs) : { spec: { providers: [], models: [], breaks: [], granularity: [] }, resolved: new Map<string, ResolvedPair>() };
  const groups = new Map<string, { cost: number; priced: number; unpriced: number }>();
  for (const row of await queryRows(costScope(ctx), generationRollupSql(request.table, request.where, request.groups, spec))) {
    const key = JSON.stringify(request.groups.map((_, i) => row[`cg_${i}`]));
    let group = groups.get(key);
    if (!group) groups.set(key, (group = { cost: 0, priced: 0, unpriced: 0 }));
    const r = rolledUp(row, 'cost_model');
    const cost = priceBucket(resolved.get(pairKey(r.model, rowText(row.cost_provider))), r, now);
    if (cost === null) group.unpriced += 1;
    else {
      group.cost += cost;
      group.priced += 1;
    }
  }
  const rows = new Map<string, Record<string, unknown>>();
  for (const [key, g] of groups) {
    rows.set(key, { estimated_cost_usd: g.priced > 0 ? roundUsd(g.cost) : null, priced: g.unpriced === 0 });
  }
  return rows;
}
