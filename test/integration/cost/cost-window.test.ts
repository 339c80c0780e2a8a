import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { computeCostObject, computeModelScorecardCost, costByModel, scorecardCost, windowCost, type CostContext } from '../../../src/cost/cost-object.js';
import type { ClickHouseStore } from '../../../src/platform/clickhouse/clickhouse.js';
import { testCatalog } from '../../unit/cost/test-catalog.js';
import { at, dateOf, newScope, openTestStore, seedGenerations, seedTraces, WINDOW, type Scope } from './seed.js';

let store: ClickHouseStore;
let close: () => Promise<void>;
beforeAll(async () => {
  ({ store, close } = await openTestStore());
});
afterAll(async () => close());

const catalog = testCatalog();
const ctx = (scope: Scope, extra: Partial<CostContext> = {}): CostContext => ({ ch: store, ...scope, catalog, ...extra });

/** An unwritten trace with one gpt-test call: 600 × $2 + 400 cached × $0.5 + 500 × $8 = $0.0054. */
async function gptTrace(scope: Scope, timestamp = at(0, '10:00:00'), agent = 'agent-a'): Promise<string> {
  const [id] = await seedTraces(store, scope, [{ timestamp, agent, inputTokens: 1000, outputTokens: 500, basis: 'unavailable' }]);
  await seedGenerations(store, scope, [{ traceId: id, timestamp, model: 'gpt-test', provider: 'openai', input: 1000, cached: 400, output: 500 }]);
  return id;
}

/** An unwritten trace with one claude call: 2000 × $3 + 100 × $15 = $0.0075. */
async function claudeTrace(scope: Scope, timestamp = at(0, '11:00:00'), agent = 'agent-a'): Promise<string> {
  const [id] = await seedTraces(store, scope, [{ timestamp, agent, inputTokens: 2000, outputTokens: 100, basis: 'unavailable' }]);
  await seedGenerations(store, scope, [{ traceId: id, timestamp, model: 'claude-test-1', provider: 'anthropic', input: 2000, output: 100 }]);
  return id;
}

async function storedTrace(scope: Scope, cost: number, tokens: number, timestamp = at(0, '12:00:00'), agent = 'agent-a') {
  await seedTraces(store, scope, [{ timestamp, agent, inputTokens: tokens, outputTokens: 0, basis: 'stored', cost, pricedTokens: tokens, pricedAt: '2024-12-01 00:00:00.000' }]);
}

describe('cost object over a window', () => {
  it('all stored: sums stored figures, source stored, no attribution', async () => {
    const scope = newScope();
    await storedTrace(scope, 0.01, 1000);
    await storedTrace(scope, 0.02, 3000);
    await seedTraces(store, scope, [{ timestamp: at(3), inputTokens: 9, outputTokens: 0, basis: 'stored', cost: 5, pricedTokens: 9, pricedAt: '2024-12-01 00:00:00.000' }]);
    const { total } = await computeCostObject(ctx(scope), WINDOW);
    expect(total.cost).toEqual({
      estimated_cost_usd: 0.03, priced_token_share: 1, priced_tokens: 4000, total_tokens: 4000, unpriced_models: [],
      pricing_fetched_at: '2024-12-01T00:00:00.000Z', cost_source: 'stored', cost_lower_bound: false,
      cost_lower_bound_reasons: [], model_breakdown_truncated: false, cost_rollup_truncated: false,
    });
    expect(total.cost_trace_counts).toEqual({ stored: 2, live_priced: 0, unbackfilled: 0, stored_unpriced: 0, stored_unavailable: 0, breakdown_truncated: 0 });
    expect(total.attribution.coverage).toBe('none');
  });

  it('all query time: prices generation rows, source query_time, full attribution', async () => {
    const scope = newScope();
    await gptTrace(scope);
    await claudeTrace(scope);
    const { total } = await computeCostObject(ctx(scope), WINDOW);
    expect(total.cost.estimated_cost_usd).toBeCloseTo(0.0129, 12);
    expect(total.cost.cost_source).toBe('query_time');
    expect(total.cost.cost_lower_bound).toBe(false);
    expect(total.cost.priced_tokens).toBe(3600);
    expect(total.cost.priced_token_share).toBe(1);
    expect(total.cost.pricing_fetched_at).toBe('2025-01-15T00:00:00.000Z');
    expect(total.cost_trace_counts).toMatchObject({ live_priced: 2, stored_unavailable: 2, stored: 0 });
    expect(total.attribution).toEqual({ coverage: 'all', values: { 'claude-test-1': 0.0075, 'gpt-test': 0.0054 }, attributed_traces: 2 });
  });

  it("mixed: stored plus query time; rows in '' basis (written before cost) count as unwritten", async () => {
    const scope = newScope();
    await storedTrace(scope, 0.01, 1000);
    const [legacy] = await seedTraces(store, scope, [{ timestamp: at(1, '09:00:00'), inputTokens: 1000, outputTokens: 500, basis: '' }]);
    await seedGenerations(store, scope, [{ traceId: legacy, timestamp: at(1, '09:00:01'), model: 'gpt-test', input: 1000, cached: 400, output: 500 }]);
    const { total } = await computeCostObject(ctx(scope), WINDOW);
    expect(total.cost.estimated_cost_usd).toBeCloseTo(0.0154, 12);
    expect(total.cost.cost_source).toBe('mixed');
    expect(total.cost.pricing_fetched_at).toBe('2024-12-01T00:00:00.000Z');
    expect(total.attribution.coverage).toBe('unwritten_only');
    expect(total.attribution.values).toEqual({ 'gpt-test': 0.0054 });
  });

  it('re-sent generation rows and re-processed traces count once (FINAL)', async () => {
    const scope = newScope();
    const id = await gptTrace(scope);
    const [gen] = await (await store.client.query({
      query: `SELECT * FROM ${store.table('event_generation_completed')} WHERE trace_id = {id:UUID}`, query_params: { id }, format: 'JSONEachRow',
      // The UInt64 span id as exact text: read back as a JSON number it would lose its low digits.
      clickhouse_settings: { output_format_json_quote_64bit_integers: 1 },
    })).json<Record<string, unknown>>();
    await store.client.insert({ table: store.table('event_generation_completed'), values: [{ ...gen, inserted_at: '2030-01-01 00:00:00.000' }], format: 'JSONEachRow' });
    await seedTraces(store, scope, [{ traceId: id, timestamp: at(0, '10:00:00'), inputTokens: 1000, outputTokens: 500, basis: 'unavailable', processedAt: '2030-01-01 00:00:00.000' }]);
    const { total } = await computeCostObject(ctx(scope), WINDOW);
    expect(total.traces).toBe(1);
    expect(total.cost.estimated_cost_usd).toBeCloseTo(0.0054, 12);
  });

  it('prices tiers per call and date variants per call date inside the SQL rollup', async () => {
    const scope = newScope();
    const [tiered, dated] = await seedTraces(store, scope, [
      { timestamp: at(0, '01:00:00'), inputTokens: 2800, outputTokens: 200, basis: 'unavailable' },
      { timestamp: at(0, '02:00:00'), inputTokens: 2_000_000, outputTokens: 2_000_000, basis: 'unavailable' },
    ]);
    await seedGenerations(store, scope, [
      // 800 and 500 stay in the base tier: 1300 × $1 + 100 × $4 = 1700 µ$ (their summed 1300 must not cross it)
      { traceId: tiered, timestamp: at(0, '01:00:00'), model: 'gemini-tiered', input: 800, output: 100 },
      { traceId: tiered, timestamp: at(0, '01:00:01'), model: 'gemini-tiered', input: 500, output: 0 },
      // 1500 > 1000: 1500 × $2 + 100 × $8 = 3800 µ$
      { traceId: tiered, timestamp: at(0, '01:00:02'), model: 'gemini-tiered', input: 1500, output: 100 },
      // $1 + $1 before the switch date (day 0), $2 + $2 from it (a call inside the margin before the window)
      { traceId: dated, timestamp: at(-1, '12:00:00'), model: 'gemini-dated', input: 1e6, output: 1e6 },
      { traceId: dated, timestamp: at(0, '02:00:00'), model: 'gemini-dated', input: 1e6, output: 1e6 },
    ]);
    const { total } = await computeCostObject(ctx(scope, { catalog: testCatalog({ datedSwitch: dateOf(0) }) }), WINDOW);
    expect(total.attribution.values['gemini-tiered']).toBeCloseTo(0.0055, 12);
    expect(total.attribution.values['gemini-dated']).toBeCloseTo(6, 12);
  });
});

describe('each lower-bound reason', () => {
  it('unpriced_models: names live and stored unpriced models', async () => {
    const scope = newScope();
    const id = await gptTrace(scope);
    await seedGenerations(store, scope, [{ traceId: id, timestamp: at(0, '10:00:05'), model: 'mystery-llm', input: 3000, output: 0 }]);
    await seedTraces(store, scope, [{ timestamp: at(0, '12:00:00'), inputTokens: 100, outputTokens: 0, basis: 'unpriced', cost: null, unpricedModels: ['old-mystery'], pricedAt: '2024-12-01 00:00:00.000' }]);
    const { total } = await computeCostObject(ctx(scope), WINDOW);
    expect(total.cost.unpriced_models).toEqual(['mystery-llm', 'old-mystery']);
    expect(total.cost.cost_lower_bound_reasons).toEqual(['unpriced_models']);
    expect(total.cost.estimated_cost_usd).toBeCloseTo(0.0054, 12);
    expect(total.cost.priced_tokens).toBe(1500);
    expect(total.cost.total_tokens).toBe(1600);
    expect(total.cost_trace_counts.stored_unpriced).toBe(1);
  });

  it('prices_unavailable + unbackfilled_traces: no catalog now, figure null', async () => {
    const scope = newScope();
    await gptTrace(scope);
    const { total } = await computeCostObject(ctx(scope, { catalog: null }), WINDOW);
    expect(total.cost.estimated_cost_usd).toBeNull();
    expect(total.cost.cost_lower_bound_reasons).toEqual(['prices_unavailable', 'unbackfilled_traces']);
    expect(total.cost.pricing_fetched_at).toBeNull();
    expect(total.cost_trace_counts).toEqual({ stored: 0, live_priced: 0, unbackfilled: 1, stored_unpriced: 0, stored_unavailable: 1, breakdown_truncated: 0 });
  });

  it('unbackfilled_traces: an unwritten trace with tokens but no generation row', async () => {
    const scope = newScope();
    await gptTrace(scope);
    await seedTraces(store, scope, [{ timestamp: at(0, '13:00:00'), inputTokens: 700, outputTokens: 0, basis: 'unavailable' }]);
    const { total } = await computeCostObject(ctx(scope), WINDOW);
    expect(total.cost.cost_lower_bound_reasons).toEqual(['unbackfilled_traces']);
    expect(total.cost.estimated_cost_usd).toBeCloseTo(0.0054, 12);
    expect(total.cost_trace_counts).toMatchObject({ live_priced: 1, unbackfilled: 1 });
  });

  it('live_priced_breakdown_truncated: more unwritten traces than the live cap', async () => {
    const scope = newScope();
    await gptTrace(scope, at(0, '10:00:00'));
    await claudeTrace(scope, at(0, '11:00:00'));
    const { total } = await computeCostObject(ctx(scope, { limits: { liveTraces: 1 } }), WINDOW);
    expect(total.cost.cost_lower_bound_reasons).toEqual(['live_priced_breakdown_truncated']);
    expect(total.cost.estimated_cost_usd).toBeCloseTo(0.0054, 12); // the oldest one
    expect(total.cost_trace_counts).toMatchObject({ live_priced: 1, breakdown_truncated: 1 });
  });

  it('model_rollup_truncated: more models than the rollup cap', async () => {
    const scope = newScope();
    await gptTrace(scope); // 1500 tokens
    await claudeTrace(scope); // 2100 tokens: kept, the larger
    const { total } = await computeCostObject(ctx(scope, { limits: { modelRollup: 1 } }), WINDOW);
    expect(total.cost.cost_lower_bound_reasons).toEqual(['model_rollup_truncated']);
    expect(total.cost.model_breakdown_truncated).toBe(true);
    expect(total.model_tokens_truncated).toBe(true);
    expect(total.cost.estimated_cost_usd).toBeCloseTo(0.0075, 12);
  });

  it('unpriced_models_truncated: more unpriced names than listed', async () => {
    const scope = newScope();
    await seedTraces(store, scope, [
      { timestamp: at(0, '12:00:00'), inputTokens: 1, outputTokens: 0, basis: 'unpriced', unpricedModels: ['m-1', 'm-2'], pricedAt: '2024-12-01 00:00:00.000' },
    ]);
    const { total } = await computeCostObject(ctx(scope, { limits: { unpricedModels: 1 } }), WINDOW);
    expect(total.cost.unpriced_models).toHaveLength(1);
    expect(total.unpriced_models_truncated).toBe(true);
    expect(total.cost.estimated_cost_usd).toBeNull();
  });
});

describe('grouped cost and view shapes', () => {
  it('per agent and per day, with the busiest groups kept under maxGroups', async () => {
    const scope = newScope();
    await gptTrace(scope, at(0, '10:00:00'), 'planner');
    await claudeTrace(scope, at(1, '10:00:00'), 'planner');
    await storedTrace(scope, 0.01, 1000, at(1, '11:00:00'), 'writer');

    const byAgent = await computeCostObject(ctx(scope), { ...WINDOW, groupBy: 'agent' });
    expect(byAgent.groups.map((g) => g.group)).toEqual(['planner', 'writer']);
    expect(scorecardCost(byAgent.groups[0].detail)).toEqual({
      cost: 0.0129, cost_is_lower_bound: false, cost_source: 'query_time', cost_lower_bound_reasons: [], model_breakdown_truncated: false,
    });
    expect(byAgent.groups[1].detail.cost.cost_source).toBe('stored');
    expect(byAgent.total.cost.estimated_cost_usd).toBeCloseTo(0.0229, 12);

    const byDay = await computeCostObject(ctx(scope), { ...WINDOW, groupBy: { bucket: 'day' } });
    expect(byDay.groups.map((g) => [g.group, g.detail.traces])).toEqual([[dateOf(0), 1], [dateOf(1), 2]]);
    expect(costByModel(byDay.groups[1].group, byDay.groups[1].detail)).toEqual({
      date: dateOf(1), values: { 'claude-test-1': 0.0075 }, coverage: 'unwritten_only', attributed_traces: 1, traces: 2,
    });

    const capped = await computeCostObject(ctx(scope), { ...WINDOW, groupBy: 'agent', maxGroups: 1 });
    expect(capped.cost_rollup_truncated).toBe(true);
    expect(capped.total.cost.cost_rollup_truncated).toBe(true);
    expect(capped.groups.map((g) => g.group)).toEqual(['planner']);
    expect(capped.total.cost.estimated_cost_usd).toBeCloseTo(0.0229, 12);

    const window = windowCost(byAgent.total);
    expect(window.cost_trace_counts).toEqual({ stored: 1, live_priced: 2, unbackfilled: 0, stored_unpriced: 0, stored_unavailable: 2, breakdown_truncated: 0 });
    expect(window).toMatchObject({ model_tokens_truncated: false, unpriced_models_truncated: false, cost_source: 'mixed' });
  });

  it('model_scorecard: per-row cost only when every trace was priced at query time', async () => {
    const all = newScope();
    await gptTrace(all);
    await seedTraces(store, all, [{ timestamp: at(0, '12:00:00'), inputTokens: 5, outputTokens: 0, basis: 'unavailable' }]);
    const scoped = await computeModelScorecardCost(ctx(all), WINDOW);
    expect(scoped.cost_attribution_coverage).toBe('all');
    expect(scoped.rowCost('gpt-test', ['openai'])).toEqual({ priced: true, estimated_cost_usd: 0.0054 });
    expect(scoped.rowCost('mystery-llm')).toEqual({ priced: false, estimated_cost_usd: null });

    const mixed = newScope();
    await gptTrace(mixed);
    await storedTrace(mixed, 0.01, 1000);
    const partly = await computeModelScorecardCost(ctx(mixed), WINDOW);
    expect(partly.cost_attribution_coverage).toBe('unwritten_only');
    expect(partly.cost_attribution_source).toBe('query_time');
    expect(partly.rowCost('gpt-test')).toEqual({ priced: true, estimated_cost_usd: null });
    expect(partly.cost.estimated_cost_usd).toBeCloseTo(0.0154, 12);
  });

  it('model_scorecard: traces priced at write time contribute their stored per-model split', async () => {
    const scope = newScope();
    await gptTrace(scope);
    // Two written traces whose stored totals are split by model, one on the query-time model too.
    await seedTraces(store, scope, [
      { timestamp: at(0, '12:00:00'), inputTokens: 3000, outputTokens: 0, basis: 'stored', cost: 0.03, pricedTokens: 3000, pricedAt: '2024-12-01 00:00:00.000', modelCosts: { 'gpt-test': 0.01, 'claude-test-1': 0.02 } },
      { timestamp: at(1, '08:00:00'), inputTokens: 500, outputTokens: 0, basis: 'stored', cost: 0.004, pricedTokens: 500, pricedAt: '2024-12-01 00:00:00.000', modelCosts: { 'gpt-test': 0.004 } },
      // Outside the window: not counted anywhere.
      { timestamp: at(9), inputTokens: 500, outputTokens: 0, basis: 'stored', cost: 7, pricedTokens: 500, pricedAt: '2024-12-01 00:00:00.000', modelCosts: { 'gpt-test': 7 } },
    ]);
    const card = await computeModelScorecardCost(ctx(scope), WINDOW);
    expect(card.cost.estimated_cost_usd).toBeCloseTo(0.0394, 12);
    expect(card.cost.cost_source).toBe('mixed');
    expect(card.cost_attribution_coverage).toBe('all');
    // gpt-test: $0.0054 priced now + $0.01 + $0.004 stored; claude: $0.02 stored.
    const gpt = card.rowCost('gpt-test', ['openai']).estimated_cost_usd;
    const claude = card.rowCost('claude-test-1', ['anthropic']).estimated_cost_usd;
    expect(gpt).toBeCloseTo(0.0194, 12);
    expect(claude).toBeCloseTo(0.02, 12);
    expect(gpt! + claude!).toBeCloseTo(card.cost.estimated_cost_usd!, 12);
  });
});
