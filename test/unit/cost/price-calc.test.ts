import { beforeAll, describe, expect, it } from 'vitest';
import { resolveModel } from '../../../src/cost/model-match.js';
import { normalizeUsage, priceUsage, tierBreaks, tierRepresentative, timeGranularity } from '../../../src/cost/price-calc.js';
import { loadBundledCatalog, type PriceCatalog } from '../../../src/cost/price-catalog.js';
import { testCatalog } from './test-catalog.js';

const at = new Date('2025-06-01T12:00:00Z');

function price(catalog: PriceCatalog, model: string, usage: Parameters<typeof priceUsage>[1], options: Partial<Parameters<typeof priceUsage>[2]> = {}) {
  const resolved = resolveModel(catalog, model);
  if (!resolved) throw new Error(`${model} did not resolve`);
  return priceUsage(resolved, usage, { at, ...options });
}

describe('hand-computed costs on the test catalog', () => {
  const catalog = testCatalog();

  it('prices input, cached input and output separately', () => {
    // 600 uncached × $2/M + 400 cached × $0.5/M + 500 output × $8/M = 0.0012 + 0.0002 + 0.004
    expect(price(catalog, 'gpt-test', { inputTokens: 1000, cachedInputTokens: 400, outputTokens: 500 })).toBeCloseTo(0.0054, 12);
  });

  it('prices cache writes where the usage reports them, and reads Anthropic-style uncached input', () => {
    // input reported without cache parts (100 < 1000 + 2000): whole prompt = 3100
    // 100 × $3 + 1000 × $0.3 + 2000 × $3.75 + 50 output × $15 = 300 + 300 + 7500 + 750 (µ$)
    expect(price(catalog, 'claude-test-1', { inputTokens: 100, cachedInputTokens: 1000, cacheWriteInputTokens: 2000, outputTokens: 50 })).toBeCloseTo(0.00885, 12);
    expect(normalizeUsage({ inputTokens: 100, cachedInputTokens: 1000, cacheWriteInputTokens: 2000, outputTokens: 50 }).input).toBe(3100);
    // OpenAI-style: cached included in input already
    expect(normalizeUsage({ inputTokens: 1000, cachedInputTokens: 400, outputTokens: 0 }).input).toBe(1000);
  });

  it('applies the tier a call prompt exceeds to all its tokens', () => {
    // 800 ≤ 1000: 800 × $1 + 100 × $4 = 1200 µ$
    expect(price(catalog, 'gemini-tiered', { inputTokens: 800, outputTokens: 100 })).toBeCloseTo(0.0012, 12);
    // 1500 > 1000: 1500 × $2 + 100 × $8 = 3800 µ$
    expect(price(catalog, 'gemini-tiered', { inputTokens: 1500, outputTokens: 100 })).toBeCloseTo(0.0038, 12);
  });

  it('prices an aggregate of calls by the tier bucket, not by the summed prompt', () => {
    const resolved = resolveModel(catalog, 'gemini-tiered')!;
    const breaks = tierBreaks(resolved);
    expect(breaks).toEqual([1000]);
    // two small calls (500 + 700 input, 200 output): summed prompt 1200 would cross the tier
    const bucket0 = priceUsage(resolved, { inputTokens: 1200, outputTokens: 200 }, { at, tierInputTokens: tierRepresentative(breaks, 0), requests: 2 });
    expect(bucket0).toBeCloseTo((1200 * 1 + 200 * 4) / 1e6, 12);
    expect(tierRepresentative(breaks, 1)).toBe(1001);
  });

  it('selects date-constrained price variants by call time', () => {
    const resolved = resolveModel(catalog, 'gemini-dated')!;
    expect(timeGranularity(resolved)).toBe('day');
    expect(priceUsage(resolved, { inputTokens: 1e6, outputTokens: 1e6 }, { at: new Date('2024-06-01T00:00:00Z') })).toBeCloseTo(2, 12);
    expect(priceUsage(resolved, { inputTokens: 1e6, outputTokens: 1e6 }, { at: new Date('2025-02-01T00:00:00Z') })).toBeCloseTo(4, 12);
  });

  it('charges per-request prices once per call of an aggregate', () => {
    // $10 per 1000 requests: 3 calls = $0.03; plus 1000 in + 1000 out at $1/M = $0.002
    expect(price(catalog, 'gpt-perreq', { inputTokens: 1000, outputTokens: 1000 }, { requests: 3 })).toBeCloseTo(0.032, 12);
    expect(price(catalog, 'gpt-perreq', { inputTokens: 1000, outputTokens: 1000 })).toBeCloseTo(0.012, 12);
  });

  it('costs nothing for no tokens', () => {
    expect(price(catalog, 'gpt-test', { inputTokens: 0, outputTokens: 0 })).toBe(0);
  });
});

describe('hand-computed costs on the bundled @pydantic/genai-prices catalog', () => {
  let bundled: PriceCatalog;
  beforeAll(async () => {
    bundled = await loadBundledCatalog();
  });

  it('gpt-4o: $2.50 input, $1.25 cached input, $10 output per million', () => {
    // 600 × 2.5 + 400 × 1.25 + 500 × 10 = 1500 + 500 + 5000 µ$
    expect(price(bundled, 'gpt-4o', { inputTokens: 1000, cachedInputTokens: 400, outputTokens: 500 })).toBeCloseTo(0.007, 12);
  });

  it('claude-3-5-sonnet direct and on Bedrock: $3 input, $15 output per million', () => {
    expect(price(bundled, 'claude-3-5-sonnet-20241022', { inputTokens: 1000, outputTokens: 1000 })).toBeCloseTo(0.018, 12);
    expect(price(bundled, 'us.anthropic.claude-3-5-sonnet-20240620-v1:0', { inputTokens: 1000, outputTokens: 1000 })).toBeCloseTo(0.018, 12);
  });

  it('gemini-1.5-pro long-context tier above 128k prompt tokens', () => {
    // 100k × 1.25 + 1k × 5 = 0.13; 200k × 2.5 + 1k × 10 = 0.51
    expect(price(bundled, 'gemini-1.5-pro', { inputTokens: 100_000, outputTokens: 1000 })).toBeCloseTo(0.13, 12);
    expect(price(bundled, 'gemini-1.5-pro', { inputTokens: 200_000, outputTokens: 1000 })).toBeCloseTo(0.51, 12);
  });
});
