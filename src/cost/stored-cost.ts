import { resolveModel } from './model-match.js';
import { priceUsage, type TokenUsage } from './price-calc.js';
import type { PriceCatalog } from './price-catalog.js';
import { UNPRICED, type CostBasis, type TraceCost } from '../spans/trace-pricing.js';
import { dateTime64 } from '../platform/clickhouse/clickhouse-time.js';

/**
 * The cost written on a `trace.processed` row (clickhouse/002_events.sql, columns
 * estimated_cost_usd … cost_model_costs) when ingestion processes a trace, and again when the
 * backfill job prices a row written without prices. A backfilled row keeps
 * the price as of the backfill run, because nothing re-prices a row once its basis says it was priced.
 *
 * estimated_cost_basis (docs/cost.md):
 * - `stored`      every generation with tokens was priced at write time.
 * - `partial`     some were priced, some models had no price (cost_unpriced_models names them).
 * - `unpriced`    a catalog was there but none of the trace's models had a price.
 * - `unavailable` no catalog at write time: the row is "unbackfilled"; analytics prices it at query
 *                 time from its generation rows until the backfill job writes it as stored.
 * A row with basis '' (written before cost existed) is read as `unavailable`.
 */

/** Bases whose cost was decided when the row was written (or backfilled). */
export const WRITTEN_BASES: readonly CostBasis[] = ['stored', 'partial', 'unpriced'];
/** Bases that carry a stored dollar figure. */
export const PRICED_BASES: readonly CostBasis[] = ['stored', 'partial'];

/** A model with tokens but no name is still named in unpriced_models, under this label. */
export const UNNAMED_MODEL = '(unnamed model)';

export interface GenerationForCost extends TokenUsage {
  model: string;
  /** gen_ai.provider.name / gen_ai.system as stored on the generation ('' when absent). */
  provider?: string;
  /** When the call happened (date and time-of-day price variants); defaults to `now`. */
  timestamp?: Date;
}

/** Rounds away float noise (0.1 + 0.2) below a millionth of a cent. */
export function roundUsd(value: number): number {
  return Math.round(value * 1e10) / 1e10;
}

/**
 * Prices one trace's generations with `catalog` (null: no catalog → `unavailable`).
 * Generations without tokens cost nothing whatever their model and are not named as unpriced.
 */
export function computeStoredTraceCost(generations: readonly GenerationForCost[], catalog: PriceCatalog | null, now: Date = new Date()): TraceCost {
  // Fresh containers: the caller owns what it gets back.
  if (!catalog) return { ...UNPRICED, cost_unpriced_models: [], cost_model_costs: {} };
  let total = 0;
  let pricedTokens = 0;
  let pricedCount = 0;
  let tokenBearing = 0;
  const unpriced = new Set<string>();
  const perModel: Record<string, number> = {};
  for (const generation of generations) {
    const tokens = Math.max(0, generation.inputTokens || 0) + Math.max(0, generation.outputTokens || 0);
    const cacheTokens = Math.max(0, generation.cachedInputTokens || 0) + Math.max(0, generation.cacheWriteInputTokens || 0);
    if (tokens + cacheTokens === 0) continue;
    tokenBearing += 1;
    const name = generation.model.trim();
    const resolved = name ? resolveModel(catalog, name, generation.provider) : null;
    const cost = resolved ? priceUsage(resolved, generation, { at: generation.timestamp ?? now }) : null;
    if (cost === null) {
      unpriced.add(name || UNNAMED_MODEL);
      continue;
    }
    total += cost;
    pricedTokens += tokens;
    pricedCount += 1;
    perModel[name] = roundUsd((perModel[name] ?? 0) + cost);
  }
  const basis: CostBasis = unpriced.size === 0 ? 'stored' : pricedCount === 0 && tokenBearing > 0 ? 'unpriced' : 'partial';
  return {
    estimated_cost_usd: basis === 'unpriced' ? null : roundUsd(total),
    estimated_cost_basis: basis,
    cost_priced_tokens: pricedTokens,
    cost_unpriced_models: [...unpriced].sort(),
    cost_priced_at: dateTime64(catalog.fetchedAt),
    cost_model_costs: perModel,
  };
}
