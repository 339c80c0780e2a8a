/**
 * The REST surface of the preset views: every 400 names its parameter, every deprecated alias
 * answers exactly what ?view= answers, foreign projects are 404, and an empty project answers
 * complete zero series.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileBodySchema } from '../../../src/platform/http/validation.js';
import { baseInstant, dayAt, iso } from './dataset.js';
import { buckets } from './expected.js';
import { seedThroughIngestion, startHarness, type Harness } from './harness.js';

let h: Harness;
let projectId: string;
const base = baseInstant();
const start = iso(dayAt(base, -5));
const end = iso(dayAt(base, 12));
const ALIASES: Record<string, string> = {
  general: 'general',
  base: 'base',
  window: 'window',
  model_scorecard: 'model-scorecard',
  agent_scorecard: 'agent-scorecard',
  tool_aggregates: 'tool-aggregates',
  roi: 'roi',
};
/** Parameters that make each view answer about the seeded data without depending on the clock. */
const PARAMS: Record<string, string> = {
  general: `hours=400&endExclusive=${end}&granularity=week`,
  base: `start=${start}&endExclusive=${end}&granularity=week`,
  window: `start=${start}&end_exclusive=${end}&granularity=month`,
  model_scorecard: `start=${start}&end=${iso(new Date(dayAt(base, 12).getTime() - 1000))}`,
  agent_scorecard: `start=${start}&endExclusive=${end}`,
  tool_aggregates: `start=${start}&endExclusive=${end}`,
  roi: 'granularity=month',
};

beforeAll(async () => {
  h = await startHarness();
  projectId = (await h.svc.newProject('views-http')).id;
  await seedThroughIngestion(h.svc, projectId, base);
});

afterAll(async () => {
  await h?.stop();
});

/** A view answer without its freshness fields (data_as_of, settle_lag_ms): the panel itself. */
function panel(body: Record<string, unknown>): Record<string, unknown> {
  const { data_as_of: _asOf, settle_lag_ms: _lag, settle_max_lag_ms: _max, ...rest } = body;
  return rest;
}

describe('deprecated per-view paths', () => {
  it.each(Object.keys(ALIASES))('/%s answers exactly what ?view= answers', async (view) => {
    const viaQuery = await h.svc.call('GET', `/projects/${projectId}/analytics?view=${view}&${PARAMS[view]}`);
    const viaAlias = await h.svc.call('GET', `/projects/${projectId}/${ALIASES[view]}?${PARAMS[view]}`);
    expect(viaQuery.status).toBe(200);
    expect(viaAlias.status).toBe(200);
    // roi's window ends "now": equal up to the second the two requests were answered in.
    // The freshness fields are read per request (the settle lag moves): compared apart.
    if (view === 'roi') {
      expect({ ...panel(viaAlias.body), window: null }).toEqual({ ...panel(viaQuery.body), window: null });
    } else {
      expect(panel(viaAlias.body)).toEqual(panel(viaQuery.body));
    }
    expect(Object.keys(viaAlias.body)).toEqual(expect.arrayContaining(['data_as_of', 'settle_lag_ms', 'settle_max_lag_ms']));
    expect(viaQuery.body).toHaveProperty(view === 'general' ? 'top_models' : view === 'roi' ? 'state' : 'window');
  });

  it('omitting view answers the general payload', async () => {
    const omitted = await h.svc.call('GET', `/projects/${projectId}/analytics?${PARAMS.general}`);
    const general = await h.svc.call('GET', `/projects/${projectId}/analytics?view=general&${PARAMS.general}`);
    expect(panel(omitted.body)).toEqual(panel(general.body));
  });

  it('an alias refuses a contradicting view parameter', async () => {
    const res = await h.svc.call('GET', `/projects/${projectId}/base?view=window&${PARAMS.base}`);
    expect(res.status).toBe(400);
    expect(res.body.detail).toMatch(/^view: /);
  });

  it('each view answers only its own panel', async () => {
    const keys: Record<string, string[]> = {
      general: ['completion_tokens', 'errors', 'prompt_tokens', 'requests', 'speed', 'speed_percentiles_timeseries', 'top_models', 'totals', 'window'],
      base: ['cost', 'cost_by_model', 'cost_by_model_coverage', 'cost_by_model_source', 'errors', 'tokens', 'traces', 'window'],
      window: ['cost', 'coverage', 'latency', 'totals', 'window'],
      agent_scorecard: ['rows', 'window'],
      tool_aggregates: ['error_concentration', 'failing_volume', 'granularity', 'rows', 'volume', 'window'],
      roi: ['base', 'counts', 'state', 'window'],
    };
    for (const [view, expected] of Object.entries(keys)) {
      const res = await h.svc.call('GET', `/projects/${projectId}/analytics?view=${view}&${PARAMS[view]}`);
      expect(Object.keys(panel(res.body)).sort(), view).toEqual(expected);
      // Beside the panel, how fresh it is (docs/analytics.md "Freshness").
      expect(typeof res.body.settle_lag_ms, view).toBe('number');
      expect(Date.parse(res.body.data_as_of), view).toBeLessThanOrEqual(Date.now());
    }
  });
});

describe('400 with a detail naming the parameter', () => {
  const cases: [string, RegExp][] = [
    ['view=bogus', /^view: must be one of general, base, window, model_scorecard, agent_scorecard, tool_aggregates, roi$/],
    ['view=base', /^start is required$/],
    [`view=base&start=${start}`, /^endExclusive is required/],
    [`view=window&endExclusive=${end}`, /^start is required$/],
    [`view=agent_scorecard&start=yesterday&endExclusive=${end}`, /^start: /],
    [`view=tool_aggregates&start=${start}&endExclusive=2026-13-01T00:00:00Z`, /^endExclusive: /],
    [`view=base&start=2026-01-01T00:00:00.500Z&endExclusive=2026-01-02T00:00:00Z`, /^start: must be ISO 8601 UTC at a whole second/],
    [`view=base&start=2026-01-01T00:00:00%2B02:00&endExclusive=2026-01-02T00:00:00Z`, /^start: must be ISO 8601 UTC at a whole second/],
    [`view=base&start=2026-01-01T00:00:00&endExclusive=2026-01-02T00:00:00Z`, /^start: must be ISO 8601 UTC at a whole second/],
    [`view=base&start=2026-01-02T00:00:00Z&end_exclusive=2026-01-01T00:00:00Z`, /^end_exclusive: must be after start$/],
    [`view=base&start=2026-01-01T00:00:00Z&endExclusive=2026-06-01T00:00:00Z`, /^endExclusive: the window from start exceeds 90 days$/],
    [`view=base&start=${start}&endExclusive=${end}&end_exclusive=${start}`, /^endExclusive: endExclusive and end_exclusive disagree/],
    [`view=window&start=${start}&endExclusive=${end}&granularity=year`, /^granularity: must be one of day, week, month$/],
    ['view=general&hours=0', /^hours: must be a whole number of hours from 1 to 2160$/],
    ['view=general&hours=1.5', /^hours: /],
    ['view=general&hours=99999', /^hours: /],
    ['view=general&endExclusive=soon', /^endExclusive: /],
    ['view=model_scorecard', /^start is required$/],
    [`view=model_scorecard&start=${start}&end=${end}&endExclusive=${end}`, /^end: send end or endExclusive, not both$/],
    [`view=model_scorecard&start=${start}&end=2026-01-01T00:00:00.123Z`, /^end: must be ISO 8601 UTC at a whole second/],
    ['view=model_scorecard&start=2099-01-01T00:00:00Z', /^start: must not be in the future/],
    ['view=roi&granularity=hour', /^granularity: /],
  ];
  it.each(cases)('%s', async (query, detail) => {
    const res = await h.svc.call('GET', `/projects/${projectId}/analytics?${query}`);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('validation_error');
    expect(res.body.detail).toMatch(detail);
  });

  it('answers the same 400 on the alias path', async () => {
    const res = await h.svc.call('GET', `/projects/${projectId}/agent-scorecard?start=${start}`);
    expect(res.status).toBe(400);
    expect(res.body.detail).toMatch(/^endExclusive is required/);
  });
});

describe('access', () => {
  it('404 for another tenant’s project, on the route and on every alias', async () => {
    const other = await h.svc.newTenant('elsewhere');
    const res = await h.svc.call('GET', `/projects/${projectId}/analytics?${PARAMS.general}`, { key: other.adminKey });
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('not_found');
    for (const alias of Object.values(ALIASES)) {
      expect((await h.svc.call('GET', `/projects/${projectId}/${alias}`, { key: other.adminKey })).status).toBe(404);
    }
  });

  it('404 for a key limited to another project; read keys may read', async () => {
    const elsewhere = await h.svc.newProject('elsewhere');
    const limited = await h.svc.newKey('read', { projectId: elsewhere.id });
    expect((await h.svc.call('GET', `/projects/${projectId}/analytics?${PARAMS.window}&view=window`, { key: limited })).status).toBe(404);
    const reader = await h.svc.newKey('read');
    expect((await h.svc.call('GET', `/projects/${projectId}/analytics?${PARAMS.window}&view=window`, { key: reader })).status).toBe(200);
    const ingest = await h.svc.newKey('ingest');
    expect((await h.svc.call('GET', `/projects/${projectId}/analytics`, { key: ingest })).status).toBe(403);
    expect((await h.svc.call('GET', `/projects/${projectId}/analytics`, { key: null })).status).toBe(401);
  });
});

describe('an empty project', () => {
  it('answers every view with complete zero series, empty rows and null rates', async () => {
    const empty = (await h.svc.newProject('empty')).id;
    const get = async (view: string) => {
      const res = await h.svc.call('GET', `/projects/${empty}/analytics?view=${view}&${PARAMS[view]}`);
      expect(res.status, view).toBe(200);
      return res.body;
    };
    const w = { start: new Date(start), endExclusive: new Date(end) };
    const weeks = buckets(w, 'week');

    const general = await get('general');
    const generalWeeks = buckets({ start: new Date(new Date(end).getTime() - 400 * 3_600_000), endExclusive: new Date(end) }, 'week');
    for (const key of ['requests', 'errors', 'speed', 'prompt_tokens', 'completion_tokens']) {
      expect(general[key]).toEqual(generalWeeks.map((date) => ({ date, value: 0 })));
    }
    expect(general.top_models).toEqual([]);
    expect(general.speed_percentiles_timeseries).toEqual(generalWeeks.map((date) => ({ date, p50: null, p95: null, p99: null })));
    expect(general.totals).toMatchObject({ requests: 0, errors: 0, avg_speed: null, prompt_tokens: 0, completion_tokens: 0, speed_percentiles: { p50: null, p95: null, p99: null } });
    expect(general.totals).toMatchObject({ estimated_cost_usd: 0, total_tokens: 0, priced_token_share: 1, cost_source: 'stored', cost_lower_bound: false });

    const baseView = await get('base');
    expect(baseView.traces).toEqual(weeks.map((date) => ({ date, value: 0 })));
    expect(baseView.errors).toEqual(weeks.map((date) => ({ date, span_errors: 0, failed_runs: 0, root_status_known: 0, root_absent: 0, traces: 0 })));
    expect(baseView.tokens).toEqual(weeks.map((date) => ({ date, input_tokens: 0, output_tokens: 0 })));
    expect(baseView.cost.map((c: { date: string; traces: number; estimated_cost_usd: number }) => [c.date, c.traces, c.estimated_cost_usd])).toEqual(weeks.map((d) => [d, 0, 0]));
    expect(baseView.cost_by_model).toEqual(weeks.map((date) => ({ date, values: {}, coverage: 'all', attributed_traces: 0, traces: 0 })));

    const window = await get('window');
    expect(window.totals).toEqual({ p50: null, p95: null, failed_runs: 0, root_status_known: 0, root_absent: 0, traces: 0, error_rate: null });
    expect(window.latency.points).toEqual(buckets(w, 'month').map((date) => ({ date, p50: null, p95: null })));
    expect(window.coverage.window_traces).toBe(0);
    expect(Object.values(window.coverage.capability).every((v) => v === false)).toBe(true);
    expect(Object.values(window.coverage.window).every((v) => v === null)).toBe(true);
    expect(window.cost.cost_trace_counts).toEqual({ stored: 0, live_priced: 0, unbackfilled: 0, stored_unpriced: 0, stored_unavailable: 0, breakdown_truncated: 0 });

    expect((await get('agent_scorecard')).rows).toEqual([]);
    const tools = await get('tool_aggregates');
    expect(tools.rows).toEqual([]);
    expect(tools.error_concentration).toEqual([]);
    expect(tools.volume).toEqual(buckets(w, 'day').map((date) => ({ date, value: 0, by_tool: {} })));
    expect(tools.failing_volume).toEqual(tools.volume);
    const models = await get('model_scorecard');
    expect(models.rows).toEqual([]);
    expect(models).toMatchObject({ estimated_cost_usd: 0, total_tokens: 0, cost_attribution_coverage: 'all', cost_attribution_source: 'query_time' });
    const roi = await get('roi');
    expect(roi.state).toBe('connect');
    for (const series of Object.values<{ value: number }[]>(roi.base)) expect(series.every((p) => p.value === 0)).toBe(true);
  });
});

describe('the OpenAPI document', () => {
  it('describes every view answer, seeded and empty, as one of its payloads (anyOf: an empty model_scorecard also fits the agent_scorecard schema)', async () => {
    const doc = (await h.svc.call('GET', '/openapi.json')).body;
    const schema = doc.paths['/projects/{project_id}/analytics'].get.responses['200'].content['application/json'].schema;
    const validate = compileBodySchema(schema, doc.components.schemas);
    const empty = (await h.svc.newProject('openapi-empty')).id;
    for (const project of [projectId, empty]) {
      for (const view of Object.keys(PARAMS)) {
        const res = await h.svc.call('GET', `/projects/${project}/analytics?view=${view}&${PARAMS[view]}`);
        expect(res.status, view).toBe(200);
        expect(validate(res.body), `${view} ${project === empty ? 'empty' : 'seeded'}: ${JSON.stringify(validate.errors)}`).toBe(true);
      }
    }
  });
});
