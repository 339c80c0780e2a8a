/**
 * The trace list's filters on model, tool, release, duration and cost, and its total
 * (GET /projects/{id}/traces?model=&tool=&release=&min_duration_ms=&max_duration_ms=&min_cost_usd=&max_cost_usd=&include_total=true):
 * runs with known models, tools, releases and lengths sent over OTLP/HTTP to two tenants (the same runs
 * in each) and a second project; every filter's answer, read page by page through the cursor, is
 * exactly the traces of the unfiltered list that satisfy it, in the same order, and `total` counts
 * them; no other project's or tenant's trace is ever listed or counted.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendRuns, type RunSpec } from '../../helpers/otlp-json.js';
import { startTestService, type TestService } from '../../helpers/service.js';
import { waitFor } from '../ingest/otlp-client.js';

interface Listed {
  id: string;
  otel_trace_id: string;
  release: string;
  models_used: string[];
  total_duration_ms: number;
  estimated_cost_usd: number | null;
}

interface Place {
  key: string;
  projectId: string;
  /** The tools each run called, by its OpenTelemetry trace id (the list does not name them). */
  toolsOf: Map<string, string[]>;
}

let svc: TestService;
let a: Place;
let b: Place;
let sibling: Place;
/** Project a's whole list, newest first, as the API answers it unfiltered. */
let all: Listed[];

const base = Date.now() - 10 * 60_000;
/** A tool whose name JSON escapes (quotes) and that is not ASCII: the filter compares the name, not its encoding. */
const QUOTED_TOOL = 'résumé "parse"';

/**
 * Ten runs: three models (one without a list price), three releases, lengths from ~0.2 s to ~3 s,
 * and tools: lookup_order (once failing), lookup_order_v2 (which lookup_order must not match),
 * send_reply, a quoted name; some runs call none.
 */
function runs(): RunSpec[] {
  const at = (i: number) => new Date(base + i * 1000);
  const gen = (model: string, ms: number) => ({ model, input: 1000, output: 100, ms });
  const tool = (name: string, error = false) => ({ name, error, ms: 50 });
  return [
    { start: at(0), agent: 'support', release: '1.0.0', generations: [gen('gpt-4o', 200)], tools: [tool('lookup_order')] },
    { start: at(1), agent: 'support', release: '2.0.0', generations: [gen('gpt-4o-mini', 1500)] },
    { start: at(2), agent: 'billing', release: '2.0.0', generations: [gen('gpt-4o', 400), gen('gpt-4o-mini', 400)], tools: [tool('lookup_order'), tool('send_reply')] },
    { start: at(3), agent: 'billing', release: '2.0.0', generations: [gen('local-llm', 3000)], tools: [tool('lookup_order_v2')] },
    { start: at(4), agent: 'support', release: '2.1.0', generations: [gen('gpt-4o-mini', 300)], tools: [tool('send_reply', true)] },
    { start: at(5), agent: 'support', release: '2.1.0', generations: [gen('gpt-4o-mini', 900)], tools: [tool(QUOTED_TOOL)] },
    { start: at(6), agent: 'billing', release: '2.1.0', generations: [gen('gpt-4o', 1200)], tools: [tool('lookup_order')] },
    { start: at(7), agent: 'billing', release: '2.0.0', generations: [gen('gpt-4o-mini', 250), gen('local-llm', 250)], tools: [tool('send_reply')] },
    { start: at(8), agent: 'support', release: '1.0.0', generations: [gen('gpt-4o-mini', 2000)], tools: [tool('lookup_order', true)] },
    { start: at(9), agent: 'support', release: '2.0.0', generations: [gen('gpt-4o', 700)] },
  ];
}

async function seed(key: string, name: string): Promise<Place> {
  const projectId = (await svc.newProject(name, key)).id;
  const sent = runs();
  const otelIds = await sendRuns(svc.url, key, projectId, sent);
  return { key, projectId, toolsOf: new Map(otelIds.map((id, i) => [id, (sent[i].tools ?? []).map((t) => t.name)])) };
}

/** The tools the listed trace's run called, as sent. */
const toolsOf = (t: Listed) => a.toolsOf.get(t.otel_trace_id) ?? [];

async function list(place: Place, params: string): Promise<{ status: number; body: any }> {
  return svc.call('GET', `/projects/${place.projectId}/traces?${params}`, { key: place.key });
}

/** Every page of the list under `params`, `limit` at a time through next_cursor, and the totals each page answered. */
async function readAll(place: Place, params: string, limit = 2): Promise<{ ids: string[]; totals: number[] }> {
  const ids: string[] = [];
  const totals: number[] = [];
  let cursor: string | null = null;
  for (let pages = 0; pages < 50; pages++) {
    const res = await list(place, `${params}&include_total=true&limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    ids.push(...res.body.traces.map((t: Listed) => t.id));
    totals.push(res.body.total);
    cursor = res.body.next_cursor;
    if (!cursor) return { ids, totals };
  }
  throw new Error('the list did not end');
}

/** The filtered list, read page by page, is exactly the unfiltered list's traces that `keep`, in order; total counts them on every page. */
async function expectFilter(params: string, keep: (t: Listed) => boolean): Promise<string[]> {
  const expected = all.filter(keep).map((t) => t.id);
  // The case must tell something: some traces in, some out.
  expect(expected.length).toBeGreaterThan(0);
  expect(expected.length).toBeLessThan(all.length);
  const { ids, totals } = await readAll(a, params);
  expect(ids).toEqual(expected);
  expect(new Set(totals)).toEqual(new Set([expected.length]));
  return ids;
}

beforeAll(async () => {
  svc = await startTestService({ TRACE_SETTLE_MS: '100' });
  a = await seed(svc.adminKey, 'filters a');
  sibling = await seed(svc.adminKey, 'filters sibling');
  const other = await svc.newTenant('filters-other');
  b = await seed(other.adminKey, 'filters b');
  for (const place of [a, sibling, b]) {
    await waitFor(async () => ((await list(place, 'limit=200')).body.traces?.length === 10 ? true : undefined), 60_000, 'ten processed traces');
  }
  all = (await list(a, 'limit=200')).body.traces;
}, 120_000);

afterAll(async () => {
  await svc?.stop();
});

describe('trace list filters', () => {
  it('lists the runs as sent: three models, three releases, one model without a price', () => {
    expect(all).toHaveLength(10);
    expect(new Set(all.flatMap((t) => t.models_used))).toEqual(new Set(['gpt-4o', 'gpt-4o-mini', 'local-llm']));
    expect(new Set(all.map((t) => t.release))).toEqual(new Set(['1.0.0', '2.0.0', '2.1.0']));
    expect(all.filter((t) => t.estimated_cost_usd === null).length).toBe(1);
    expect(all.every((t) => a.toolsOf.has(t.otel_trace_id))).toBe(true);
  });

  it('model: the traces that called it, among others or alone', async () => {
    await expectFilter('model=gpt-4o', (t) => t.models_used.includes('gpt-4o'));
    await expectFilter('model=local-llm', (t) => t.models_used.includes('local-llm'));
    // Exact: a prefix of a model's name is not that model.
    expect((await list(a, 'model=gpt-4')).body.traces).toEqual([]);
  });

  it('tool: the traces that called it, among other tools or alone, whether the call failed or not', async () => {
    await expectFilter('tool=lookup_order', (t) => toolsOf(t).includes('lookup_order'));
    await expectFilter('tool=send_reply', (t) => toolsOf(t).includes('send_reply'));
    const quoted = await expectFilter(`tool=${encodeURIComponent(QUOTED_TOOL)}`, (t) => toolsOf(t).includes(QUOTED_TOOL));
    expect(quoted).toHaveLength(1);
    // Exact: neither a prefix of a tool's name nor a longer name that starts with it.
    expect((await list(a, 'tool=lookup')).body.traces).toEqual([]);
    expect((await readAll(a, 'tool=lookup_order_v2')).ids).toHaveLength(1);
    // A name no run called lists nothing and counts 0.
    expect((await list(a, 'tool=no_such_tool&include_total=true')).body).toMatchObject({ traces: [], total: 0, next_cursor: null });
    // The OpenAPI document declares it from the same schema ajv validates.
    const parameters = (await svc.call('GET', '/openapi.json')).body.paths['/projects/{project_id}/traces'].get.parameters as { name: string; in: string; schema: object }[];
    expect(parameters.find((p) => p.name === 'tool')).toMatchObject({ in: 'query', schema: { type: 'string', minLength: 1, maxLength: 200 } });
  });

  it('release: exact', async () => {
    await expectFilter('release=2.0.0', (t) => t.release === '2.0.0');
    expect((await list(a, 'release=2.0')).body.traces).toEqual([]);
  });

  it('duration: inclusive bounds, at a trace\'s exact figure', async () => {
    const durations = all.map((t) => t.total_duration_ms).sort((x, y) => x - y);
    const [low, high] = [durations[3], durations[7]];
    await expectFilter(`min_duration_ms=${low}`, (t) => t.total_duration_ms >= low);
    await expectFilter(`max_duration_ms=${high}`, (t) => t.total_duration_ms <= high);
    await expectFilter(`min_duration_ms=${low}&max_duration_ms=${high}`, (t) => t.total_duration_ms >= low && t.total_duration_ms <= high);
    const one = await expectFilter(`min_duration_ms=${low}&max_duration_ms=${low}`, (t) => t.total_duration_ms === low);
    expect(one.length).toBeGreaterThanOrEqual(1);
  });

  it('cost: inclusive bounds; a trace without a cost is outside every bound', async () => {
    const costs = all.map((t) => t.estimated_cost_usd).filter((c): c is number => c !== null).sort((x, y) => x - y);
    const [low, high] = [costs[2], costs[6]];
    await expectFilter(`min_cost_usd=${low}`, (t) => t.estimated_cost_usd !== null && t.estimated_cost_usd >= low);
    await expectFilter(`max_cost_usd=${high}`, (t) => t.estimated_cost_usd !== null && t.estimated_cost_usd <= high);
    await expectFilter('min_cost_usd=0', (t) => t.estimated_cost_usd !== null);
    await expectFilter(`min_cost_usd=${low}&max_cost_usd=${low}`, (t) => t.estimated_cost_usd === low);
  });

  it('combines with each other, the agent filter and a search, paging exactly', async () => {
    const minMs = 500;
    await expectFilter(`model=gpt-4o-mini&release=2.0.0&min_duration_ms=${minMs}`, (t) => t.models_used.includes('gpt-4o-mini') && t.release === '2.0.0' && t.total_duration_ms >= minMs);
    const agentRows = (await list(a, 'agent_name=billing&limit=200')).body.traces.map((t: Listed) => t.id);
    await expectFilter('agent_name=billing&model=gpt-4o', (t) => agentRows.includes(t.id) && t.models_used.includes('gpt-4o'));
    await expectFilter('agent_name=billing&tool=send_reply', (t) => agentRows.includes(t.id) && toolsOf(t).includes('send_reply'));
    await expectFilter('tool=lookup_order&model=gpt-4o-mini', (t) => toolsOf(t).includes('lookup_order') && t.models_used.includes('gpt-4o-mini'));
    const failing = (await list(a, 'has_error=true&limit=200')).body.traces.map((t: Listed) => t.id);
    await expectFilter('tool=lookup_order&has_error=true', (t) => failing.includes(t.id) && toolsOf(t).includes('lookup_order'));
    // A search for the model's name (in the span names) narrowed by release: total counts the search's matches.
    const expected = all.filter((t) => t.models_used.includes('local-llm') && t.release === '2.0.0').map((t) => t.id);
    expect(expected.length).toBeGreaterThan(0);
    const found = await waitFor(async () => {
      const read = await readAll(a, 'q=local&release=2.0.0', 1);
      return read.ids.length === expected.length ? read : undefined;
    }, 30_000, 'the search to find the local-llm runs');
    expect(found.ids).toEqual(expected);
    expect(new Set(found.totals)).toEqual(new Set([expected.length]));
  });

  it('total: only with include_total, counting every page, the same for every tenant\'s own traces only', async () => {
    const plain = await list(a, 'limit=3');
    expect(plain.body).not.toHaveProperty('total');
    const first = await list(a, 'limit=3&include_total=true');
    expect(first.body.total).toBe(10);
    const second = await list(a, `limit=3&include_total=true&cursor=${encodeURIComponent(first.body.next_cursor)}`);
    expect(second.body.total).toBe(10);
    for (const place of [b, sibling]) {
      const other = await readAll(place, 'model=gpt-4o');
      expect(other.ids.filter((id) => all.some((t) => t.id === id))).toEqual([]);
      expect(other.totals[0]).toBe(all.filter((t) => t.models_used.includes('gpt-4o')).length);
      const byTool = await readAll(place, 'tool=lookup_order');
      expect(byTool.ids.filter((id) => all.some((t) => t.id === id))).toEqual([]);
      expect(byTool.totals[0]).toBe(all.filter((t) => toolsOf(t).includes('lookup_order')).length);
    }
    // Another tenant's key cannot list project a, filtered or not.
    expect((await svc.call('GET', `/projects/${a.projectId}/traces?model=gpt-4o&include_total=true`, { key: b.key })).status).toBe(404);
    expect((await svc.call('GET', `/projects/${a.projectId}/traces?tool=lookup_order&include_total=true`, { key: b.key })).status).toBe(404);
  });

  it('answers 400 naming the parameter for a bound that is not a finite non-negative number, or a min above its max', async () => {
    const cases: [string, RegExp][] = [
      ['min_duration_ms=-1', /min_duration_ms/],
      ['max_cost_usd=abc', /max_cost_usd/],
      ['max_duration_ms=1e13', /max_duration_ms/],
      ['min_cost_usd=Infinity', /min_cost_usd/],
      ['min_duration_ms=10&max_duration_ms=5', /^min_duration_ms: must not exceed max_duration_ms$/],
      ['min_cost_usd=0.5&max_cost_usd=0.1', /^min_cost_usd: must not exceed max_cost_usd$/],
      ['model=', /model/],
      ['tool=', /tool/],
      [`tool=${'t'.repeat(201)}`, /tool/],
      [`release=${'r'.repeat(201)}`, /release/],
      ['include_total=maybe', /include_total/],
    ];
    for (const [params, detail] of cases) {
      const res = await list(a, params);
      expect(res.status, params).toBe(400);
      expect(res.body.detail, params).toMatch(detail);
      expect(typeof res.body.code).toBe('string');
    }
  });
});
