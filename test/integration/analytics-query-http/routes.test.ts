/**
 * The analytics catalog and query over HTTP on the real service (embedded stores): auth and
 * project access, the documented error details verbatim, an injection suite that must never answer 500 nor
 * change data, tenant isolation, and the OpenAPI entries.
 */
import './mount.js';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import crypto from 'node:crypto';
import { startTestService, type TestService } from '../../helpers/service.js';
import { catalogResponse } from '../../../src/analytics/catalog.js';
import { DAY, insertGenerations, insertTools, isoSecond, type GenerationRow } from '../analytics-query/seed.js';
import { spanIdFor, traceIdFor } from '../../helpers/event-ids.js';

let svc: TestService;
let tenantId: string;
let projectId: string;
let otherProjectId: string;
const NOW = Date.now();
const window = { start: isoSecond(NOW - 7 * DAY), end_exclusive: isoSecond(NOW + DAY) };
const rows: GenerationRow[] = [];

const query = (body: unknown, options: { key?: string | null; project?: string } = {}) =>
  svc.call('POST', `/projects/${options.project ?? projectId}/analytics/query`, { body, key: options.key });

beforeAll(async () => {
  svc = await startTestService();
  tenantId = svc.service.bootstrap!.tenantId;
  projectId = (await svc.newProject('analytics')).id;
  otherProjectId = (await svc.newProject('other')).id;
  for (let i = 0; i < 40; i++) {
    rows.push({ tenant_id: tenantId, project_id: projectId, ts: NOW - (i % 5) * DAY - 1000, model: ['gpt-4o', 'claude', ''][i % 3], trace_id: traceIdFor(`t${i % 7}`), span_id: spanIdFor(`s${i}`), duration_ms: i * 10.5, input_tokens: i * 3, output_tokens: i, tps: i % 4 === 0 ? null : i, error: i % 5 === 0 ? 1 : 0 });
  }
  await insertGenerations(svc.service.deps.ch, rows);
});

afterAll(async () => {
  await svc?.stop();
});

describe('catalog route', () => {
  test('answers the catalog to read and admin keys', async () => {
    const read = await svc.newKey('read');
    for (const key of [read, svc.adminKey]) {
      const res = await svc.call('GET', `/projects/${projectId}/analytics/catalog`, { key });
      expect(res.status).toBe(200);
      expect(res.body).toEqual(catalogResponse());
    }
  });

  test('ingest key: 403; no key: 401; unknown, foreign or out-of-key project: 404', async () => {
    const ingest = await svc.newKey('ingest');
    expect((await svc.call('GET', `/projects/${projectId}/analytics/catalog`, { key: ingest })).status).toBe(403);
    expect((await svc.call('GET', `/projects/${projectId}/analytics/catalog`, { key: null })).status).toBe(401);
    const unknown = await svc.call('GET', `/projects/00000000-0000-4000-8000-000000000000/analytics/catalog`);
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('not_found');
    const other = await svc.newTenant('catalog-other');
    expect((await svc.call('GET', `/projects/${projectId}/analytics/catalog`, { key: other.adminKey })).status).toBe(404);
    const limited = await svc.newKey('read', { projectId: otherProjectId });
    expect((await svc.call('GET', `/projects/${projectId}/analytics/catalog`, { key: limited })).status).toBe(404);
    expect((await svc.call('GET', `/projects/${otherProjectId}/analytics/catalog`, { key: limited })).status).toBe(200);
  });
});

describe('query route', () => {
  test('answers rows, truncated and window', async () => {
    const read = await svc.newKey('read');
    const res = await query(
      { from: 'generation.completed', ...window, measures: [{ as: 'calls', agg: 'count' }, { as: 'input', agg: 'sum', field: 'input_tokens' }], group_by: [{ field: 'model' }] },
      { key: read },
    );
    expect(res.status).toBe(200);
    const expected = ['', 'claude', 'gpt-4o'].map((model) => {
      const list = rows.filter((r) => r.model === model);
      return { model, calls: list.length, input: list.reduce((a, r) => a + Number(r.input_tokens), 0) };
    });
    expect(res.body).toEqual({ rows: expected, truncated: false, window });
  });

  test('ingest key: 403; unknown, foreign or out-of-key project: 404', async () => {
    const body = { from: 'generation.completed', ...window, measures: [{ as: 'calls', agg: 'count' }] };
    expect((await query(body, { key: await svc.newKey('ingest') })).status).toBe(403);
    expect((await query(body, { project: '00000000-0000-4000-8000-000000000000' })).status).toBe(404);
    const other = await svc.newTenant('query-other');
    expect((await query(body, { key: other.adminKey })).status).toBe(404);
    const limited = await svc.newKey('read', { projectId: otherProjectId });
    expect((await query(body, { key: limited })).status).toBe(404);
    // The limited key's own project answers, with nothing of the first project in it.
    expect((await query(body, { key: limited, project: otherProjectId })).body.rows).toEqual([{ calls: 0 }]);
  });

  test('another tenant never sees these rows, even querying a project id it owns', async () => {
    const other = await svc.newTenant('isolation');
    const own = await svc.newProject('own', other.adminKey);
    // Rows written under the other tenant's id but this project's id, and vice versa, never cross.
    await insertGenerations(svc.service.deps.ch, [{ ...rows[0], tenant_id: other.tenantId, project_id: own.id, span_id: spanIdFor('x1'), model: 'theirs' }]);
    const res = await query({ from: 'generation.completed', ...window, measures: [{ as: 'calls', agg: 'count' }], group_by: [{ field: 'model' }] }, { key: other.adminKey, project: own.id });
    expect(res.body.rows).toEqual([{ model: 'theirs', calls: 1 }]);
  });

  test('the routes are in the OpenAPI document', async () => {
    const doc = await svc.call('GET', '/openapi.json');
    expect(doc.body.paths['/projects/{project_id}/analytics/catalog'].get).toBeDefined();
    expect(doc.body.paths['/projects/{project_id}/analytics/query'].post.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/AnalyticsQuery' });
    expect(doc.body.components.schemas.AnalyticsQuery.required).toEqual(['from', 'start', 'end_exclusive', 'measures']);
  });
});

describe("the documented error table over HTTP: 400 with the exact detail", () => {
  const b = { from: 'generation.completed', ...window, measures: [{ as: 'n', agg: 'count' }] };
  const join = (from: string, on = 'trace_id') => ({ from, on, measures: [{ as: 'j', agg: 'count' }] });
  const cases: [string, Record<string, unknown>][] = [
    ['Unknown field: nope', { ...b, group_by: [{ field: 'nope' }] }],
    ['sum is not valid for model', { ...b, measures: [{ as: 'x', agg: 'sum', field: 'model' }] }],
    ['count does not take a field', { ...b, measures: [{ as: 'x', agg: 'count', field: 'duration_ms' }] }],
    ['trace_cost is not valid on generation.completed', { ...b, measures: [{ agg: 'trace_cost' }] }],
    ['Only one cost measure is allowed', { ...b, measures: [{ agg: 'generation_cost' }, { as: 'c2', agg: 'generation_cost' }], group_by: [{ field: 'model' }] }],
    ['generation_cost requires grouping by model', { ...b, measures: [{ agg: 'generation_cost' }] }],
    ['Invalid alias: Bad-Alias', { ...b, measures: [{ as: 'Bad-Alias', agg: 'count' }] }],
    ['Duplicate alias: n', { ...b, measures: [{ as: 'n', agg: 'count' }, { as: 'n', agg: 'uniqExact', field: 'model' }] }],
    ['Unknown order field: j', { ...b, group_by: [{ field: 'trace_id' }], join: join('tool.called'), order_by: [{ measure: 'j', direction: 'desc' }] }],
    ['start and endExclusive must be second-aligned UTC', { ...b, start: '2026-11-01T00:00:00.250Z' }],
    ['Window exceeds 90 days', { ...b, start: isoSecond(NOW - 91 * DAY), end_exclusive: isoSecond(NOW) }],
    ['in filters accept at most 20 values', { ...b, filters: [{ field: 'model', op: 'in', value: Array.from({ length: 21 }, (_, i) => `m${i}`) }] }],
    ['Join must use a different event', { ...b, group_by: [{ field: 'trace_id' }], join: join('generation.completed') }],
  ];
  test.each(cases)('%s', async (detail, body) => {
    const res = await query(body);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ detail, code: 'validation_error' });
  });
});

describe('injection suite: never a 500, never executed', () => {
  const b = { from: 'tool.called', ...window, measures: [{ as: 'n', agg: 'count' }] };
  const evil = ["'; DROP TABLE lookout.event_tool_called; --", 'a`b', 'x\u0000y', '\\', "\\'", 'semi;colon', '雪\u{1F600}\u202e', '{p0:String}', '$(rm -rf /)', '%s%n', 'a'.repeat(5000)];
  const bodies: unknown[] = [
    ...evil.map((v) => ({ ...b, measures: [{ as: v, agg: 'count' }] })),
    ...evil.map((v) => ({ ...b, group_by: [{ field: v }] })),
    ...evil.map((v) => ({ ...b, group_by: [{ field: 'tool', as: v }] })),
    ...evil.map((v) => ({ ...b, measures: [{ as: 'n', agg: 'sum', field: v }] })),
    ...evil.map((v) => ({ ...b, measures: [{ as: 'n', agg: v }] })),
    ...evil.map((v) => ({ ...b, from: v })),
    ...evil.map((v) => ({ ...b, start: v })),
    ...evil.map((v) => ({ ...b, filters: [{ field: 'tool', op: v, value: 'x' }] })),
    ...evil.map((v) => ({ ...b, filters: [{ field: 'tool', op: 'eq', value: v }] })),
    ...evil.map((v) => ({ ...b, filters: [{ field: 'tool', op: 'in', value: [v, v] }] })),
    ...evil.map((v) => ({ ...b, order_by: [{ measure: v, direction: 'desc' }] })),
    ...evil.map((v) => ({ ...b, order_by: [{ measure: 'n', direction: v }] })),
    ...evil.map((v) => ({ ...b, group_by: [{ field: 'trace_id' }], join: { from: 'span.errored', on: v, measures: [{ as: 'j', agg: 'count' }] } })),
    ...evil.map((v) => ({ ...b, [v]: 1 })),
    // Objects, arrays, numbers and null where strings are expected, and the reverse.
    { ...b, from: { $ne: null } },
    { ...b, from: ['tool.called'] },
    { ...b, start: null },
    { ...b, measures: [{ as: { toString: 'n' }, agg: 'count' }] },
    { ...b, measures: [{ as: 'n', agg: ['count'] }] },
    { ...b, measures: [{ as: 'n', agg: 'sum', field: ['duration_ms'] }] },
    { ...b, filters: [{ field: { field: 'tool' }, op: 'eq', value: 'x' }] },
    { ...b, filters: [{ field: 'tool', op: 'eq', value: { $gt: '' } }] },
    { ...b, filters: [{ field: 'tool', op: 'eq', value: ['x'] }] },
    { ...b, filters: [{ field: 'tool', op: 'eq', value: true }] },
    { ...b, filters: [{ field: 'tool', op: 'in', value: [{}, []] }] },
    { ...b, filters: 'tool = 1' },
    { ...b, group_by: { field: 'tool' } },
    { ...b, group_by: [null] },
    { ...b, order_by: [{ measure: 1 }] },
    { ...b, join: 'span.errored' },
    { ...b, join: null },
    { ...b, measures: null },
    // Huge, tiny and odd numbers.
    { ...b, filters: [{ field: 'duration_ms', op: 'gt', value: 1.7976931348623157e308 }] },
    { ...b, filters: [{ field: 'duration_ms', op: 'gt', value: -1.7976931348623157e308 }] },
    { ...b, filters: [{ field: 'duration_ms', op: 'gt', value: 5e-324 }] },
    { ...b, filters: [{ field: 'output_tokens', op: 'eq', value: 2 ** 64 }] },
    { ...b, filters: [{ field: 'output_tokens', op: 'in', value: [2 ** 53 + 2, -0] }] },
    { ...b, limit: 1e308 },
    { ...b, limit: -1 },
    { ...b, limit: 2 ** 53 },
    null,
    'SELECT 1',
    42,
    [],
  ];

  test('every hostile body answers 200 or 400 with {detail, code}', async () => {
    const before = await query({ ...b });
    expect(before.status).toBe(200);
    for (const body of bodies) {
      const res = await query(body);
      expect([200, 400], JSON.stringify(body).slice(0, 200)).toContain(res.status);
      if (res.status === 400) {
        expect(typeof res.body.detail).toBe('string');
        expect(res.body.code).toBe('validation_error');
      } else {
        expect(Array.isArray(res.body.rows)).toBe(true);
      }
    }
    // Raw bodies that are not JSON, or JSON with a huge number, are 400s too.
    for (const rawBody of ['{"from": "tool.called",', '{"from": 1e999}', "{'from': 'x'}", '\u0000']) {
      const res = await svc.call('POST', `/projects/${projectId}/analytics/query`, { rawBody });
      expect(res.status, rawBody).toBe(400);
    }
    const after = await query({ ...b });
    expect(after.body).toEqual(before.body);
  });

  test('hostile values match as data', async () => {
    await insertTools(svc.service.deps.ch, evil.map((tool, i) => ({ tenant_id: tenantId, project_id: projectId, ts: NOW - DAY, tool, agent_name: '', trace_id: traceIdFor('evil'), span_id: spanIdFor(`evil${i}`), duration_ms: 1, output_tokens: 1, error: 0 as const })));
    // The API refuses NUL characters in any JSON body (400, covered above); the store-level suite
    // (analytics-query/engine.test.ts) matches a NUL value as data.
    for (const value of evil.filter((v) => !v.includes('\u0000'))) {
      const res = await query({ ...b, filters: [{ field: 'tool', op: 'eq', value }] });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.rows, JSON.stringify(value).slice(0, 40)).toEqual([{ n: 1 }]);
    }
  });
});

describe('events written by ingestion', () => {
  const str = (key: string, value: string) => ({ key, value: { stringValue: value } });
  const int = (key: string, value: number) => ({ key, value: { intValue: String(value) } });

  /** One agent trace: a root span, two model calls and a failing tool call (OTLP/JSON). */
  function agentTrace(traceId: string, startMs: number) {
    const ns = (ms: number) => (BigInt(ms) * 1_000_000n).toString();
    const id = () => crypto.randomBytes(8).toString('hex');
    const root = id();
    const span = (name: string, from: number, to: number, attributes: unknown[], extra: Record<string, unknown> = {}) => ({
      traceId, spanId: id(), parentSpanId: root, name, kind: 1, startTimeUnixNano: ns(startMs + from), endTimeUnixNano: ns(startMs + to), attributes, ...extra,
    });
    return {
      resourceSpans: [{
        resource: { attributes: [str('service.name', 'analytics-agent')] },
        scopeSpans: [{
          scope: { name: 'analytics-e2e' },
          spans: [
            { traceId, spanId: root, name: 'invoke_agent planner', kind: 1, startTimeUnixNano: ns(startMs), endTimeUnixNano: ns(startMs + 2000), attributes: [str('gen_ai.agent.name', 'planner')], status: { code: 1 } },
            span('chat gpt-4o', 10, 400, [str('gen_ai.operation.name', 'chat'), str('gen_ai.request.model', 'gpt-4o'), int('gen_ai.usage.input_tokens', 120), int('gen_ai.usage.output_tokens', 30)]),
            span('chat gpt-4o', 500, 900, [str('gen_ai.operation.name', 'chat'), str('gen_ai.request.model', 'gpt-4o'), int('gen_ai.usage.input_tokens', 200), int('gen_ai.usage.output_tokens', 50)]),
            span('execute_tool search', 1000, 1500, [str('gen_ai.operation.name', 'execute_tool'), str('gen_ai.tool.name', 'search')], { status: { code: 2, message: 'boom' } }),
          ],
        }],
      }],
    };
  }

  test('generation, tool, error and trace events of an ingested trace, re-sent twice, count once', async () => {
    const project = (await svc.newProject('ingested')).id;
    const ingestKey = await svc.newKey('ingest', { projectId: project });
    const payload = JSON.stringify(agentTrace(crypto.randomBytes(16).toString('hex'), NOW - 60_000));
    for (let i = 0; i < 2; i++) {
      const res = await fetch(`${svc.url}/v1/traces`, { method: 'POST', headers: { authorization: `Bearer ${ingestKey}`, 'content-type': 'application/json' }, body: payload });
      expect(res.status).toBe(200);
    }
    const q = (body: Record<string, unknown>) => query({ ...window, ...body }, { project });
    const deadline = Date.now() + 30_000;
    let traces: { rows: Record<string, unknown>[] } | undefined;
    while (Date.now() < deadline) {
      traces = (await q({ from: 'trace.processed', measures: [{ as: 'traces', agg: 'count' }, { as: 'input', agg: 'sum', field: 'input_tokens' }, { as: 'output', agg: 'sum', field: 'output_tokens' }, { as: 'tokens', agg: 'sum', field: 'total_tokens' }], group_by: [{ field: 'agent_name' }] })).body;
      if (traces!.rows.length > 0) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(traces!.rows).toEqual([{ agent_name: 'planner', traces: 1, input: 320, output: 80, tokens: 400 }]);
    const generations = await q({ from: 'generation.completed', measures: [{ as: 'calls', agg: 'count' }, { as: 'input', agg: 'sum', field: 'input_tokens' }, { as: 'max_ms', agg: 'max', field: 'duration_ms' }], group_by: [{ field: 'model' }] });
    expect(generations.body.rows).toEqual([{ model: 'gpt-4o', calls: 2, input: 320, max_ms: 400 }]);
    const tools = await q({ from: 'tool.called', measures: [{ as: 'calls', agg: 'count' }, { as: 'errors', agg: 'sum', field: 'error' }], group_by: [{ field: 'tool' }, { field: 'agent_name' }] });
    expect(tools.body.rows).toEqual([{ tool: 'search', agent_name: 'planner', calls: 1, errors: 1 }]);
    const errors = await q({ from: 'span.errored', measures: [{ as: 'n', agg: 'count' }], group_by: [{ field: 'span_name' }] });
    expect(errors.body.rows).toEqual([{ span_name: 'execute_tool search', n: 1 }]);
  });
});
