/**
 * Retention per project against the real stores (docs/data-lifecycle.md "Retention"): the routes'
 * validation and scopes, and the engine's TTL doing the work. Runs with content (agent input and
 * output, a log record) are stored 20 days back and an hour back; a project's retention is then
 * shortened and the engine forced to apply its TTL (OPTIMIZE … FINAL, never by waiting): the old
 * run's content is gone from every table while its figures stay, reads say `content_expired`, a
 * shorter analytics_days removes the old run whole, and another project of the tenant, and another
 * tenant, keep everything.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../../helpers/service.js';
import { RETENTION_TABLES } from '../../../src/lifecycle/retention-engine.js';
import { build, send, settled, traceIdsOf, until, type BuiltRun } from './deletion-harness.js';

let svc: TestService;

const dayMs = 86_400_000;
const now = Date.now();
const oldStart = new Date(now - 20 * dayMs);
const recentStart = new Date(now - 3_600_000);
const windowStart = new Date(now - 30 * dayMs).toISOString().replace(/\.\d{3}Z$/, 'Z');
const windowEnd = new Date(Math.ceil((now + 60_000) / 1000) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** An old and a recent run, each with its own words in input and output (searchable), and a log record on the old root span. */
function runs(): BuiltRun[] {
  return build([
    { start: oldStart, agent: 'support', input: 'please cancel the walrus subscription', output: 'walrus plan cancelled', generations: [{ model: 'gpt-4o', input: 100, output: 20 }], tools: [{ name: 'search' }] },
    { start: recentStart, agent: 'support', input: 'where is my pelican parcel', output: 'pelican parcel arrives today', generations: [{ model: 'gpt-4o', input: 50, output: 10 }], tools: [{ name: 'search' }] },
  ]);
}

/**
 * Sends a GenAI log record on the old run's root span and then the runs, to a project, and waits
 * until both settled. The record goes first: a record stored after its trace settled queues the trace
 * as a late span without its root, due only TRACE_MAX_WAIT_MS (60 s) later, and on a loaded machine
 * the old run can settle (200 ms after its spans) before a record sent after it arrives. Sent first,
 * its queue row becomes due 200 ms after the spans, which bring the root.
 */
async function seed(projectId: string, key = svc.adminKey): Promise<BuiltRun[]> {
  const built = runs();
  const old = JSON.parse(built[0].body);
  const root = old.resourceSpans[0].scopeSpans[0].spans[0];
  const message = { kvlistValue: { values: [{ key: 'content', value: { stringValue: 'a walrus question in a log record' } }] } };
  const record = { timeUnixNano: root.startTimeUnixNano, traceId: root.traceId, spanId: root.spanId, eventName: 'gen_ai.user.message', body: message };
  const res = await fetch(`${svc.url}/v1/logs`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}`, 'x-lookout-project': projectId },
    body: JSON.stringify({ resourceLogs: [{ scopeLogs: [{ logRecords: [record] }] }] }),
  });
  expect(res.status).toBe(200);
  await send({ ...svc, adminKey: key }, projectId, built);
  await settled({ ...svc, call: (m, p, o) => svc.call(m, p, { key, ...o }) }, projectId, built.length);
  return built;
}

async function rows<T>(query: string, params: Record<string, unknown>): Promise<T[]> {
  const result = await svc.service.deps.ch.client.query({ query, query_params: params, format: 'JSONEachRow', clickhouse_settings: { output_format_json_quote_64bit_integers: 0 } });
  return result.json<T>();
}

/** What a trace holds in each table: rows, the content columns, and the retention each row carries. */
async function stored(projectId: string, traceId: string): Promise<Record<string, unknown>> {
  const ch = svc.service.deps.ch;
  const p = { p: projectId, t: traceId };
  const count = async (table: string, idType = 'String') =>
    Number((await rows<{ n: number }>(`SELECT count() AS n FROM ${ch.table(table)} WHERE project_id = {p:String} AND trace_id = {t:${idType}}`, p))[0].n);
  const spans = await rows<{ attributes: string; events: string; duration_ms: number; input_tokens: number; analytics_days: number; content_days: number }>(
    `SELECT attributes, events, duration_ms, input_tokens, analytics_days, content_days FROM ${ch.table('spans')} WHERE project_id = {p:String} AND trace_id = {t:String}`,
    p,
  );
  const [trace] = await rows<{ agent_input: string | null; agent_output: string | null; agent_input_display: string; total_tokens: number; total_duration_ms: number; models_used: string[] }>(
    `SELECT agent_input, agent_output, agent_input_display, total_tokens, total_duration_ms, models_used FROM ${ch.table('traces')} FINAL WHERE project_id = {p:String} AND trace_id = {t:String}`,
    p,
  );
  return {
    spans: spans.length,
    spansWithAttributes: spans.filter((s) => s.attributes !== '' && s.attributes !== '{}').length,
    spanTokens: spans.reduce((sum, s) => sum + Number(s.input_tokens), 0),
    retention: [...new Set(spans.map((s) => `${s.analytics_days}/${s.content_days}`))],
    trace: trace ?? null,
    span_logs: await count('span_logs'),
    trace_content: await count('trace_content'),
    event_trace_processed: await count('event_trace_processed'),
    event_generation_completed: await count('event_generation_completed', 'UUID'),
    event_tool_called: await count('event_tool_called', 'UUID'),
  };
}

/** The engine applies every TTL now: each table merged whole (what its background merges do in time). */
async function forceTtl(): Promise<void> {
  const ch = svc.service.deps.ch;
  for (const table of RETENTION_TABLES) await ch.client.command({ query: `OPTIMIZE TABLE ${ch.table(table)} FINAL` });
}

async function generationTokens(projectId: string, key = svc.adminKey): Promise<number> {
  const res = await svc.call('POST', `/projects/${projectId}/analytics/query`, {
    key,
    body: { from: 'generation.completed', start: windowStart, end_exclusive: windowEnd, measures: [{ as: 'tokens', agg: 'sum', field: 'input_tokens' }, { as: 'calls', agg: 'count' }] },
  });
  expect(res.status).toBe(200);
  return Number(res.body.rows[0].tokens);
}

async function search(projectId: string, word: string): Promise<string[]> {
  const res = await svc.call('GET', `/projects/${projectId}/traces?q=${word}`);
  expect(res.status).toBe(200);
  return res.body.traces.map((t: { id: string }) => t.id);
}

beforeAll(async () => {
  svc = await startTestService();
}, 120_000);

afterAll(async () => {
  await svc?.stop();
});

describe('retention routes', () => {
  it('answers 90 days until set, validates input, and checks scopes', async () => {
    const project = (await svc.newProject('retention routes')).id;
    const fresh = await svc.call('GET', `/projects/${project}/retention`);
    expect(fresh.status).toBe(200);
    expect(fresh.body).toEqual({ analytics_days: 90, content_days: 90, source: 'default', updated_at: null });

    for (const [body, field] of [
      [{ analytics_days: 30, content_days: 31 }, 'content_days'],
      [{ analytics_days: 0, content_days: 1 }, 'analytics_days'],
      [{ analytics_days: 91, content_days: 10 }, 'analytics_days'],
      [{ analytics_days: 30 }, 'content_days'],
      [{ analytics_days: '30', content_days: 10 }, 'analytics_days'],
      [{ analytics_days: 30, content_days: 10, extra: 1 }, 'extra'],
    ] as const) {
      const res = await svc.call('PUT', `/projects/${project}/retention`, { body });
      expect([JSON.stringify(body), res.status, res.body.code]).toEqual([JSON.stringify(body), 400, 'validation_error']);
      expect(res.body.detail).toContain(field);
    }
    // Nothing half-written by a refused change.
    expect((await svc.call('GET', `/projects/${project}/retention`)).body.source).toBe('default');

    const read = await svc.newKey('read');
    expect((await svc.call('GET', `/projects/${project}/retention`, { key: read })).status).toBe(200);
    const refused = await svc.call('PUT', `/projects/${project}/retention`, { key: read, body: { analytics_days: 30, content_days: 10 } });
    expect([refused.status, refused.body.code]).toEqual([403, 'forbidden']);
    expect((await svc.call('GET', '/retention', { key: read })).status).toBe(403);
    expect((await svc.call('PUT', '/retention', { key: read, body: { analytics_days: 30, content_days: 10 } })).status).toBe(403);

    // A project-limited admin key: its project only, and no tenant-wide default.
    const other = (await svc.newProject('retention other')).id;
    const limited = await svc.newKey('admin', { projectId: other });
    expect((await svc.call('GET', `/projects/${project}/retention`, { key: limited })).status).toBe(404);
    expect((await svc.call('PUT', `/projects/${project}/retention`, { key: limited, body: { analytics_days: 30, content_days: 10 } })).status).toBe(404);
    expect((await svc.call('GET', '/retention', { key: limited })).status).toBe(403);

    // Another tenant sees the project as unknown.
    const stranger = await svc.newTenant('retention stranger');
    expect((await svc.call('GET', `/projects/${project}/retention`, { key: stranger.adminKey })).status).toBe(404);

    const set = await svc.call('PUT', `/projects/${project}/retention`, { body: { analytics_days: 60, content_days: 60 } });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({ analytics_days: 60, content_days: 60, source: 'project' });
    expect(Date.parse(set.body.updated_at)).toBeGreaterThan(now - 60_000);
    expect((await svc.call('GET', `/projects/${project}/retention`, { key: read })).body).toEqual(set.body);

    // The openapi document carries the shapes.
    const doc = (await svc.call('GET', '/openapi.json')).body;
    expect(doc.paths['/projects/{project_id}/retention'].put.requestBody.content['application/json'].schema).toBeDefined();
    expect(doc.components.schemas.RetentionInput.properties.analytics_days).toMatchObject({ minimum: 1, maximum: 90 });
  });
});

describe('retention in the engine', () => {
  it('expires content before figures, applies a shorter setting to stored rows, and leaves other projects and tenants alone', async () => {
    const shortened = (await svc.newProject('retention shortened')).id;
    const sibling = (await svc.newProject('retention sibling')).id;
    const stranger = await svc.newTenant('retention other tenant');
    const strangerProject = (await svc.newProject('retention stranger', stranger.adminKey)).id;
    const [oldRun, recentRun] = await seed(shortened);
    const [siblingOld] = await seed(sibling);
    const [strangerOld] = await seed(strangerProject, stranger.adminKey);
    const [oldId, recentId] = traceIdsOf(shortened, [oldRun, recentRun]);
    const siblingOldId = traceIdsOf(sibling, [siblingOld])[0];
    const strangerOldId = traceIdsOf(strangerProject, [strangerOld])[0];

    const before = await stored(shortened, oldId);
    expect(before).toMatchObject({ spans: 3, spansWithAttributes: 3, retention: ['90/90'], span_logs: 1 });
    expect((before.trace as { agent_input: string }).agent_input).toContain('walrus');
    expect(before.trace_content).toBeGreaterThan(0);
    const tokensBefore = await generationTokens(shortened);
    expect(tokensBefore).toBe(150);
    expect(await search(shortened, 'walrus')).toEqual([oldId]);

    // content_days 10: the run of 20 days ago keeps its figures and loses its content.
    const put = await svc.call('PUT', `/projects/${shortened}/retention`, { body: { analytics_days: 30, content_days: 10 } });
    expect(put.status).toBe(200);
    // Reads hide expired content at once, before the engine removed anything.
    const hidden = await svc.call('GET', `/traces/${oldId}`);
    expect(hidden.body).toMatchObject({ content_expired: true, agent_input: null, agent_output: null, agent_input_display: '' });
    expect(await search(shortened, 'walrus')).toEqual([]);

    await forceTtl();
    const after = await stored(shortened, oldId);
    expect(after).toMatchObject({
      spans: 3,
      spansWithAttributes: 0,
      spanTokens: before.spanTokens,
      retention: ['30/10'],
      trace: { agent_input: null, agent_output: null, agent_input_display: '', total_tokens: 120, total_duration_ms: (before.trace as { total_duration_ms: number }).total_duration_ms },
      span_logs: 0,
      trace_content: 0,
      event_trace_processed: before.event_trace_processed,
      event_generation_completed: before.event_generation_completed,
      event_tool_called: before.event_tool_called,
    });
    expect((after.trace as { models_used: string[] }).models_used).toEqual(['gpt-4o']);
    // The recent run keeps everything, with the project's new retention on its rows.
    const recent = await stored(shortened, recentId);
    expect(recent).toMatchObject({ spansWithAttributes: 3, retention: ['30/10'] });
    expect(recent.trace_content).toBeGreaterThan(0);
    expect((recent.trace as { agent_input: string }).agent_input).toContain('pelican');

    // The API: the old trace is there with its figures, without content; never an error.
    const old = await svc.call('GET', `/traces/${oldId}`);
    expect(old.status).toBe(200);
    expect(old.body).toMatchObject({ content_expired: true, agent_input: null, agent_output: null, agent_input_display: '', total_duration_ms: (before.trace as { total_duration_ms: number }).total_duration_ms });
    expect(old.body.stats).toMatchObject({ span_count: 3, total_tokens: 120, models_used: ['gpt-4o'] });
    for (const span of old.body.spans) expect([span.name, span.attributes, span.events]).toEqual([span.name, {}, []]);
    const fresh = await svc.call('GET', `/traces/${recentId}`);
    expect(fresh.body.content_expired).toBe(false);
    expect(JSON.stringify(fresh.body.agent_input)).toContain('pelican');
    const list = (await svc.call('GET', `/projects/${shortened}/traces`)).body.traces as { id: string; content_expired: boolean; agent_input_display: string; tool_call_count: number }[];
    expect(list.find((t) => t.id === oldId)).toMatchObject({ content_expired: true, agent_input_display: '', tool_call_count: 1 });
    expect(list.find((t) => t.id === recentId)).toMatchObject({ content_expired: false });
    const bundle = await svc.call('GET', `/traces/${oldId}?expand=context&project_id=${shortened}`);
    expect(bundle.status).toBe(200);
    expect(bundle.body.trace).toMatchObject({ content_expired: true, agent_input: null });
    // Figures stay: the DSL and the views count the old run's tokens.
    expect(await generationTokens(shortened)).toBe(tokensBefore);
    expect(await search(shortened, 'walrus')).toEqual([]);
    expect(await search(shortened, 'pelican')).toEqual([recentId]);

    // A late span re-settles the expired trace: its figures come from what ingestion stored beside
    // the emptied attributes, so the summary and trace.processed keep its tokens and model.
    const oldBody = JSON.parse(oldRun.body);
    const root = oldBody.resourceSpans[0].scopeSpans[0].spans[0];
    const lateSpan = { traceId: root.traceId, spanId: 'aaaaaaaaaaaaaaa1', parentSpanId: root.spanId, name: 'late step', kind: 1, startTimeUnixNano: root.endTimeUnixNano, endTimeUnixNano: root.endTimeUnixNano, attributes: [], status: {} };
    await send(svc, shortened, [{ ...oldRun, body: JSON.stringify({ resourceSpans: [{ ...oldBody.resourceSpans[0], scopeSpans: [{ scope: { name: 'lookout-test' }, spans: [lateSpan] }] }] }) }]);
    const resettled = await until('the expired trace settled again', async () => {
      const [row] = await rows<{ span_count: number; total_tokens: number; models_used: string[] }>(
        `SELECT span_count, total_tokens, models_used FROM ${svc.service.deps.ch.table('traces')} FINAL WHERE project_id = {p:String} AND trace_id = {t:String}`,
        { p: shortened, t: oldId },
      );
      return row && Number(row.span_count) === 4 ? row : undefined;
    });
    expect(resettled).toMatchObject({ total_tokens: 120, models_used: ['gpt-4o'] });
    const [processedAgain] = await rows<{ total_tokens: number; models: string[] }>(
      `SELECT total_tokens, models FROM ${svc.service.deps.ch.table('event_trace_processed')} FINAL WHERE project_id = {p:String} AND trace_id = {t:String}`,
      { p: shortened, t: oldId },
    );
    expect(processedAgain).toMatchObject({ total_tokens: 120, models: ['gpt-4o'] });
    expect(await generationTokens(shortened)).toBe(tokensBefore);

    // The same tenant's other project and another tenant's project keep everything.
    for (const [projectId, traceId] of [[sibling, siblingOldId], [strangerProject, strangerOldId]]) {
      expect(await stored(projectId, traceId)).toMatchObject({ spansWithAttributes: 3, retention: ['90/90'], span_logs: 1 });
    }
    const strangers = await svc.call('GET', `/traces/${strangerOldId}`, { key: stranger.adminKey });
    expect(strangers.body.content_expired).toBe(false);
    expect(JSON.stringify(strangers.body.agent_input)).toContain('walrus');

    // analytics_days 15: the run of 20 days ago goes whole, from every table; the recent one stays.
    expect((await svc.call('PUT', `/projects/${shortened}/retention`, { body: { analytics_days: 15, content_days: 10 } })).status).toBe(200);
    await forceTtl();
    expect(await stored(shortened, oldId)).toMatchObject({ spans: 0, trace: null, span_logs: 0, trace_content: 0, event_trace_processed: 0, event_generation_completed: 0, event_tool_called: 0 });
    expect((await svc.call('GET', `/traces/${oldId}`)).status).toBe(404);
    expect(await generationTokens(shortened)).toBe(50);
    expect(await stored(shortened, recentId)).toMatchObject({ spans: 3, spansWithAttributes: 3, retention: ['15/10'] });

    // New rows carry the setting in force (the engine looks it up at insert time).
    const lateRun = build([{ start: new Date(), agent: 'support', input: 'a late question', generations: [{ model: 'gpt-4o', input: 5, output: 1 }] }]);
    await send(svc, shortened, lateRun);
    const late = traceIdsOf(shortened, lateRun)[0];
    const lateRows = await until('the late trace settled', async () => {
      const rows = await stored(shortened, late);
      return rows.trace !== null && rows.event_trace_processed === 1 ? rows : undefined;
    });
    expect(lateRows.retention).toEqual(['15/10']);
    const [processed] = await rows<{ analytics_days: number; content_days: number }>(
      `SELECT analytics_days, content_days FROM ${svc.service.deps.ch.table('event_trace_processed')} WHERE project_id = {p:String} AND trace_id = {t:String}`,
      { p: shortened, t: late },
    );
    expect(processed).toEqual({ analytics_days: 15, content_days: 10 });

    // The tenant's default reaches the projects without a setting of their own, not the others.
    const tenantPut = await svc.call('PUT', '/retention', { body: { analytics_days: 60, content_days: 5 } });
    expect(tenantPut.status).toBe(200);
    expect(tenantPut.body).toMatchObject({ analytics_days: 60, content_days: 5, source: 'tenant' });
    expect((await svc.call('GET', '/retention')).body).toEqual(tenantPut.body);
    expect((await svc.call('GET', `/projects/${sibling}/retention`)).body).toMatchObject({ analytics_days: 60, content_days: 5, source: 'tenant' });
    await forceTtl();
    expect(await stored(sibling, siblingOldId)).toMatchObject({ spans: 3, spansWithAttributes: 0, retention: ['60/5'], span_logs: 0, trace_content: 0 });
    expect((await stored(shortened, recentId)).retention).toEqual(['15/10']);
    expect(await stored(strangerProject, strangerOldId)).toMatchObject({ spansWithAttributes: 3, retention: ['90/90'] });

    // A longer setting reaches what has not expired: the recent run's rows now carry it.
    expect((await svc.call('PUT', `/projects/${shortened}/retention`, { body: { analytics_days: 90, content_days: 90 } })).status).toBe(200);
    const longer = await until('the longer setting on stored rows', async () => {
      const now90 = await stored(shortened, recentId);
      return (now90.retention as string[]).join() === '90/90' ? now90 : undefined;
    });
    expect(longer).toMatchObject({ spansWithAttributes: 3, retention: ['90/90'] });
  }, 240_000);
});
