/**
 * The pricing contract between ingestion and the cost module: when the settler processes a trace,
 * summarizeTrace hands its counted usage to a PriceTrace and writes the returned cost on the
 * trace.processed row (clickhouse/002_events.sql, estimated_cost_usd … cost_model_costs).
 * Ingestion owns the call, the cost module (src/cost/ingest-pricing.ts) the prices; this
 * file sits below both so neither imports the other.
 */

/** What pricing reads of one generation. */
export interface GenerationTokens {
  model: string;
  provider: string;
  input_tokens: number;
  output_tokens: number;
  cached_input_tokens: number;
  /** Present when the span reported cache writes (gen_ai.usage.cache_creation.input_tokens). */
  cache_write_input_tokens?: number;
}

export interface GenerationUsage extends GenerationTokens {
  span_id: string;
}

/** What a PriceTrace reads: the trace's time and its generations' tokens. */
export interface UsageToPrice {
  /** The trace's start, DateTime64 text: prices are chosen as of this time. */
  timestamp: string;
  generations: readonly GenerationTokens[];
}

/** What the cost module prices: the leaf-most usage of a trace (never a parent's repeated sum). */
export interface TraceUsage extends UsageToPrice {
  tenant_id: string;
  project_id: string;
  trace_id: string;
  generations: GenerationUsage[];
}

/** How a row's cost was decided; src/cost/stored-cost.ts says what each basis means. */
export type CostBasis = 'stored' | 'partial' | 'unpriced' | 'unavailable';

export interface TraceCost {
  estimated_cost_usd: number | null;
  estimated_cost_basis: CostBasis;
  /** Input + output tokens of priced generations (the trace's total_tokens counts every one). */
  cost_priced_tokens: number;
  cost_unpriced_models: string[];
  /** fetchedAt of the catalog that priced the row, as ClickHouse DateTime64 text; null when unavailable. */
  cost_priced_at: string | null;
  /** USD per model name as reported, for priced models. */
  cost_model_costs: Record<string, number>;
}

export type PriceTrace = (usage: UsageToPrice) => TraceCost;

/**
 * How the settler reaches the cost module's prices (its PriceBook is one): the catalog to price
 * with now, an immutable value of plain data (a new object when prices change; null: no catalog, costs `unavailable`).
 * Pricing runs on the compute pool with the cost module's PriceTrace over that catalog
 * (src/app/compute-tasks.ts), not on the event loop, where it was ~10 ms per 1000 spans.
 */
export interface TracePricing {
  current(): object | null;
}

/** The cost of a trace nothing priced: no catalog, or no cost module. The backfill prices it later. */
export const UNPRICED: TraceCost = {
  estimated_cost_usd: null,
  estimated_cost_basis: 'unavailable',
  cost_priced_tokens: 0,
  cost_unpriced_models: [],
  cost_priced_at: null,
  cost_model_costs: {},
};
