import type { PriceBook } from './price-book.js';
import { parseChTime } from './cost-engine.js';
import type { PriceTrace } from '../spans/trace-pricing.js';
import { computeStoredTraceCost } from './stored-cost.js';

/**
 * The cost module's side of the pricing contract (src/spans/trace-pricing.ts): the trace's counted
 * usage per generation → the stored cost columns of its trace.processed row. It reads the book's
 * catalog at call time, so a missing catalog writes `unavailable` (backfilled later). Settling calls
 * it on the compute pool over the catalog of the round (compute-tasks.ts): a refresh applies to the
 * next settle round.
 */
export function createPriceTrace(book: Pick<PriceBook, 'current'>): PriceTrace {
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
