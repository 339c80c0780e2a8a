/**
 * model_scorecard reads trace.processed once: the runs per model and both of the cost
 * module's stored aggregates come out of one FINAL pass. Its answer must be what the module's own
 * statements answer (computeModelScorecardCost without `stored`), for re-processed runs (newest
 * row only), runs outside the window, and a priced model whose stored dollars sum to 0 — which
 * sumMap alone would drop (shown as null instead of 0).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { computeModelScorecardCost } from '../../../src/cost/cost-object.js';
import { modelScorecardView } from '../../../src/analytics/views/model-scorecard-view.js';
import { removeDir, startTestService, type TestService } from '../../helpers/service.js';
import { testCatalog } from '../../unit/cost/test-catalog.js';
import { storedSpanId } from '../../../src/platform/clickhouse/sql/event-ids.js';
import { spanIdFor, traceIdFor } from '../../helpers/event-ids.js';

const T = 'tenant-m';
const P = 'project-m';
const START = new Date('2026-11-01T00:00:00Z');
const WINDOW = { start: START, endExclusive: new Date(START.getTime() + 86_400_000) };

interface Run {
  id: string;
  at: string;
  models: string[];
  costs: Record<string, number>;
  processedAt: string;
}

const RUNS: Run[] = [
  { id: traceIdFor('r1'), at: '2026-11-01 01:00:00.000', models: ['gpt-test', 'claude-test-1'], costs: { 'gpt-test': 0.01, 'claude-test-1': 0.02 }, processedAt: '2026-11-01 02:00:00.000' },
  // Processed twice: only the newer row counts (its dollars, its models).
  { id: traceIdFor('r2'), at: '2026-11-01 03:00:00.000', models: ['gpt-test'], costs: { 'gpt-test': 5 }, processedAt: '2026-11-01 04:00:00.000' },
  { id: traceIdFor('r2'), at: '2026-11-01 03:00:00.000', models: ['gpt-test', 'claude-test-1'], costs: { 'gpt-test': 0.004, 'claude-test-1': 0 }, processedAt: '2026-11-01 05:00:00.000' },
  // claude-test-1's stored dollars sum to 0 over the window: the row still shows 0, not null.
  { id: traceIdFor('r3'), at: '2026-11-01 06:00:00.000', models: ['claude-test-1'], costs: { 'claude-test-1': 0 }, processedAt: '2026-11-01 07:00:00.000' },
  // Re-processed into the next day: out of the window, though its older row was in it.
  { id: traceIdFor('r4'), at: '2026-11-01 08:00:00.000', models: ['gpt-test'], costs: { 'gpt-test': 3 }, processedAt: '2026-11-01 09:00:00.000' },
  { id: traceIdFor('r4'), at: '2026-11-02 08:00:00.000', models: ['gpt-test'], costs: { 'gpt-test': 3 }, processedAt: '2026-11-02 09:00:00.000' },
];

describe('model_scorecard: one trace.processed pass', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
    const ch = svc.service.deps.ch;
    // Each version in its own insert (own part), as settle rounds write them.
    for (const r of RUNS) {
      const total = Object.values(r.costs).reduce((a, b) => a + b, 0);
      await ch.insert(ch.table('event_trace_processed'), [{
        tenant_id: T, project_id: P, timestamp: r.at, actor: 'sdk', surface: 'otlp', trace_id: r.id, agent_name: 'a',
        root_status_code: 'OK', has_root: 1, input_tokens: 100, output_tokens: 0, total_tokens: 100, estimated_cost_usd: total,
        estimated_cost_basis: 'stored', cost_priced_tokens: 100, cost_priced_at: '2026-11-01 00:00:00.000', cost_model_costs: r.costs,
        models: r.models, processed_at: r.processedAt,
      }], 'ingest');
    }
    const calls = [
      [traceIdFor('r1'), '01:00', 'gpt-test', 'openai'], [traceIdFor('r1'), '01:00', 'claude-test-1', 'anthropic'], [traceIdFor('r2'), '03:00', 'gpt-test', 'openai'], [traceIdFor('r3'), '06:00', 'claude-test-1', 'anthropic'],
    ];
    await ch.insert(ch.table('event_generation_completed'), calls.map(([trace, at, model, provider], i) => ({
      tenant_id: T, project_id: P, timestamp: `2026-11-01 ${at}:00.000`, actor: 'sdk', surface: 'otlp', model, provider,
      trace_id: trace, span_id: storedSpanId(spanIdFor(`s${i}`)), duration_ms: 10, input_tokens: 100, output_tokens: 10, tps: 5, error: 0,
    })), 'ingest');
  });
  afterAll(async () => {
    await svc?.stop();
    if (svc) removeDir(svc.dataDir);
  });

  it('answers what the cost module and a per-run count answer', async () => {
    const catalog = testCatalog();
    const deps = { ...svc.service.deps, catalog };
    const body = await modelScorecardView(deps, T, P, { window: WINDOW });
    const module = await computeModelScorecardCost({ ch: deps.ch, tenantId: T, projectId: P, catalog }, WINDOW);

    expect(body.cost_attribution_coverage).toBe(module.cost_attribution_coverage);
    expect(body.estimated_cost_usd).toBe(module.cost.estimated_cost_usd);
    const rows = Object.fromEntries(body.rows.map((r) => [r.model, { traces: r.traces, cost: r.estimated_cost_usd }]));
    expect(rows).toEqual({
      'gpt-test': { traces: 2, cost: module.rowCost('gpt-test', ['openai']).estimated_cost_usd },
      'claude-test-1': { traces: 3, cost: module.rowCost('claude-test-1', ['anthropic']).estimated_cost_usd },
    });
    // Written out: r1 + r2's newer row; r4 left the window.
    expect(rows['gpt-test'].cost).toBeCloseTo(0.014, 12);
    expect(rows['claude-test-1'].cost).toBe(0.02);
    expect(body.estimated_cost_usd).toBeCloseTo(0.034, 12);
    expect(body.cost_attribution_coverage).toBe('all');
  });

  it('keeps a priced model whose stored dollars are 0 in the window at 0, not null', async () => {
    const catalog = testCatalog();
    const window = { start: new Date('2026-11-01T05:00:00Z'), endExclusive: WINDOW.endExclusive };
    const body = await modelScorecardView({ ...svc.service.deps, catalog }, T, P, { window });
    const module = await computeModelScorecardCost({ ch: svc.service.deps.ch, tenantId: T, projectId: P, catalog }, window);
    // Only r3 is in this window (r4's newer row left it): claude-test-1, stored at $0.
    expect(body.rows).toEqual([expect.objectContaining({ model: 'claude-test-1', traces: 1, priced: true, estimated_cost_usd: 0 })]);
    expect(module.rowCost('claude-test-1', ['anthropic']).estimated_cost_usd).toBe(0);
    expect(body.estimated_cost_usd).toBe(module.cost.estimated_cost_usd);
    expect(body.cost_attribution_coverage).toBe('all');
  });
});
