import { beforeAll, describe, expect, it } from 'vitest';
import type { ModelInfo, Provider } from '@pydantic/genai-prices';
import type { ResolvedModel } from '../../../src/cost/model-match.js';
import { priceUsage, priceUsageByPackage, tierBreaks, tierRepresentative, type TokenUsage } from '../../../src/cost/price-calc.js';
import { catalogFromProviders, loadBundledCatalog, type PriceCatalog } from '../../../src/cost/price-catalog.js';
import { cachedPlan } from '../../../src/cost/price-plan.js';

/**
 * priceUsage prices flat-priced models by a plan of the package's arithmetic instead of
 * calling calcPrice per generation. The dollars must be the package's to the last bit, for every
 * model of the bundled catalog, every tier, and every usage shape the service writes.
 */

const at = new Date('2026-06-01T12:00:00Z');

/** Usage shapes the service writes: plain, OpenAI-style cached input, Anthropic-style (cache parts outside input), cache writes. */
function usages(prompt: number): TokenUsage[] {
  return [
    { inputTokens: prompt, outputTokens: 0 },
    { inputTokens: prompt, outputTokens: 137 },
    { inputTokens: prompt, outputTokens: 4096, cachedInputTokens: Math.floor(prompt / 3) },
    { inputTokens: prompt, outputTokens: 51, cacheWriteInputTokens: Math.floor(prompt / 4) },
    { inputTokens: prompt, outputTokens: 999, cachedInputTokens: Math.floor(prompt / 5), cacheWriteInputTokens: Math.floor(prompt / 7) },
    { inputTokens: 3, outputTokens: 77, cachedInputTokens: prompt, cacheWriteInputTokens: 1234 },
    { inputTokens: 0, outputTokens: 12_345 },
  ];
}

function modelsOf(catalog: PriceCatalog): ResolvedModel[] {
  const out: ResolvedModel[] = [];
  for (const provider of catalog.providers) {
    for (const model of provider.models) {
      out.push({ provider, model, matchedName: model.id, key: `${provider.id}/${model.id}` });
    }
  }
  return out;
}

/** Prompt sizes on both sides of every tier break of the model, plus ordinary ones. */
function prompts(resolved: ResolvedModel): number[] {
  const breaks = tierBreaks(resolved);
  const sizes = [1, 812, 23_456];
  for (let i = 0; i <= breaks.length; i++) {
    const r = tierRepresentative(breaks, i);
    sizes.push(r, r + 7919);
  }
  for (const b of breaks) sizes.push(b, b + 1);
  return [...new Set(sizes)];
}

describe('priced by plan = priced by calcPrice', () => {
  let catalog: PriceCatalog;
  beforeAll(async () => {
    catalog = await loadBundledCatalog();
  });

  it('gives the package dollars, bit for bit, for every bundled model, tier and usage shape, and plans the flat-priced ones', () => {
    let compared = 0;
    let planned = 0;
    let flatPriceable = 0;
    const mismatches: string[] = [];
    for (const resolved of modelsOf(catalog)) {
      for (const prompt of prompts(resolved)) {
        for (const usage of usages(prompt)) {
          // Twice: the first call of a model and tier builds its plan, the second uses it.
          for (let round = 0; round < 2; round++) {
            const expected = priceUsageByPackage(resolved, usage, { at });
            const got = priceUsage(resolved, usage, { at });
            compared++;
            if (!Object.is(got, expected)) mismatches.push(`${resolved.key} ${JSON.stringify(usage)}: ${got} vs ${expected}`);
          }
        }
      }
      if (!Array.isArray(resolved.model.prices) && priceUsageByPackage(resolved, { inputTokens: 1000, outputTokens: 10 }, { at }) !== null) {
        flatPriceable++;
        if (cachedPlan(resolved.model, 0)) planned++;
      }
    }
    expect(mismatches).toEqual([]);
    expect(compared).toBeGreaterThan(20_000);
    // Every flat-priced model the package can price has a plan: the per-call package work is gone for it.
    expect(flatPriceable).toBeGreaterThan(1000);
    expect(planned).toBe(flatPriceable);
  });

  it('prices aggregates (tier bucket and call count, as query-time pricing passes them) as the package does', () => {
    const mismatches: string[] = [];
    for (const resolved of modelsOf(catalog)) {
      const breaks = tierBreaks(resolved);
      for (let bucket = 0; bucket <= breaks.length; bucket++) {
        for (const requests of [1, 3, 250]) {
          const options = { at, tierInputTokens: tierRepresentative(breaks, bucket), requests };
          const usage = { inputTokens: 41_000 * requests, outputTokens: 900 * requests, cachedInputTokens: 5000 * requests };
          for (let round = 0; round < 2; round++) {
            const expected = priceUsageByPackage(resolved, usage, options);
            const got = priceUsage(resolved, usage, options);
            if (!Object.is(got, expected)) mismatches.push(`${resolved.key} bucket ${bucket} × ${requests}: ${got} vs ${expected}`);
          }
        }
      }
    }
    expect(mismatches).toEqual([]);
  });
});

describe('where a plan does not apply', () => {
  const provider = (models: ModelInfo[]): Provider => ({ id: 'p', name: 'P', api_pattern: '', models });
  const resolvedIn = (catalog: PriceCatalog): ResolvedModel => {
    const p = catalog.providers[0];
    return { provider: p, model: p.models[0], matchedName: p.models[0].id, key: `p/${p.models[0].id}` };
  };

  it('a price the package refuses stays unpriced on every call (never $0)', () => {
    const catalog = catalogFromProviders([provider([{ id: 'bad', match: { equals: 'bad' }, prices: { input_mtok: -1, output_mtok: 2 } }])], at);
    const resolved = resolvedIn(catalog);
    for (let i = 0; i < 3; i++) expect(priceUsage(resolved, { inputTokens: 100 + i, outputTokens: 5 }, { at })).toBeNull();
    expect(cachedPlan(resolved.model, 0)).toBeNull();
  });

  it('fractional token counts and price variants by date go to the package each time', () => {
    const catalog = catalogFromProviders([provider([{
      id: 'dated', match: { equals: 'dated' },
      prices: [
        { prices: { input_mtok: 1, output_mtok: 2 } },
        { constraint: { type: 'start_date', start_date: '2026-01-01' }, prices: { input_mtok: 3, output_mtok: 4 } },
      ],
    }, { id: 'flat', match: { equals: 'flat' }, prices: { input_mtok: 1.1, output_mtok: 2.3 } }])], at);
    const [dated, flat] = catalog.providers[0].models.map((model) => ({ provider: catalog.providers[0], model, matchedName: model.id, key: model.id }));
    expect(priceUsage(dated, { inputTokens: 1_000_000, outputTokens: 0 }, { at: new Date('2025-06-01T00:00:00Z') })).toBe(1);
    expect(priceUsage(dated, { inputTokens: 1_000_000, outputTokens: 0 }, { at })).toBe(3);
    expect(cachedPlan(dated.model, 0)).toBeUndefined();
    const fractional = { inputTokens: 1000.5, outputTokens: 0.25 };
    expect(priceUsage(flat, fractional, { at })).toBe(priceUsageByPackage(flat, fractional, { at }));
    expect(cachedPlan(flat.model, 0)).toBeUndefined();
  });
});
