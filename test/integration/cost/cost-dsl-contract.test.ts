import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAnalyticsQuery } from '../../../src/analytics/query/run.js';
import type { ClickHouseStore } from '../../../src/platform/clickhouse/clickhouse.js';
import { at, dateOf, newScope, openTestStore, seedGenerations, seedTraces, WINDOW } from './seed.js';

/**
 * The contract between the query compiler and query-cost.ts, through the real query service: the
 * cost row of each group is found by its key (no placeholder rows), on the bundled catalog.
 */
let store: ClickHouseStore;
let close: () => Promise<void>;
beforeAll(async () => {
  ({ store, close } = await openTestStore());
});
afterAll(async () => close());

const iso = (d: Date) => d.toISOString().replace(/\.\d{3}Z$/, 'Z');

describe('cost measures through the analytics query', () => {
  it('trace_cost per day bucket and generation_cost per model carry the module’s figures', async () => {
    const scope = newScope();
    const [first, second] = await seedTraces(store, scope, [
      { timestamp: at(0, '10:00:00'), inputTokens: 1000, outputTokens: 500, basis: 'unavailable' },
      { timestamp: at(1, '10:00:00'), inputTokens: 20, outputTokens: 0, basis: 'unavailable' },
    ]);
    await seedGenerations(store, scope, [
      // gpt-4o: 600 × $2.50 + 400 cached × $1.25 + 500 × $10 per million = $0.007
      { traceId: first, timestamp: at(0, '10:00:00'), model: 'gpt-4o-2024-08-06', provider: 'openai', input: 1000, cached: 400, output: 500 },
      { traceId: second, timestamp: at(1, '10:00:00'), model: 'in-house-llm', input: 20, output: 0 },
    ]);
    const deps = { ch: store, config: { queryTimeoutSeconds: 15 } };
    const window = { start: iso(WINDOW.start), end_exclusive: iso(WINDOW.endExclusive) };

    const traces = await runAnalyticsQuery(deps, scope.tenantId, scope.projectId, {
      from: 'trace.processed', ...window, measures: [{ agg: 'trace_cost' }, { as: 'traces', agg: 'count' }], group_by: [{ bucket: 'day' }],
    });
    expect(traces.rows).toHaveLength(2);
    const [day0, day1] = traces.rows;
    expect(day0.bucket).toBe(dateOf(0));
    expect(day0).toMatchObject({ cost_source: 'query_time', cost_lower_bound: false, attribution: { coverage: 'all', values: { 'gpt-4o-2024-08-06': 0.007 } } });
    expect(day0.estimated_cost_usd).toBeCloseTo(0.007, 12);
    expect(day1).toMatchObject({ estimated_cost_usd: null, unpriced_models: ['in-house-llm'], cost_lower_bound_reasons: ['unpriced_models'] });

    const models = await runAnalyticsQuery(deps, scope.tenantId, scope.projectId, {
      from: 'generation.completed', ...window, measures: [{ agg: 'generation_cost' }], group_by: [{ field: 'model' }],
    });
    const byModel = Object.fromEntries(models.rows.map((r) => [r.model, r]));
    expect(byModel['gpt-4o-2024-08-06']).toMatchObject({ priced: true });
    expect(byModel['gpt-4o-2024-08-06'].estimated_cost_usd).toBeCloseTo(0.007, 12);
    expect(byModel['in-house-llm']).toMatchObject({ priced: false, estimated_cost_usd: null });
  });
});
