import type { ClickHouseStore } from '../platform/clickhouse/clickhouse.js';
import { resolveModel, type ResolvedModel } from './model-match.js';
import { priceUsage, tierBreaks, tierRepresentative, timeGranularity } from './price-calc.js';
import type { PriceCatalog } from './price-catalog.js';
import { UNNAMED_MODEL } from './stored-cost.js';
import {
  liveCountSql, liveModelsSql, liveRollupSql, storedSql,
  type BucketSpec, type GenerationScope, type SqlFragment, type TraceSelection,
} from './cost-sql.js';
import { rowText } from '../platform/clickhouse/row-text.js';

/**
 * Runs the cost SQL (cost-sql.ts) for a trace selection and folds the rows into one mergeable
 * `CostPartial` per group. Stored figures are summed from trace.processed; traces whose cost was
 * not decided at write time are priced now from their generation rows (docs/cost.md).
 */
export interface CostLimits {
  /** Traces priced at query time per answer; beyond it: live_priced_breakdown_truncated. */
  liveTraces: number;
  /** (model, provider) pairs in the query-time rollup; beyond it: model_rollup_truncated. */
  modelRollup: number;
  /** Names listed in unpriced_models; beyond it: unpriced_models_truncated. */
  unpricedModels: number;
}

export const DEFAULT_LIMITS: CostLimits = { liveTraces: 100_000, modelRollup: 200, unpricedModels: 50 };

/** Generations of a trace are looked for this far around the window (a trace starts in it and may run on). */
export const GENERATION_MARGIN_MS = 24 * 60 * 60 * 1000;

export interface CostPartial {
  traces: number;
  /** Traces whose cost was decided at write time (basis stored, partial, unpriced). */
  storedTraces: number;
  /** Of those, traces with at least one unpriced model (partial, unpriced). */
  storedUnpriced: number;
  /** Traces written without prices (unavailable, or ''): to be priced at query time. */
  unwritten: number;
  /** Unwritten traces within the live cap (only counted when a catalog is present). */
  liveInCap: number;
  /** Unwritten traces within the cap that have tokens but no generation row to price. */
  liveWithoutGenerations: number;
  storedCost: number;
  storedPricedTokens: number;
  totalTokens: number;
  storedPricedAt: Date | null;
  liveCost: number;
  livePricedTokens: number;
  /** Rollup buckets priced at query time (0: the catalog priced nothing here). */
  livePricedBuckets: number;
  unpriced: Set<string>;
  /** The stored unpriced-name list hit its cap in this group. */
  unpricedOverflow: boolean;
  /** Query-time cost per model name as reported. */
  attribution: Map<string, number>;
  /** Tokens of models left out of the query-time rollup by its cap. */
  cutModelTokens: number;
}

export function emptyPartial(): CostPartial {
  return {
    traces: 0, storedTraces: 0, storedUnpriced: 0, unwritten: 0, liveInCap: 0, liveWithoutGenerations: 0,
    storedCost: 0, storedPricedTokens: 0, totalTokens: 0, storedPricedAt: null,
    liveCost: 0, livePricedTokens: 0, livePricedBuckets: 0,
    unpriced: new Set(), unpricedOverflow: false, attribution: new Map(), cutModelTokens: 0,
  };
}

function minDate(a: Date | null, b: Date | null): Date | null {
  if (!a) return b;
  if (!b) return a;
  return a <= b ? a : b;
}

/** Adds `from` into `into` (for totals over groups). */
export function mergePartial(into: CostPartial, from: CostPartial): CostPartial {
  const sums = [
    'traces', 'storedTraces', 'storedUnpriced', 'unwritten', 'liveInCap', 'liveWithoutGenerations', 'storedCost',
    'storedPricedTokens', 'totalTokens', 'liveCost', 'livePricedTokens', 'livePricedBuckets', 'cutModelTokens',
  ] as const;
  for (const key of sums) into[key] += from[key];
  into.storedPricedAt = minDate(into.storedPricedAt, from.storedPricedAt);
  for (const name of from.unpriced) into.unpriced.add(name);
  into.unpricedOverflow ||= from.unpricedOverflow;
  for (const [model, cost] of from.attribution) into.attribution.set(model, (into.attribution.get(model) ?? 0) + cost);
  return into;
}

export interface EngineScope {
  ch: ClickHouseStore;
  tenantId: string;
  projectId: string;
  start: Date;
  endExclusive: Date;
  catalog: PriceCatalog | null;
  limits: CostLimits;
  /** Price time for models whose prices do not depend on time. */
  now: Date;
  /** Per-statement time limit (seconds). */
  timeoutSeconds: number;
}

export interface EngineResult {
  /** Per group: its values (as ClickHouse returned them) and its partial; key = JSON.stringify(values). */
  groups: Map<string, { values: unknown[]; partial: CostPartial }>;
  /** The query-time model rollup hit its cap somewhere in the selection. */
  modelRollupTruncated: boolean;
  catalog: PriceCatalog | null;
}

/** Analytics reads stop after this long, like the query DSL (15 s). */
export const DEFAULT_TIMEOUT_SECONDS = 15;

/** Runs one cost read on the analytics lane: guarded by the tenant, read-only, time-limited. */
export function queryRows(
  scope: { ch: ClickHouseStore; tenantId: string; projectId: string; timeoutSeconds: number },
  fragment: SqlFragment,
): Promise<Record<string, unknown>[]> {
  return scope.ch.read(fragment, { lane: 'analytics', scope: { tenantId: scope.tenantId, projectId: scope.projectId }, timeoutSeconds: scope.timeoutSeconds });
}

function groupValues(row: Record<string, unknown>, count: number): unknown[] {
  return Array.from({ length: count }, (_, i) => row[`cg_${i}`]);
}

/** ClickHouse DateTime64 text (UTC) → Date. */
export function parseChTime(value: unknown): Date | null {
  if (typeof value !== 'string' || !value) return null;
  // ClickHouse text ('YYYY-MM-DD hh:mm:ss.sss', UTC) or already ISO 8601.
  const date = new Date(value.includes('T') ? value : `${value.replace(' ', 'T')}Z`);
  return Number.isNaN(date.getTime()) ? null : date;
}

export interface ResolvedPair {
  resolved: ResolvedModel | null;
  breaks: number[];
}

/** Resolves (model, provider) pairs and lists the ones that need tier / time buckets. */
export function bucketSpecFor(catalog: PriceCatalog, pairs: { model: string; provider: string }[]): { spec: BucketSpec; resolved: Map<string, ResolvedPair> } {
  const spec: BucketSpec = { providers: [], models: [], breaks: [], granularity: [] };
  const resolved = new Map<string, ResolvedPair>();
  for (const { model, provider } of pairs) {
    const r = model.trim() ? resolveModel(catalog, model, provider) : null;
    const breaks = r ? tierBreaks(r) : [];
    const granularity = r ? timeGranularity(r) : 'none';
    resolved.set(pairKey(model, provider), { resolved: r, breaks });
    if (breaks.length > 0 || granularity !== 'none') {
      spec.providers.push(provider);
      spec.models.push(model);
      spec.breaks.push(breaks);
      spec.granularity.push(granularity === 'minute' ? 2 : granularity === 'day' ? 1 : 0);
    }
  }
  return { spec, resolved };
}

export function pairKey(model: string, provider: string): string {
  return JSON.stringify([model, provider]);
}

export interface RolledUpRow {
  model: string;
  input: number;
  cached: number;
  /** Cache-write tokens (0 on rows written before the column existed). */
  cacheWrite: number;
  output: number;
  tokens: number;
  calls: number;
  tier: number;
  atSeconds: number;
}

export function rolledUp(row: Record<string, unknown>, modelColumn = 'model'): RolledUpRow {
  return {
    model: rowText(row[modelColumn]),
    input: Number(row.input), cached: Number(row.cached), cacheWrite: Number(row.cache_write ?? 0), output: Number(row.output),
    tokens: Number(row.tokens), calls: Number(row.calls), tier: Number(row.tier), atSeconds: Number(row.at_s),
  };
}

/** Prices one rollup bucket; null when its model has no price. */
export function priceBucket(pair: ResolvedPair | undefined, row: RolledUpRow, now: Date): number | null {
  if (!pair?.resolved) return null;
  const usage = { inputTokens: row.input, cachedInputTokens: row.cached, cacheWriteInputTokens: row.cacheWrite, outputTokens: row.output };
  return priceUsage(pair.resolved, usage, {
    at: row.atSeconds > 0 ? new Date(row.atSeconds * 1000) : now,
    tierInputTokens: tierRepresentative(pair.breaks, row.tier),
    requests: Math.max(1, row.calls),
  });
}

/**
 * `storedRows`: the rows storedSql would answer for `sel` (cg_i group columns, traces and
 * STORED_COLUMNS), computed by the caller in its own pass over the same rows; omitted → queried here.
 */
export async function runTraceCost(scope: EngineScope, sel: TraceSelection, storedRows?: readonly Record<string, unknown>[]): Promise<EngineResult> {
  const groups = new Map<string, { values: unknown[]; partial: CostPartial }>();
  const at = (row: Record<string, unknown>) => {
    const values = groupValues(row, sel.groups.length);
    const key = JSON.stringify(values);
    let entry = groups.get(key);
    if (!entry) groups.set(key, (entry = { values, partial: emptyPartial() }));
    return entry.partial;
  };

  let unwritten = 0;
  for (const row of storedRows ?? (await queryRows(scope, storedSql(sel, scope.limits.unpricedModels)))) {
    const p = at(row);
    p.traces = Number(row.traces);
    p.storedTraces = Number(row.stored_traces);
    p.storedUnpriced = Number(row.stored_unpriced);
    p.unwritten = p.traces - p.storedTraces;
    p.storedCost = Number(row.stored_cost);
    p.storedPricedTokens = Number(row.stored_priced_tokens);
    p.totalTokens = Number(row.window_tokens);
    p.storedPricedAt = parseChTime(row.stored_priced_at);
    const names = (row.stored_unpriced_models as string[]) ?? [];
    p.unpricedOverflow = names.length > scope.limits.unpricedModels;
    for (const name of names.slice(0, scope.limits.unpricedModels)) p.unpriced.add(name || UNNAMED_MODEL);
    unwritten += p.unwritten;
  }

  let modelRollupTruncated = false;
  if (scope.catalog && unwritten > 0) {
    const gen: GenerationScope = {
      table: scope.ch.table('event_generation_completed'),
      tenantId: scope.tenantId,
      projectId: scope.projectId,
      from: new Date(scope.start.getTime() - GENERATION_MARGIN_MS),
      to: new Date(scope.endExclusive.getTime() + GENERATION_MARGIN_MS),
    };
    const cap = scope.limits.liveTraces;
    for (const row of await queryRows(scope, liveCountSql(sel, gen, cap))) {
      const p = at(row);
      p.liveInCap = Number(row.in_cap);
      p.liveWithoutGenerations = Number(row.without_generations);
    }
    const pairs = (await queryRows(scope, liveModelsSql(sel, gen, cap)))
      .map((r) => ({ model: rowText(r.model), provider: rowText(r.provider), volume: Number(r.tokens) + Number(r.cached) + Number(r.cache_write) }))
      .filter((r) => r.volume > 0);
    const kept = pairs.slice(0, scope.limits.modelRollup);
    modelRollupTruncated = pairs.length > kept.length;
    const { spec, resolved } = bucketSpecFor(scope.catalog, kept);
    for (const row of await queryRows(scope, liveRollupSql(sel, gen, cap, spec))) {
      const p = at(row);
      const r = rolledUp(row);
      const key = pairKey(r.model, rowText(row.provider));
      if (r.tokens + r.cached + r.cacheWrite === 0) continue;
      if (!resolved.has(key)) {
        p.cutModelTokens += r.tokens;
        continue;
      }
      const cost = priceBucket(resolved.get(key), r, scope.now);
      if (cost === null) {
        p.unpriced.add(r.model.trim() || UNNAMED_MODEL);
        continue;
      }
      p.liveCost += cost;
      p.livePricedTokens += r.tokens;
      p.livePricedBuckets += 1;
      p.attribution.set(r.model, (p.attribution.get(r.model) ?? 0) + cost);
    }
  }
  return { groups, modelRollupTruncated, catalog: scope.catalog };
}
