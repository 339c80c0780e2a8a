import type { PriceBook } from './price-book.js';
import { parseChTime } from './cost-engine.js';
import { computeStoredTraceCost, type StoredTraceCost } from './stored-cost.js';

/**
 * The `priceTrace` hook ingestion calls when it processes a trace (src/ingest/trace-summary.ts
 * `SummarizeOptions.priceTrace`): the trace's counted usage per generation → the stored cost
 * columns of its trace.processed row. It reads the book's catalog at call time, so a refresh
 * applies to the next processed trace and a missing catalog writes `unavailable` (backfilled later).
 */
export interface TraceUsageForCost {
  /** The trace's start, DateTime64 text; prices are chosen as of this time. */
  timestamp: string;
  generations: {
    model: string;
    provider: string;
    input_tokens: number;
    output_tokens: number;
    cached_input_tokens: number;
    /** Present when the span reported cache writes (gen_ai.usage.cache_creation.input_tokens). */
    cache_write_input_tokens?: number;
  }[];
}

export function createPriceTrace(book: Pick<PriceBook, 'current'>): (usage: TraceUsageForCost) => StoredTraceCost {
  return (usage) => {
    const at = parseChTime(usage.timestamp) ?? new Date();
    return computeStoredTraceCost(
      usage.generations.map((g) => ({
        model: g.model,
        provider: g.provider,
        inputTokens: g.input_tokens,
        outputTokens: g.output_tokens,
        cachedInputTokens: g.cached_input_tokens,
        cacheWriteInputTokens: g.cache_write_input_tokens,
        timestamp: at,
      })),
      book.current(),
      at,
    );
  };
}
