import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backfillCosts } from '../../../src/cost/backfill.js';
import { computeCostObject } from '../../../src/cost/cost-object.js';
import { createPriceTrace } from '../../../src/cost/ingest-pricing.js';
import type { UsageToPrice } from '../../../src/spans/trace-pricing.js';
import { computeCostRows } from '../../../src/cost/query-cost.js';
import type { ClickHouseStore } from '../../../src/platform/clickhouse/clickhouse.js';
import { param, raw, sql } from '../../../src/platform/clickhouse/sql/fragment.js';
import { tenantGuard } from '../../../src/platform/clickhouse/sql/tenant-guard.js';
import { testCatalog } from '../../unit/cost/test-catalog.js';
import { at, newScope, openTestStore, seedGenerations, seedTraces, WINDOW, type GenerationSeed, type Scope } from './seed.js';

/**
 * Cache-write tokens (clickhouse/004_cache_write_tokens.sql) are priced the same way wherever a
 * generation is priced: at write time (the ingest hook), at query time (trace_cost and
 * generation_cost from event_generation_completed), and by the backfill.
 */
let store: ClickHouseStore;
let close: () => Promise<void>;
beforeAll(async () => {
  ({ store, close } = await openTestStore());
});
afterAll(async () => close());

const catalog = testCatalog();
const T = at(0, '10:00:00');

/**
 * claude-test: $3 input, $0.30 cache read, $3.75 cache write, $15 output per million.
 * - Anthropic style (input reported without the cache parts): 100 + 1000 read + 2000 write, 50 out
 *   → (100 × 3 + 1000 × 0.3 + 2000 × 3.75 + 50 × 15) / 1e6 = (300 + 300 + 7500 + 750) / 1e6 = $0.00885.
 * - OpenAI style (input 3100 includes both parts), same split → $0.00885.
 * gpt-test has no cache-write price: 1000 input (300 of them cache writes) × $2 = $0.002.
 * Total $0.0197. Charging the 4000 claude cache writes at the input price would give
 * 4000 × $0.75/M = $0.003 less ($0.0167): the old query-time figure.")
 */
const GENERATIONS: Omit<GenerationSeed, 'traceId' | 'timestamp'>[] = [
  { model: 'claude-test-1', provider: 'anthropic', input: 100, cached: 1000, cacheWrite: 2000, output: 50 },
  { model: 'claude-test-1', provider: 'anthropic', input: 3100, cached: 1000, cacheWrite: 2000, output: 50 },
  { model: 'gpt-test', provider: 'openai', input: 1000, cacheWrite: 300, output: 0 },
];
const EXPECTED = 0.0197;
const EXPECTED_CLAUDE = 0.0177;
/** input + output of every generation: 150 + 3150 + 1000. */
const TOKENS = 4300;

async function seedUnwritten(scope: Scope): Promise<string> {
  const [id] = await seedTraces(store, scope, [{ timestamp: T, inputTokens: 4200, outputTokens: 100, basis: 'unavailable' }]);
  await seedGenerations(store, scope, GENERATIONS.map((g) => ({ ...g, traceId: id, timestamp: T })));
  return id;
}

describe('cache-write tokens', () => {
  it('are priced at the cache-write price at write time (hand-computed)', () => {
    const usage: UsageToPrice = {
      timestamp: T,
      generations: GENERATIONS.map((g) => ({
        model: g.model, provider: g.provider ?? '', input_tokens: g.input, output_tokens: g.output,
        cached_input_tokens: g.cached ?? 0, cache_write_input_tokens: g.cacheWrite,
      })),
    };
    const stored = createPriceTrace({ current: () => catalog })(usage);
    expect(stored.estimated_cost_basis).toBe('stored');
    expect(stored.estimated_cost_usd).toBeCloseTo(EXPECTED, 12);
    expect(stored.cost_model_costs['claude-test-1']).toBeCloseTo(EXPECTED_CLAUDE, 12);
    expect(stored.cost_priced_tokens).toBe(TOKENS);
  });

  it('cost the same at query time (trace_cost and the window cost object) as at write time', async () => {
    const scope = newScope();
    await seedUnwritten(scope);
    const { total } = await computeCostObject({ ch: store, ...scope, catalog }, WINDOW);
    expect(total.cost.cost_source).toBe('query_time');
    expect(total.cost.cost_lower_bound).toBe(false);
    expect(total.cost.estimated_cost_usd).toBeCloseTo(EXPECTED, 12);
    expect(total.cost.priced_tokens).toBe(TOKENS);
    expect(total.attribution.values['claude-test-1']).toBeCloseTo(EXPECTED_CLAUDE, 12);
  });

  it('cost the same in generation_cost rows', async () => {
    const scope = newScope();
    await seedUnwritten(scope);
    const rows = await computeCostRows(
      { ch: store, ...scope, ...WINDOW, catalog },
      {
        kind: 'generation_cost',
        table: store.table('event_generation_completed'),
        where: sql`${tenantGuard(scope)} AND timestamp >= ${param("DateTime64(3, 'UTC')", WINDOW.start)} AND timestamp < ${param("DateTime64(3, 'UTC')", WINDOW.endExclusive)}`,
        groups: [{ alias: 'model', sql: raw('model') }],
      },
    );
    expect(rows.get('["claude-test-1"]')!.estimated_cost_usd).toBeCloseTo(EXPECTED_CLAUDE, 12);
    expect(rows.get('["gpt-test"]')).toEqual({ estimated_cost_usd: 0.002, priced: true });
  });

  it('cost the same after a backfill turns the trace into a stored one', async () => {
    const scope = newScope();
    await seedUnwritten(scope);
    expect(await backfillCosts(store, { ...scope, catalog })).toMatchObject({ scanned: 1, rewritten: 1 });
    const { total } = await computeCostObject({ ch: store, ...scope, catalog }, WINDOW);
    expect(total.cost.cost_source).toBe('stored');
    expect(total.cost.estimated_cost_usd).toBeCloseTo(EXPECTED, 12);
  });
});
