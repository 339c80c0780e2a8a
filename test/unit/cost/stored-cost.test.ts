import { describe, expect, it } from 'vitest';
import { createPriceTrace } from '../../../src/cost/ingest-pricing.js';
import { PriceBook } from '../../../src/cost/price-book.js';
import { computeStoredTraceCost, UNNAMED_MODEL } from '../../../src/cost/stored-cost.js';
import { testCatalog, testProviders } from './test-catalog.js';

describe('stored trace cost', () => {
  const catalog = testCatalog();

  it('is stored when every model is priced', () => {
    const cost = computeStoredTraceCost(
      [
        { model: 'gpt-test', provider: 'openai', inputTokens: 1000, cachedInputTokens: 400, outputTokens: 500 },
        { model: 'claude-test-1', provider: 'anthropic', inputTokens: 2000, outputTokens: 100 },
      ],
      catalog,
    );
    // gpt-test 0.0054 (see price-calc test); claude 2000 × 3 + 100 × 15 = 7500 µ$
    expect(cost.estimated_cost_usd).toBeCloseTo(0.0129, 12);
    expect(cost.estimated_cost_basis).toBe('stored');
    expect(cost.cost_priced_tokens).toBe(3600);
    expect(cost.cost_unpriced_models).toEqual([]);
    expect(cost.cost_priced_at).toBe('2025-01-15 00:00:00.000');
    expect(cost.cost_model_costs).toEqual({ 'gpt-test': 0.0054, 'claude-test-1': 0.0075 });
  });

  it('is partial, naming the unpriced model, when some are priced', () => {
    const cost = computeStoredTraceCost(
      [
        { model: 'gpt-test', inputTokens: 1000, outputTokens: 0 },
        { model: 'mystery-llm', inputTokens: 5000, outputTokens: 5000 },
        { model: '', inputTokens: 10, outputTokens: 0 },
        { model: 'ghost-without-tokens', inputTokens: 0, outputTokens: 0 },
      ],
      catalog,
    );
    expect(cost.estimated_cost_basis).toBe('partial');
    expect(cost.estimated_cost_usd).toBeCloseTo(0.002, 12);
    expect(cost.cost_priced_tokens).toBe(1000);
    expect(cost.cost_unpriced_models).toEqual([UNNAMED_MODEL, 'mystery-llm'].sort());
  });

  it('is unpriced (null, never $0) when no model has a price', () => {
    const cost = computeStoredTraceCost([{ model: 'mystery-llm', inputTokens: 10, outputTokens: 10 }], catalog);
    expect(cost.estimated_cost_basis).toBe('unpriced');
    expect(cost.estimated_cost_usd).toBeNull();
    expect(cost.cost_unpriced_models).toEqual(['mystery-llm']);
  });

  it('is unavailable (unbackfilled) without a catalog', () => {
    const cost = computeStoredTraceCost([{ model: 'gpt-test', inputTokens: 10, outputTokens: 10 }], null);
    expect(cost).toEqual({
      estimated_cost_usd: null, estimated_cost_basis: 'unavailable', cost_priced_tokens: 0,
      cost_unpriced_models: [], cost_priced_at: null, cost_model_costs: {},
    });
  });

  it('a trace without token-bearing generations costs a stored $0', () => {
    const cost = computeStoredTraceCost([], catalog);
    expect(cost.estimated_cost_basis).toBe('stored');
    expect(cost.estimated_cost_usd).toBe(0);
  });
});

describe('ingestion hook', () => {
  it('prices with the book catalog current at call time', () => {
    const book = new PriceBook(null);
    const priceTrace = createPriceTrace(book);
    const usage = {
      timestamp: '2025-03-01 10:00:00.000',
      generations: [{ model: 'gpt-test', provider: 'openai', input_tokens: 1_000_000, output_tokens: 0, cached_input_tokens: 0 }],
    };
    expect(priceTrace(usage).estimated_cost_basis).toBe('unavailable');
    book.set(testCatalog());
    expect(priceTrace(usage).estimated_cost_usd).toBeCloseTo(2, 12);
  });
});

describe('price book refresh', () => {
  const okFetch = (body: unknown, status = 200) => async () => ({ ok: status < 400, status, json: async () => body });

  it('replaces the catalog on success and keeps the last good one on failure', async () => {
    const book = new PriceBook(testCatalog());
    const before = Date.now();
    const good = await book.refresh('http://prices.example/data.json', okFetch(testProviders({ gptInput: 7 })));
    expect(good.ok).toBe(true);
    const refreshed = book.current()!;
    expect(refreshed.source).toBe('refresh');
    expect(refreshed.fetchedAt.getTime()).toBeGreaterThanOrEqual(before);

    for (const bad of [okFetch({ not: 'a list' }), okFetch([], 200), okFetch(testProviders(), 500), async () => { throw new Error('offline'); }]) {
      const result = await book.refresh('http://prices.example/data.json', bad);
      expect(result.ok).toBe(false);
      expect(book.current()).toBe(refreshed);
    }
    expect(book.lastRefreshError).toBe('offline');
  });
});
