import { calcPrice, type ConditionalPrice, type ModelPrice, type Provider } from '@pydantic/genai-prices';
import type { ResolvedModel } from './model-match.js';
import { cachedPlan, plannable, planTotal, pricePlan, rememberPlan } from './price-plan.js';

/**
 * Cost of observed tokens at catalog list prices (tokens × list price, never an
 * invoice). The arithmetic — units per million, cache-read and cache-write partitions of the input,
 * start-date and time-of-day price variants — is the package's own `calcPrice`; this module adds
 * the two things Lookout needs on top:
 *
 * - Aggregates. Query-time pricing sums many calls of one model in ClickHouse. A tiered price
 *   (e.g. Gemini 1.5 Pro above 128k prompt tokens) depends on each call's prompt size, and a
 *   per-request price on the call count, so a sum cannot be priced as one big call. Callers
 *   therefore group calls by tier bucket (`tierBreaks`) and by price-variant time (`timeGranularity`)
 *   and pass the bucket's representative prompt size (`tierInputTokens`) and its call count
 *   (`requests`). For a single call both are simply that call's values.
 * - Token conventions. `inputTokens` is the whole prompt including cached tokens (the OpenTelemetry
 *   GenAI convention and OpenAI's usage). Anthropic reports the uncached part only, which shows as
 *   cached + cache-write > input: the parts are then added to it.
 */
export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
  /** Prompt tokens read from the provider's cache (gen_ai.usage.cache_read.input_tokens). */
  cachedInputTokens?: number;
  /** Prompt tokens written to the cache, where a usage attribute reports them (gen_ai.usage.cache_creation.input_tokens). */
  cacheWriteInputTokens?: number;
}

export interface NormalizedUsage {
  /** Whole prompt, cached and cache-write parts included. */
  input: number;
  cacheRead: number;
  cacheWrite: number;
  output: number;
}

function count(value: number | undefined): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0;
}

export function normalizeUsage(usage: TokenUsage): NormalizedUsage {
  const input = count(usage.inputTokens);
  const cacheRead = count(usage.cachedInputTokens);
  const cacheWrite = count(usage.cacheWriteInputTokens);
  const output = count(usage.outputTokens);
  // Cache parts larger than the reported prompt: the prompt was reported without them (Anthropic).
  return { input: cacheRead + cacheWrite > input ? input + cacheRead + cacheWrite : input, cacheRead, cacheWrite, output };
}

function priceVariants(prices: ModelPrice | ConditionalPrice[]): ModelPrice[] {
  return Array.isArray(prices) ? prices.map((v) => v.prices) : [prices];
}

/** Sorted prompt sizes where some price of the model changes tier (empty for flat prices). */
export function tierBreaks(resolved: ResolvedModel): number[] {
  const starts = new Set<number>();
  for (const variant of priceVariants(resolved.model.prices)) {
    for (const price of Object.values(variant)) {
      if (price && typeof price === 'object') for (const tier of price.tiers) starts.add(tier.start);
    }
  }
  return [...starts].sort((a, b) => a - b);
}

/**
 * How finely call times must be kept apart to choose the right price variant: 'minute' when a
 * variant applies by time of day (off-peak prices), 'day' when variants start on dates, else 'none'.
 */
export function timeGranularity(resolved: ResolvedModel): 'none' | 'day' | 'minute' {
  const prices = resolved.model.prices;
  if (!Array.isArray(prices)) return 'none';
  return prices.some((v) => v.constraint && (v.constraint.type === 'time_of_date' || 'start_time' in v.constraint)) ? 'minute' : 'day';
}

/** The representative prompt size of tier bucket `index` (the number of breaks a call's prompt exceeds). */
export function tierRepresentative(breaks: readonly number[], index: number): number {
  return index <= 0 ? 0 : breaks[Math.min(index, breaks.length) - 1] + 1;
}

function flatten(prices: ModelPrice, tierInput: number): ModelPrice {
  const flat: ModelPrice = {};
  for (const [key, price] of Object.entries(prices)) {
    if (price === undefined) continue;
    if (typeof price === 'number') {
      flat[key] = price;
      continue;
    }
    // Same rule as the package: the last tier whose start the prompt exceeds applies to all tokens.
    let value = price.base;
    for (const tier of [...price.tiers].sort((a, b) => a.start - b.start)) if (tierInput > tier.start) value = tier.price;
    flat[key] = value;
  }
  return flat;
}

export interface PriceOptions {
  /** When the calls happened: selects date / time-of-day price variants. */
  at: Date;
  /** Prompt size that decides the tier; defaults to the usage's own prompt (a single call). */
  tierInputTokens?: number;
  /** Number of calls the usage sums (per-request prices); defaults to 1. */
  requests?: number;
}

/** The number of tier breaks a prompt of `tierInput` exceeds: the flattened prices depend on nothing else of it. */
const breaksByModel = new WeakMap<ResolvedModel['model'], number[]>();
function tierBucket(resolved: ResolvedModel, tierInput: number): number {
  let breaks = breaksByModel.get(resolved.model);
  if (!breaks) breaksByModel.set(resolved.model, (breaks = tierBreaks(resolved)));
  let bucket = 0;
  while (bucket < breaks.length && tierInput > breaks[bucket]) bucket++;
  return bucket;
}

/** The package charges a per-request price once per call; an aggregate stands for `requests` calls. */
function withRequests(totalPrice: number, perThousandRequests: unknown, requests: number): number | null {
  const extraRequests = typeof perThousandRequests === 'number' ? (perThousandRequests * (requests - 1)) / 1000 : 0;
  const total = totalPrice + extraRequests;
  return Number.isFinite(total) ? total : null;
}

/**
 * USD cost of `usage` for a resolved model, or null when the catalog's entry cannot price it
 * (malformed data makes the package throw: treated as unpriced, never as $0).
 *
 * Flat-priced models with whole token counts are priced by a plan of the package's own arithmetic
 * (price-plan.ts), built on the first call of each model and tier and kept only if it gave the
 * package's answer to the float; everything else calls the package each time.
 */
export function priceUsage(resolved: ResolvedModel, usage: TokenUsage, options: PriceOptions): number | null {
  const u = normalizeUsage(usage);
  const tierInput = options.tierInputTokens ?? u.input;
  const requests = options.requests ?? 1;
  const model = resolved.model;
  if (Array.isArray(model.prices) || !plannable(u) || !Number.isSafeInteger(requests)) return priceByPackage(resolved, u, tierInput, requests, options.at);
  const bucket = tierBucket(resolved, tierInput);
  const plan = cachedPlan(model, bucket);
  if (plan) return withRequests(planTotal(plan, u), plan.requestsKcount, requests);
  const priced = priceByPackage(resolved, u, tierInput, requests, options.at);
  if (plan === undefined) {
    const candidate = pricePlan(flatten(model.prices, tierInput));
    const agrees = candidate !== null && priced !== null && Object.is(withRequests(planTotal(candidate, u), candidate.requestsKcount, requests), priced);
    rememberPlan(model, bucket, agrees ? candidate : null);
  }
  return priced;
}

/** priceUsage by the package's `calcPrice` on every call (the reference the plans are checked against). */
export function priceUsageByPackage(resolved: ResolvedModel, usage: TokenUsage, options: PriceOptions): number | null {
  const u = normalizeUsage(usage);
  return priceByPackage(resolved, u, options.tierInputTokens ?? u.input, options.requests ?? 1, options.at);
}

function priceByPackage(resolved: ResolvedModel, u: NormalizedUsage, tierInput: number, requests: number, at: Date): number | null {
  const model = resolved.model;
  const flatPrices = Array.isArray(model.prices)
    ? model.prices.map((v) => ({ ...v, prices: flatten(v.prices, tierInput) }))
    : flatten(model.prices, tierInput);
  const provider: Provider = {
    id: resolved.provider.id,
    name: resolved.provider.name,
    api_pattern: resolved.provider.api_pattern,
    models: [{ ...model, match: { equals: resolved.matchedName }, prices: flatPrices }],
  };
  const packageUsage: Record<string, number> = { input_tokens: u.input, output_tokens: u.output };
  if (u.cacheRead > 0) packageUsage.cache_read_tokens = u.cacheRead;
  if (u.cacheWrite > 0) packageUsage.cache_write_tokens = u.cacheWrite;
  try {
    const result = calcPrice(packageUsage, resolved.matchedName, { provider, timestamp: at });
    if (!result) return null;
    return withRequests(result.total_price, result.model_price.requests_kcount, requests);
  } catch {
    return null;
  }
}
