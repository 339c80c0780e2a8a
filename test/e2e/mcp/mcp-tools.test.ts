import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../../helpers/service.js';
import { sendRuns } from '../../helpers/otlp-json.js';

let svc: TestService;
let projectId: string;
let otherProjectId: string;
let client: Client;

const iso = (d: Date) => d.toISOString().replace(/\.\d{3}Z$/, 'Z');
const hourStart = new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000 - 3 * 3_600_000);
const start = iso(new Date(hourStart.getTime() - 86_400_000));
const endExclusive = iso(new Date(hourStart.getTime() + 3 * 3_600_000));

async function connect(key: string): Promise<Client> {
  const c = new Client({ name: 'lookout-test', version: '1.0.0' });
  await c.connect(new StreamableHTTPClientTransport(new URL(`${svc.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
  return c;
}

async function waitForTraces(count: number) {
  for (let i = 0; i < 100; i++) {
    const res = await svc.call('POST', `/projects/${projectId}/analytics/query`, {
      body: { from: 'trace.processed', start, end_exclusive: endExclusive, measures: [{ as: 'n', agg: 'count' }] },
    });
    if (res.status === 200 && Number(res.body.rows[0].n) >= count) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('traces were not processed');
}

beforeAll(async () => {
  svc = await startTestService();
  projectId = (await svc.newProject('mcp project')).id;
  otherProjectId = (await svc.newProject('other project')).id;
  await sendRuns(svc.url, svc.adminKey, projectId, [
    { start: new Date(hourStart.getTime() + 60_000), agent: 'planner', generations: [{ model: 'gpt-4o', input: 1200, output: 300 }], tools: [{ name: 'search' }] },
    { start: new Date(hourStart.getTime() + 120_000), agent: 'planner', generations: [{ model: 'gpt-4o-mini', input: 800, output: 100 }], tools: [{ name: 'search', error: true }], failed: true },
    { start: new Date(hourStart.getTime() + 180_000), agent: 'writer', generations: [{ model: 'unknown-model-x', input: 50, output: 20 }] },
  ]);
  await waitForTraces(3);
  client = await connect(svc.adminKey);
});

afterAll(async () => {
  await client?.close();
  await svc?.stop();
});

describe('MCP analytics tools', () => {
  it('lists every documented tool, read-only, with JSON-schema inputs that take project_id', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([
      'describe_project_analytics',
      'get_project_agent_scorecard',
      'get_project_analytics_base',
      'get_project_analytics_window',
      'get_project_model_scorecard',
      'get_project_roi',
      'get_project_tool_aggregates',
      'query_project_analytics',
      'search_traces',
    ]);
    for (const tool of tools) {
      expect(tool.annotations?.readOnlyHint).toBe(true);
      expect(tool.inputSchema.required).toContain('project_id');
      expect(tool.description!.length).toBeGreaterThan(40);
    }
  });

  /** An answer without the fields that say how fresh it is (they differ between two calls). */
  function withoutFreshness(body: unknown): unknown {
    const { data_as_of: _asOf, settle_lag_ms: _lag, settle_max_lag_ms: _max, ...rest } = body as Record<string, unknown>;
    return rest;
  }

  it('answers each tool exactly as REST does', async () => {
    const windowArgs = { start, endExclusive };
    const cases: [string, Record<string, unknown>, string][] = [
      ['describe_project_analytics', {}, `/projects/${projectId}/analytics/catalog`],
      ['get_project_analytics_window', windowArgs, `/projects/${projectId}/analytics?view=window&start=${start}&endExclusive=${endExclusive}`],
      ['get_project_analytics_base', { ...windowArgs, granularity: 'week' }, `/projects/${projectId}/analytics?view=base&start=${start}&end_exclusive=${endExclusive}&granularity=week`],
      ['get_project_agent_scorecard', windowArgs, `/projects/${projectId}/analytics?view=agent_scorecard&start=${start}&endExclusive=${endExclusive}`],
      ['get_project_tool_aggregates', windowArgs, `/projects/${projectId}/analytics?view=tool_aggregates&start=${start}&endExclusive=${endExclusive}`],
      ['get_project_model_scorecard', { start, endExclusive }, `/projects/${projectId}/analytics?view=model_scorecard&start=${start}&endExclusive=${endExclusive}`],
      ['get_project_roi', {}, `/projects/${projectId}/analytics?view=roi`],
    ];
    for (const [name, args, restPath] of cases) {
      const result = await client.callTool({ name, arguments: { project_id: projectId, ...args } });
      expect(result.isError, `${name}: ${JSON.stringify(result.content)}`).toBeFalsy();
      const rest = await svc.call('GET', restPath);
      expect(rest.status, restPath).toBe(200);
      // roi takes no window: each call derives it from its own clock, so the two answers may lie a
      // second apart across a second boundary (seen under load); the window is compared within 5 s.
      const mcpBody = name === 'get_project_roi' ? withoutWindow(result.structuredContent, rest.body) : result.structuredContent;
      const restBody = name === 'get_project_roi' ? withoutWindow(rest.body, result.structuredContent) : rest.body;
      // The freshness fields move with the clock between the two calls; both answers carry them.
      if (name !== 'describe_project_analytics') {
        for (const body of [mcpBody, restBody]) expect(Object.keys(body as object), name).toEqual(expect.arrayContaining(['data_as_of', 'settle_lag_ms', 'settle_max_lag_ms']));
      }
      expect(withoutFreshness(mcpBody), name).toEqual(withoutFreshness(restBody));
      expect(JSON.parse((result.content as { text: string }[])[0].text)).toEqual(result.structuredContent);
    }
  });

  it('runs the DSL with the MCP spellings and matches the REST answer', async () => {
    const mcpArgs = {
      from: 'generation.completed', start, endExclusive,
      measures: [{ as: 'calls', agg: 'count' }, { as: 'tokens_in', agg: 'sum', field: 'input_tokens' }, { agg: 'generation_cost' }],
      groupBy: [{ field: 'model' }],
      orderBy: [{ measure: 'tokens_in', direction: 'desc' }],
    };
    const result = await client.callTool({ name: 'query_project_analytics', arguments: { project_id: projectId, ...mcpArgs } });
    expect(result.isError).toBeFalsy();
    const rest = await svc.call('POST', `/projects/${projectId}/analytics/query`, {
      body: { from: 'generation.completed', start, end_exclusive: endExclusive, measures: mcpArgs.measures, group_by: mcpArgs.groupBy, order_by: mcpArgs.orderBy },
    });
    expect(rest.status).toBe(200);
    expect(result.structuredContent).toEqual(rest.body);
    const rows = (result.structuredContent as { rows: { model: string; calls: unknown; tokens_in: unknown; priced: boolean }[] }).rows;
    expect(rows.map((r) => [r.model, Number(r.calls), Number(r.tokens_in)])).toEqual([
      ['gpt-4o', 1, 1200],
      ['gpt-4o-mini', 1, 800],
      ['unknown-model-x', 1, 50],
    ]);
    expect(rows.find((r) => r.model === 'unknown-model-x')!.priced).toBe(false);
  });

  it('searches traces with the REST list\'s arguments and answer', async () => {
    const result = await client.callTool({ name: 'search_traces', arguments: { project_id: projectId, q: 'tool:search', has_error: true, limit: 5 } });
    expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
    const rest = await svc.call('GET', `/projects/${projectId}/traces?q=tool%3Asearch&has_error=true&limit=5`);
    expect(rest.status).toBe(200);
    expect(withoutFreshness(result.structuredContent)).toEqual(withoutFreshness(rest.body));
    const traces = (result.structuredContent as { traces: { agent_name: string; match: { field: string; snippet: string } }[] }).traces;
    expect(traces.map((t) => [t.agent_name, t.match.field, t.match.snippet.includes('<mark>search</mark>')])).toEqual([['planner', 'tool', true]]);
    // The list's other filters and its total, as REST answers them.
    const filtered = await client.callTool({
      name: 'search_traces',
      arguments: { project_id: projectId, q: 'search', model: 'gpt-4o', min_duration_ms: 0, max_cost_usd: 1, include_total: true },
    });
    expect(filtered.isError, JSON.stringify(filtered.content)).toBeFalsy();
    const restFiltered = await svc.call('GET', `/projects/${projectId}/traces?q=search&model=gpt-4o&min_duration_ms=0&max_cost_usd=1&include_total=true`);
    expect(withoutFreshness(filtered.structuredContent)).toEqual(withoutFreshness(restFiltered.body));
    expect(restFiltered.body.total).toBe(1);
    // Another project of the tenant holds none of them.
    const other = await client.callTool({ name: 'search_traces', arguments: { project_id: otherProjectId, q: 'search' } });
    expect((other.structuredContent as { traces: unknown[] }).traces).toEqual([]);
    // A bad query is the REST 400's detail; a wrongly typed argument names it.
    const bad = await client.callTool({ name: 'search_traces', arguments: { project_id: projectId, q: 'x' } });
    const restBad = await svc.call('GET', `/projects/${projectId}/traces?q=x`);
    expect(restBad.status).toBe(400);
    expect(bad).toMatchObject({ isError: true, structuredContent: { detail: restBad.body.detail, code: 'validation_error' } });
    const typed = await client.callTool({ name: 'search_traces', arguments: { project_id: projectId, q: 'search', limit: 'many' } });
    expect(typed).toMatchObject({ isError: true, structuredContent: { detail: 'limit: must be integer', code: 'validation_error' } });
    const missing = await client.callTool({ name: 'search_traces', arguments: { project_id: projectId } });
    expect(missing).toMatchObject({ isError: true, structuredContent: { code: 'validation_error' } });
  });

  it('turns bad arguments into tool errors carrying the REST detail', async () => {
    const badAlias = { from: 'trace.processed', start, endExclusive, measures: [{ as: 'Bad-Alias', agg: 'count' }] };
    const result = await client.callTool({ name: 'query_project_analytics', arguments: { project_id: projectId, ...badAlias } });
    expect(result.isError).toBe(true);
    const rest = await svc.call('POST', `/projects/${projectId}/analytics/query`, {
      body: { from: 'trace.processed', start, end_exclusive: endExclusive, measures: badAlias.measures },
    });
    expect(rest.status).toBe(400);
    expect(rest.body.detail).toBe('Invalid alias: Bad-Alias');
    expect((result.content as { text: string }[])[0].text).toBe(rest.body.detail);
    expect(result.structuredContent).toEqual({ detail: 'Invalid alias: Bad-Alias', code: 'validation_error' });

    const milli = await client.callTool({ name: 'get_project_analytics_window', arguments: { project_id: projectId, start: '2026-11-01T00:00:00.500Z', endExclusive } });
    const restMilli = await svc.call('GET', `/projects/${projectId}/analytics?view=window&start=2026-11-01T00:00:00.500Z&endExclusive=${endExclusive}`);
    expect(milli.isError).toBe(true);
    expect((milli.content as { text: string }[])[0].text).toBe(restMilli.body.detail);

    const unknownKey = await client.callTool({ name: 'get_project_roi', arguments: { project_id: projectId, bogus: 1 } });
    expect(unknownKey.isError).toBe(true);
    expect((unknownKey.content as { text: string }[])[0].text).toMatch(/unknown key 'bogus'/);
    const missing = await client.callTool({ name: 'get_project_analytics_window', arguments: { project_id: projectId } });
    expect(missing.isError).toBe(true);
    expect((missing.content as { text: string }[])[0].text).toMatch(/start is required/);
  });

  it('answers another tenant\'s project, or one outside a project-limited key, like an unknown one', async () => {
    const other = await svc.newTenant('mcp-other');
    const foreign = await connect(other.adminKey);
    try {
      const result = await foreign.callTool({ name: 'describe_project_analytics', arguments: { project_id: projectId } });
      expect(result.isError).toBe(true);
      expect(result.structuredContent).toEqual({ detail: 'Project not found', code: 'not_found' });
    } finally {
      await foreign.close();
    }
    const limited = await connect(await svc.newKey('read', { projectId }));
    try {
      expect((await limited.callTool({ name: 'get_project_roi', arguments: { project_id: projectId } })).isError).toBeFalsy();
      const outside = await limited.callTool({ name: 'get_project_roi', arguments: { project_id: otherProjectId } });
      expect(outside.structuredContent).toEqual({ detail: 'Project not found', code: 'not_found' });
    } finally {
      await limited.close();
    }
  });

  it('refuses bad keys and ingest keys at the transport', async () => {
    await expect(connect('lk_not_a_key')).rejects.toThrow(/401|nauthorized/);
    await expect(connect(await svc.newKey('ingest'))).rejects.toThrow(/403|orbidden/);
    const res = await fetch(`${svc.url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ code: 'unauthorized' });
  });

  it('stamps mcp_activated_at on the first MCP use of a project, once', async () => {
    const fresh = (await svc.newProject('fresh')).id;
    expect((await svc.call('GET', `/projects/${fresh}`)).body.mcp_activated_at).toBeNull();
    await client.callTool({ name: 'describe_project_analytics', arguments: { project_id: fresh } });
    const first = (await svc.call('GET', `/projects/${fresh}`)).body.mcp_activated_at;
    expect(first).not.toBeNull();
    await client.callTool({ name: 'get_project_roi', arguments: { project_id: fresh } });
    expect((await svc.call('GET', `/projects/${fresh}`)).body.mcp_activated_at).toBe(first);
  });
});

/** The answer without its window, after checking the window lies within 5 s of the other answer's. */
function withoutWindow(body: unknown, other: unknown): unknown {
  const { window, ...rest } = body as { window: { start: string; end_exclusive: string } };
  const otherWindow = (other as { window: { start: string; end_exclusive: string } }).window;
  for (const edge of ['start', 'end_exclusive'] as const) {
    expect(Math.abs(Date.parse(window[edge]) - Date.parse(otherWindow[edge]))).toBeLessThanOrEqual(5_000);
  }
  return rest;
}
