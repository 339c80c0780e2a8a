import type { PriceCatalog } from './price-catalog.js';
import type { CostLimits, CostPartial } from './cost-engine.js';
import { roundUsd } from './stored-cost.js';
import { LOWER_BOUND_REASONS, type AttributionCoverage, type CostObject, type CostSource, type CostTraceCounts, type LowerBoundReason } from './cost-shapes.js';

/**
 * Turns a CostPartial into the API's cost object and its companions. Every rule here is one row of
 * docs/cost.md's tables; keep them in step.
 */
export type { AttributionCoverage, CostObject, CostSource, CostTraceCounts, LowerBoundReason };

export interface CostAttribution {
  coverage: AttributionCoverage;
  /** Query-time cost per model name, for traces priced at query time. */
  values: Record<string, number>;
  /** Traces whose cost the values cover (the query-time priced ones). */
  attributed_traces: number;
}

/** Everything known about one figure: the cost object plus what the views add to it. */
export interface CostDetail {
  cost: CostObject;
  traces: number;
  cost_trace_counts: CostTraceCounts;
  model_tokens_truncated: boolean;
  unpriced_models_truncated: boolean;
  attribution: CostAttribution;
}

export interface SummaryContext {
  catalog: PriceCatalog | null;
  limits: CostLimits;
  /** The query-time model rollup of the whole answer hit its cap. */
  modelRollupTruncated: boolean;
  /** Set on totals whose grouped rollup dropped groups. */
  costRollupTruncated?: boolean;
}

export function traceCounts(p: CostPartial, catalog: PriceCatalog | null): CostTraceCounts {
  // Without a catalog nothing is priced at query time: every unwritten trace stays unbackfilled.
  const liveAttempted = catalog ? p.liveInCap : 0;
  return {
    stored: p.storedTraces,
    live_priced: catalog ? p.liveInCap - p.liveWithoutGenerations : 0,
    unbackfilled: catalog ? p.liveWithoutGenerations : p.unwritten,
    stored_unpriced: p.storedUnpriced,
    stored_unavailable: p.unwritten,
    breakdown_truncated: catalog ? p.unwritten - liveAttempted : 0,
  };
}

export function lowerBoundReasons(p: CostPartial, counts: CostTraceCounts, catalog: PriceCatalog | null): LowerBoundReason[] {
  const reasons = new Set<LowerBoundReason>();
  if (p.storedUnpriced > 0 || p.unpriced.size > 0) reasons.add('unpriced_models');
  if (!catalog && p.unwritten > 0) reasons.add('prices_unavailable');
  if (counts.unbackfilled > 0) reasons.add('unbackfilled_traces');
  if (counts.breakdown_truncated > 0) reasons.add('live_priced_breakdown_truncated');
  if (p.cutModelTokens > 0) reasons.add('model_rollup_truncated');
  return LOWER_BOUND_REASONS.filter((r) => reasons.has(r));
}

export function attributionCoverage(p: CostPartial, counts: CostTraceCounts): AttributionCoverage {
  if (p.traces === 0) return 'all';
  if (counts.live_priced === 0) return 'none';
  return p.storedTraces === 0 ? 'all' : 'unwritten_only';
}

function pricingFetchedAt(p: CostPartial, catalog: PriceCatalog | null): string | null {
  // The oldest snapshot any part of the figure was priced with; the current one when nothing was.
  const live = p.livePricedBuckets > 0 && catalog ? catalog.fetchedAt : null;
  const candidates = [p.storedPricedAt, live].filter((d): d is Date => d !== null);
  if (candidates.length === 0) return catalog ? catalog.fetchedAt.toISOString() : null;
  return new Date(Math.min(...candidates.map((d) => d.getTime()))).toISOString();
}

export function summarize(p: CostPartial, ctx: SummaryContext): CostDetail {
  const counts = traceCounts(p, ctx.catalog);
  const reasons = lowerBoundReasons(p, counts, ctx.catalog);
  const lowerBound = reasons.length > 0;
  const pricedTokens = Math.min(p.totalTokens, p.storedPricedTokens + p.livePricedTokens);
  const dollars = p.storedCost + p.liveCost;
  const unpriced = [...p.unpriced].sort();
  const listed = unpriced.slice(0, ctx.limits.unpricedModels);
  const values: Record<string, number> = {};
  for (const [model, cost] of [...p.attribution].sort(([a], [b]) => a.localeCompare(b))) values[model] = roundUsd(cost);
  return {
    cost: {
      // Null only when nothing could be priced; a figure that is only a floor says so.
      estimated_cost_usd: lowerBound && pricedTokens === 0 && dollars === 0 ? null : roundUsd(dollars),
      priced_token_share: p.totalTokens > 0 ? pricedTokens / p.totalTokens : 1,
      priced_tokens: pricedTokens,
      total_tokens: p.totalTokens,
      unpriced_models: listed,
      pricing_fetched_at: pricingFetchedAt(p, ctx.catalog),
      cost_source: p.unwritten === 0 ? 'stored' : p.storedTraces === 0 ? 'query_time' : 'mixed',
      cost_lower_bound: lowerBound,
      cost_lower_bound_reasons: reasons,
      model_breakdown_truncated: ctx.modelRollupTruncated,
      cost_rollup_truncated: ctx.costRollupTruncated ?? false,
    },
    traces: p.traces,
    cost_trace_counts: counts,
    model_tokens_truncated: ctx.modelRollupTruncated,
    unpriced_models_truncated: p.unpricedOverflow || unpriced.length > listed.length,
    attribution: { coverage: attributionCoverage(p, counts), values, attributed_traces: counts.live_priced },
  };
}
