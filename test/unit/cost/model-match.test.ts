import { beforeAll, describe, expect, it } from 'vitest';
import { resolveModel, resolveProvider } from '../../../src/cost/model-match.js';
import { loadBundledCatalog, type PriceCatalog } from '../../../src/cost/price-catalog.js';
import { testCatalog } from './test-catalog.js';

describe('model names as SDKs report them (test catalog)', () => {
  const catalog = testCatalog();
  const key = (model: string, provider?: string) => resolveModel(catalog, model, provider)?.key ?? null;

  it('matches case-blind and trims', () => {
    expect(key('GPT-Test')).toBe('openai/gpt-test');
    expect(key('  gpt-test ')).toBe('openai/gpt-test');
  });

  it('strips provider prefixes', () => {
    expect(key('openai/gpt-test')).toBe('openai/gpt-test');
    expect(key('models/gemini-tiered')).toBe('google/gemini-tiered');
  });

  it('keeps a listed dated snapshot at its own price and falls back to the undated name otherwise', () => {
    expect(key('gpt-test-2024-05-13')).toBe('openai/gpt-test-2024-05-13');
    expect(key('gpt-test-2024-08-06')).toBe('openai/gpt-test');
    expect(key('gpt-test-2031-02-03')).toBe('openai/gpt-test');
    expect(key('gpt-test-20310203')).toBe('openai/gpt-test');
  });

  it('prices Bedrock ids on Bedrock, with region prefixes and version pins', () => {
    expect(key('anthropic.claude-test-20240620-v1:0')).toBe('aws/regional.anthropic.claude-test-v1:0');
    expect(key('us.anthropic.claude-test-20240620-v1:0')).toBe('aws/regional.anthropic.claude-test-v1:0');
    expect(key('claude-test-1', 'aws.bedrock')).toBe('anthropic/claude-test');
  });

  it('uses the reported provider, its OpenTelemetry spelling included', () => {
    expect(resolveProvider(catalog, 'gcp.vertex_ai')?.id).toBe('google');
    expect(resolveProvider(catalog, 'openai.chat')?.id).toBe('openai');
    expect(resolveProvider(catalog, 'amazon-bedrock')?.id).toBe('aws');
    expect(resolveProvider(catalog, 'unknown-provider')).toBeNull();
    // a hinted provider without the model does not hide the model's own provider
    expect(key('claude-test-1', 'openai')).toBe('anthropic/claude-test');
  });

  it('leaves unknown models unpriced', () => {
    expect(key('totally-unknown-model')).toBeNull();
    expect(key('')).toBeNull();
  });
});

describe('model names on the bundled catalog', () => {
  let bundled: PriceCatalog;
  beforeAll(async () => {
    bundled = await loadBundledCatalog();
  });
  const cases: [string, string | undefined, string | null][] = [
    ['gpt-4o', undefined, 'openai/gpt-4o'],
    ['GPT-4o', undefined, 'openai/gpt-4o'],
    ['openai/gpt-4o', undefined, 'openai/gpt-4o'],
    ['gpt-4o-2024-08-06', undefined, 'openai/gpt-4o'],
    ['gpt-4o-2024-05-13', undefined, 'openai/gpt-4o-2024-05-13'],
    ['gpt-4o', 'azure.ai.openai', 'openai/gpt-4o'],
    ['anthropic.claude-3-5-sonnet-20240620-v1:0', undefined, 'aws/regional.anthropic.claude-3-5-sonnet-20240620-v1:0'],
    ['us.anthropic.claude-3-5-sonnet-20240620-v1:0', 'aws.bedrock', 'aws/regional.anthropic.claude-3-5-sonnet-20240620-v1:0'],
    ['claude-3-5-sonnet-20241022', 'anthropic', 'anthropic/claude-3-5-sonnet'],
    ['anthropic/claude-3.5-sonnet', undefined, 'anthropic/claude-3-5-sonnet'],
    ['models/gemini-1.5-pro', undefined, 'google/gemini-1.5-pro'],
    ['amazon.nova-pro-v1:0', undefined, 'aws/amazon.nova-pro-v1:0'],
    ['no-such-model-xyz', undefined, null],
  ];
  for (const [model, provider, expected] of cases) {
    it(`${model}${provider ? ` (${provider})` : ''} → ${expected ?? 'unpriced'}`, () => {
      expect(resolveModel(bundled, model, provider)?.key ?? null).toBe(expected);
    });
  }

  it('records the bundled snapshot time as pricing_fetched_at', () => {
    expect(bundled.source).toBe('bundled');
    expect(bundled.fetchedAt.toISOString()).toBe('2026-09-23T10:11:04.622Z');
  });
});
