import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backfillCosts } from '../../../src/cost/backfill.js';
import { computeCostObject } from '../../../src/cost/cost-object.js';
import { computeCostRows, type CostQueryRequest } from '../../../src/cost/query-cost.js';
import type { ClickHouseStore } from '../../../src/platform/clickhouse/clickhouse.js';
import { param, raw, sql, type Fragment } from '../../../src/platform/clickhouse/sql/fragment.js';
import { tenantGuard } from '../../../src/platform/clickhouse/sql/tenant-guard.js';
import { testCatalog } from '../../unit/cost/test-catalog.js';
import { at, dateOf, newScope, openTestStore, seedGenerations, seedTraces, WINDOW, type Scope } from './seed.js';

let store: ClickHouseStore;
let close: () => Promise<void>;
beforeAll(async () => {
  ({ store, close } = await openTestStore());
});
afterAll(async () => close());

const catalog = testCatalog();

/** What the analytics compiler prints for the primary table: guard + window (+ filters). */
/** What the analytics compiler hands the cost module: the layer's guard, the window, and any filter. */
function where(scope: Scope, extra?: Fragment) {
  const time = "DateTime64(3, 'UTC')";
  return sql`${tenantGuard(scope)} AND timestamp >= ${param(time, WINDOW.start)} AND timestamp < ${param(time, WINDOW.endExclusive)}${extra ? sql` AND ${extra}` : raw('')}`;
}

async function seedMixedProject(scope: Scope) {
  const [gpt, claude, mystery] = await seedTraces(store, scope, [
    { timestamp: at(0, '10:00:00'), agent: 'planner', inputTokens: 1000, outputTokens: 500, basis: 'unavailable' },
    { timestamp: at(1, '10:00:00'), agent: 'planner', inputTokens: 2000, outputTokens: 100, basis: 'unavailable' },
    { timestamp: at(1, '11:00:00'), agent: 'writer', inputTokens: 40, outputTokens: 10, basis: 'unavailable' },
    { timestamp: at(1, '12:00:00'), agent: 'writer', inputTokens: 1000, outputTokens: 0, basis: 'stored', cost: 0.01, pricedTokens: 1000, pricedAt: '2024-12-01 00:00:00.000' },
  ]);
  await seedGenerations(store, scope, [
    { traceId: gpt, timestamp: at(0, '10:00:00'), model: 'gpt-test', provider: 'openai', input: 1000, cached: 400, output: 500 },
    { traceId: claude, timestamp: at(1, '10:00:00'), model: 'claude-test-1', provider: 'anthropic', input: 2000, output: 100 },
    { traceId: mystery, timestamp: at(1, '11:00:00'), model: 'mystery-llm', input: 40, output: 10 },
  ]);
  return { gpt, claude, mystery };
}

describe('trace_cost rows', () => {
  it('answers one trace_cost row per group, keyed by the group values', async () => {
    const scope = newScope();
    await seedMixedProject(scope);
    const request: CostQueryRequest = { kind: 'trace_cost', table: store.table('event_trace_processed'), where: where(scope), groups: [{ alias: 'agent_name', sql: raw('agent_name') }] };
    const rows = await computeCostRows({ ch: store, ...scope, ...WINDOW, catalog }, request);
    expect([...rows.keys()].sort()).toEqual(['["planner"]', '["writer"]']);
    expect(rows.get('["planner"]')).toEqual({
      estimated_cost_usd: 0.0129, priced_tokens: 3600, total_tokens: 3600, priced_token_share: 1, unpriced_models: [],
      pricing_fetched_at: '2025-01-15T00:00:00.000Z', cost_source: 'query_time', cost_lower_bound: false, cost_lower_bound_reasons: [],
      model_breakdown_truncated: false, attribution: { coverage: 'all', values: { 'claude-test-1': 0.0075, 'gpt-test': 0.0054 } },
    });
    const writer = rows.get('["writer"]')!;
    expect(writer).toMatchObject({
      estimated_cost_usd: 0.01, cost_source: 'mixed', cost_lower_bound: true, cost_lower_bound_reasons: ['unpriced_models'],
      unpriced_models: ['mystery-llm'], priced_tokens: 1000, total_tokens: 1050, attribution: { coverage: 'unwritten_only', values: {} },
    });
    expect(writer.priced_token_share).toBeCloseTo(1000 / 1050, 12);
  });

  it("answers '[]' without groups, and honours the printed filters", async () => {
    const scope = newScope();
    await seedMixedProject(scope);
    const table = store.table('event_trace_processed');
    const all = await computeCostRows({ ch: store, ...scope, ...WINDOW, catalog }, { kind: 'trace_cost', table, where: where(scope), groups: [] });
    expect([...all.keys()]).toEqual(['[]']);
    expect(all.get('[]')!.estimated_cost_usd).toBeCloseTo(0.0229, 12);
    const filtered = await computeCostRows(
      { ch: store, ...scope, ...WINDOW, catalog },
      { kind: 'trace_cost', table, where: where(scope, sql`agent_name = ${param('String', 'planner')}`), groups: [{ alias: 'bucket', sql: raw('toDate(timestamp)') }] },
    );
    expect([...filtered.keys()].sort()).toEqual([JSON.stringify([dateOf(0)]), JSON.stringify([dateOf(1)])]);
    expect(filtered.get(JSON.stringify([dateOf(1)]))!.estimated_cost_usd).toBeCloseTo(0.0075, 12);
  });
});

describe('generation_cost rows', () => {
  it('prices each model group, null and not priced for an unknown model', async () => {
    const scope = newScope();
    await seedMixedProject(scope);
    const [tiered] = await seedTraces(store, scope, [{ timestamp: at(0, '05:00:00'), inputTokens: 2300, outputTokens: 200, basis: 'unavailable' }]);
    await seedGenerations(store, scope, [
      { traceId: tiered, timestamp: at(0, '05:00:00'), model: 'gemini-tiered', input: 800, output: 100 },
      { traceId: tiered, timestamp: at(0, '05:00:01'), model: 'gemini-tiered', input: 1500, output: 100 },
    ]);
    const table = store.table('event_generation_completed');
    const rows = await computeCostRows({ ch: store, ...scope, ...WINDOW, catalog }, { kind: 'generation_cost', table, where: where(scope), groups: [{ alias: 'model', sql: raw('model') }] });
    expect(rows.get('["gpt-test"]')).toEqual({ estimated_cost_usd: 0.0054, priced: true });
    expect(rows.get('["claude-test-1"]')).toEqual({ estimated_cost_usd: 0.0075, priced: true });
    expect(rows.get('["mystery-llm"]')).toEqual({ estimated_cost_usd: null, priced: false });
    // per call tiers: 800 × 1 + 100 × 4 = 1200 µ$; 1500 × 2 + 100 × 8 = 3800 µ$
    expect(rows.get('["gemini-tiered"]')!.estimated_cost_usd).toBeCloseTo(0.005, 12);

    const byDay = await computeCostRows(
      { ch: store, ...scope, ...WINDOW, catalog },
      { kind: 'generation_cost', table, where: where(scope), groups: [{ alias: 'bucket', sql: raw('toDate(timestamp)') }, { alias: 'model', sql: raw('model') }] },
    );
    expect(byDay.get(JSON.stringify([dateOf(1), 'claude-test-1']))).toEqual({ estimated_cost_usd: 0.0075, priced: true });
  });
});

describe('cost backfill', () => {
  async function readRow(table: string, traceId: string) {
    const result = await store.client.query({ query: `SELECT * FROM ${store.table(table)} FINAL WHERE trace_id = {id:String}`, query_params: { id: traceId }, format: 'JSONEachRow' });
    return (await result.json<Record<string, unknown>>())[0];
  }

  it('turns query_time into stored and keeps the backfill-time price when the catalog changes', async () => {
    const scope = newScope();
    const other = newScope();
    const { gpt } = await seedMixedProject(scope);
    const [noGenerations] = await seedTraces(store, scope, [{ timestamp: at(1, '13:00:00'), inputTokens: 70, outputTokens: 0, basis: 'unavailable' }]);
    const [untouched] = await seedTraces(store, other, [{ timestamp: at(0, '10:00:00'), inputTokens: 10, outputTokens: 0, basis: 'unavailable' }]);
    await store.client.insert({
      table: store.table('traces'),
      values: [{ tenant_id: scope.tenantId, project_id: scope.projectId, trace_id: gpt, timestamp: at(0, '10:00:00'), estimated_cost_usd: null, processed_at: '2025-03-05 00:00:00.000' }],
      format: 'JSONEachRow',
    });

    const before = await computeCostObject({ ch: store, ...scope, catalog }, WINDOW);
    expect(before.total.cost.cost_source).toBe('mixed');
    expect(before.total.cost_trace_counts).toMatchObject({ stored: 1, live_priced: 3, unbackfilled: 1 });

    expect(await backfillCosts(store, { ...scope, catalog: null })).toMatchObject({ scanned: 4, rewritten: 0, skipped: 'prices_unavailable' });
    const result = await backfillCosts(store, { ...scope, catalog, batchSize: 2 });
    expect(result).toEqual({ scanned: 4, rewritten: 3, without_generations: 1, priced_at: '2025-01-15T00:00:00.000Z' });

    const row = await readRow('event_trace_processed', gpt);
    expect(row).toMatchObject({ estimated_cost_basis: 'stored', estimated_cost_usd: 0.0054, cost_priced_tokens: 1500, cost_priced_at: '2025-01-15 00:00:00.000', cost_model_costs: { 'gpt-test': 0.0054 } });
    // one millisecond newer than the row it replaced, so a later re-processing still wins
    expect(row.processed_at).toBe('2025-03-05 00:00:00.001');
    expect((await readRow('traces', gpt)).estimated_cost_usd).toBe(0.0054);
    expect((await readRow('event_trace_processed', noGenerations)).estimated_cost_basis).toBe('unavailable');
    expect((await readRow('event_trace_processed', untouched)).estimated_cost_basis).toBe('unavailable');

    // Prices change afterwards: gpt-test input $2 → $7 per million. Live pricing would now say
    // 600 × 7 + 400 × 0.5 + 500 × 8 = 8400 µ$; the backfilled row keeps 5400 µ$.
    const dearer = testCatalog({ gptInput: 7, fetchedAt: new Date('2025-02-01T00:00:00Z') });
    const after = await computeCostObject({ ch: store, ...scope, catalog: dearer }, WINDOW);
    expect(after.total.cost_trace_counts).toEqual({ stored: 4, live_priced: 0, unbackfilled: 1, stored_unpriced: 1, stored_unavailable: 1, breakdown_truncated: 0 });
    // stored 0.01 + gpt 0.0054 + claude 0.0075 (mystery unpriced, named)
    expect(after.total.cost.estimated_cost_usd).toBeCloseTo(0.0229, 12);
    expect(after.total.cost.unpriced_models).toEqual(['mystery-llm']);
    expect(after.total.cost.cost_lower_bound_reasons).toEqual(['unpriced_models', 'unbackfilled_traces']);

    const onlyGpt = await computeCostObject({ ch: store, ...scope, catalog: dearer }, { start: WINDOW.start, endExclusive: new Date(WINDOW.start.getTime() + 86_400_000) });
    expect(onlyGpt.total.cost).toMatchObject({ estimated_cost_usd: 0.0054, cost_source: 'stored', pricing_fetched_at: '2025-01-15T00:00:00.000Z' });

    // a second run finds only the row it cannot price
    expect(await backfillCosts(store, { ...scope, catalog: dearer })).toMatchObject({ scanned: 1, rewritten: 0, without_generations: 1 });
  });
});
