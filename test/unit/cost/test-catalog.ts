import { catalogFromProviders, type PriceCatalog } from '../../../src/cost/price-catalog.js';

/**
 * A small price catalog in the package's data format with round prices, so tests can compute
 * expected costs by hand. Prices are USD per million tokens unless the key says otherwise.
 */
export const TEST_CATALOG_TIME = new Date('2025-01-15T00:00:00.000Z');

export function testProviders(overrides: { gptInput?: number; datedSwitch?: string } = {}) {
  return [
    {
      id: 'openai', name: 'OpenAI', api_pattern: 'https://api\\.openai\\.com',
      model_match: { starts_with: 'gpt-' }, provider_match: { contains: 'openai' },
      models: [
        { id: 'gpt-test', match: { or: [{ equals: 'gpt-test' }, { equals: 'gpt-test-2024-08-06' }] }, prices: { input_mtok: overrides.gptInput ?? 2, cache_read_mtok: 0.5, output_mtok: 8 } },
        { id: 'gpt-test-2024-05-13', match: { equals: 'gpt-test-2024-05-13' }, prices: { input_mtok: 5, output_mtok: 15 } },
        { id: 'gpt-perreq', match: { equals: 'gpt-perreq' }, prices: { input_mtok: 1, output_mtok: 1, requests_kcount: 10 } },
      ],
    },
    {
      id: 'anthropic', name: 'Anthropic', api_pattern: 'https://api\\.anthropic\\.com',
      model_match: { contains: 'claude' }, provider_match: { contains: 'anthropic' },
      models: [
        { id: 'claude-test', match: { starts_with: 'claude-test' }, prices: { input_mtok: 3, cache_write_mtok: 3.75, cache_read_mtok: 0.3, output_mtok: 15 } },
      ],
    },
    {
      id: 'aws', name: 'AWS Bedrock', api_pattern: 'bedrock',
      provider_match: { or: [{ contains: 'bedrock' }, { contains: 'amazon' }] },
      models: [
        { id: 'regional.anthropic.claude-test-v1:0', match: { contains: 'anthropic.claude-test' }, prices: { input_mtok: 4, output_mtok: 20 } },
      ],
    },
    {
      id: 'google', name: 'Google', api_pattern: 'googleapis',
      model_match: { contains: 'gemini' }, provider_match: { or: [{ contains: 'google' }, { contains: 'vertex' }] },
      models: [
        {
          id: 'gemini-tiered', match: { contains: 'gemini-tiered' },
          prices: { input_mtok: { base: 1, tiers: [{ start: 1000, price: 2 }] }, output_mtok: { base: 4, tiers: [{ start: 1000, price: 8 }] } },
        },
        {
          id: 'gemini-dated', match: { equals: 'gemini-dated' },
          prices: [
            { prices: { input_mtok: 1, output_mtok: 1 } },
            { constraint: { start_date: overrides.datedSwitch ?? '2025-01-01', type: 'start_date' }, prices: { input_mtok: 2, output_mtok: 2 } },
          ],
        },
      ],
    },
  ];
}

export function testCatalog(overrides: { gptInput?: number; fetchedAt?: Date; datedSwitch?: string } = {}): PriceCatalog {
  return catalogFromProviders(testProviders(overrides), overrides.fetchedAt ?? TEST_CATALOG_TIME, 'test');
}
