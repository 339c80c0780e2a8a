import type { ModelInfo, ModelPrice } from '@pydantic/genai-prices';

/**
 * The package's own arithmetic for one model's flat prices, kept so that a call repeats it without
 * the package's per-call work. `calcPrice` re-validates the whole price set on every call (its
 * ancestor and join checks over the unit registry, then the usage decomposition): ~10 µs per
 * generation, more than half of settling a trace. What it computes for the usage Lookout reports
 * (input, output, cache-read and cache-write tokens, whole numbers) is, term by term in the order
 * of the price object's keys:
 *
 *   price × units / per,   summed into input, output and other directions, total = in + out + other
 *
 * where the units of `input_mtok` are the prompt less the cache parts that have a price of their
 * own (a cache part without one is billed as input), and every other unit Lookout never reports
 * (audio, images, searches…) is a leaf of 0. The operations and their order are the package's, so
 * the sum is the same float, not merely close; test/unit/cost/price-plan.test.ts checks it against
 * `calcPrice` for every model of the bundled catalog, usage shape and tier.
 *
 * A plan is only used where that holds by construction and has been seen to hold: flat prices (no
 * date or time-of-day variants), whole token counts, and a first call (priced by the package) that
 * the plan reproduced exactly. Anything else keeps calling the package.
 */

/** Token counts as price-calc.ts normalizes them (its NormalizedUsage): input is the whole prompt. */
export interface PlanUsage {
  input: number;
  cacheRead: number;
  cacheWrite: number;
  output: number;
}

type Direction = 'input' | 'output' | 'other';
type Units = 'input' | 'cacheRead' | 'cacheWrite' | 'output' | 'request';

interface Term {
  price: number;
  units: Units;
  per: number;
  direction: Direction;
}

export interface PricePlan {
  terms: Term[];
  /** The prompt's cache parts that are priced apart (subtracted from input_mtok's units). */
  subtractCacheRead: boolean;
  subtractCacheWrite: boolean;
  /** requests_kcount, for the caller's per-request extra (the package's model_price.requests_kcount). */
  requestsKcount: number | undefined;
}

/** The package's units (its data's `per` and `direction`) for the price keys whose usage Lookout reports. */
const UNITS: Readonly<Record<string, { units: Units; per: number; direction: Direction }>> = {
  input_mtok: { units: 'input', per: 1e6, direction: 'input' },
  cache_read_mtok: { units: 'cacheRead', per: 1e6, direction: 'input' },
  cache_write_mtok: { units: 'cacheWrite', per: 1e6, direction: 'input' },
  output_mtok: { units: 'output', per: 1e6, direction: 'output' },
  requests_kcount: { units: 'request', per: 1000, direction: 'other' },
};

/** A plan for flattened prices (numbers only); null when a price is not a finite non-negative number. */
export function pricePlan(flat: ModelPrice): PricePlan | null {
  const terms: Term[] = [];
  for (const [key, price] of Object.entries(flat)) {
    if (price === undefined) continue;
    if (typeof price !== 'number' || !Number.isFinite(price) || price < 0) return null;
    const unit = UNITS[key];
    // Any other key prices a usage Lookout never reports: price × 0 adds nothing to its sum.
    if (unit) terms.push({ price, ...unit });
  }
  return {
    terms,
    subtractCacheRead: flat.cache_read_mtok !== undefined,
    subtractCacheWrite: flat.cache_write_mtok !== undefined,
    requestsKcount: typeof flat.requests_kcount === 'number' ? flat.requests_kcount : undefined,
  };
}

/** Whether a usage is one a plan prices as the package would: whole numbers, sums exact in a double. */
export function plannable(u: PlanUsage): boolean {
  return Number.isSafeInteger(u.input) && Number.isSafeInteger(u.cacheRead) && Number.isSafeInteger(u.cacheWrite)
    && Number.isSafeInteger(u.output) && Number.isSafeInteger(u.input + u.cacheRead + u.cacheWrite + u.output);
}

/** The package's total_price for `u` under `plan`. */
export function planTotal(plan: PricePlan, u: PlanUsage): number {
  const inputUnits = u.input - ((plan.subtractCacheRead ? u.cacheRead : 0) + (plan.subtractCacheWrite ? u.cacheWrite : 0));
  let input = 0;
  let output = 0;
  let other = 0;
  for (const term of plan.terms) {
    const units = term.units === 'input' ? inputUnits
      : term.units === 'cacheRead' ? u.cacheRead
      : term.units === 'cacheWrite' ? u.cacheWrite
      : term.units === 'output' ? u.output
      : 1;
    const value = (term.price * units) / term.per;
    if (term.direction === 'input') input += value;
    else if (term.direction === 'output') output += value;
    else other += value;
  }
  return input + output + other;
}

/**
 * Plans per catalog model and tier bucket: a plan, or null once the package's answer and the plan's
 * differed (or the package could not price it) — that model and tier then stay with the package.
 * Keyed by the catalog's own model object, so a new catalog version starts afresh.
 */
const plans = new WeakMap<ModelInfo, Map<number, PricePlan | null>>();

export function cachedPlan(model: ModelInfo, bucket: number): PricePlan | null | undefined {
  return plans.get(model)?.get(bucket);
}

export function rememberPlan(model: ModelInfo, bucket: number, plan: PricePlan | null): void {
  let byBucket = plans.get(model);
  if (!byBucket) plans.set(model, (byBucket = new Map<number, PricePlan | null>()));
  byBucket.set(bucket, plan);
}
