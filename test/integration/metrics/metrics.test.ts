import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../../helpers/service.js';
import { lookoutTraceId } from '../../../src/spans/trace-id.js';
import { storedSpanId } from '../../../src/platform/clickhouse/sql/event-ids.js';
import { spanIdFor } from '../../helpers/event-ids.js';

let svc: TestService;

beforeAll(async () => {
  svc = await startTestService();
});
afterAll(async () => {
  await svc?.stop();
});

const METRIC_KEYS = [
  'agent_name', 'collection_config', 'collection_type', 'created_at', 'description', 'id', 'monitor', 'name', 'preset',
  'project_id', 'project_name', 'recent_events', 'sampling_rate', 'total_events', 'type',
].sort();

async function tenantOf(projectId: string): Promise<string> {
  const [row] = await svc.service.deps.sql<{ tenant_id: string }[]>`select tenant_id from projects where id = ${projectId}`;
  return row.tenant_id;
}

/** ClickHouse DateTime64 text for a time `minutesAgo` before now. */
function chTime(minutesAgo: number): string {
  return new Date(Date.now() - minutesAgo * 60_000).toISOString().replace('T', ' ').replace('Z', '');
}

async function insert(table: string, values: Record<string, unknown>[]): Promise<void> {
  await svc.service.deps.ch.client.insert({ table: svc.service.deps.ch.table(table), values, format: 'JSONEachRow' });
}

async function metricsOf(projectId: string, key?: string) {
  return svc.call('GET', `/projects/${projectId}/metrics`, { key });
}

describe('metrics', () => {
  it('gives every project its preset OBSERVED metrics with every field', async () => {
    const project = await svc.newProject('metrics-presets');
    const res = await metricsOf(project.id);
    expect(res.status).toBe(200);
    expect(res.body.metrics.map((m: { name: string }) => m.name)).toEqual(['Error rate', 'Failing tool calls', 'Latency p95 (ms)']);
    for (const metric of res.body.metrics) {
      expect(Object.keys(metric).sort()).toEqual(METRIC_KEYS);
      expect(metric).toMatchObject({
        type: 'OBSERVED', collection_type: null, preset: true, agent_name: null, sampling_rate: null, project_id: project.id,
        project_name: 'metrics-presets', total_events: 0, recent_events: [], collection_config: null,
        monitor: { interval_value: 24, latest_status: 'no_data', latest_value: null },
      });
      expect(typeof metric.description).toBe('string');
      expect(typeof metric.monitor.threshold).toBe('number');
      expect(new Date(metric.created_at).toISOString()).toBe(metric.created_at);
      expect((await svc.call('GET', `/metrics/${metric.id}`)).body).toEqual(metric);
    }
    // Listing again keeps the same presets.
    expect((await metricsOf(project.id)).body.metrics.map((m: { id: string }) => m.id)).toEqual(res.body.metrics.map((m: { id: string }) => m.id));
  });

  it('computes presets from trace data, counting a re-processed trace once', async () => {
    const project = await svc.newProject('metrics-observed');
    const tenant = await tenantOf(project.id);
    const common = { tenant_id: tenant, project_id: project.id, actor: 'sdk', surface: 'otlp', user_id: '', api_key_id: '' };
    const traces = [
      { trace_id: crypto.randomUUID(), minutesAgo: 40, error_count: 0, root_status_code: 'OK', root_duration_ms: 100 },
      { trace_id: crypto.randomUUID(), minutesAgo: 30, error_count: 2, root_status_code: 'ERROR', root_duration_ms: 900 },
      { trace_id: crypto.randomUUID(), minutesAgo: 20, error_count: 0, root_status_code: 'OK', root_duration_ms: 200 },
      { trace_id: crypto.randomUUID(), minutesAgo: 10, error_count: 0, root_status_code: 'UNSET', root_duration_ms: 300 },
      // Outside the 24 h interval: counted in total_events, not in latest_value.
      { trace_id: crypto.randomUUID(), minutesAgo: 60 * 30, error_count: 1, root_status_code: 'ERROR', root_duration_ms: 50_000 },
    ];
    await insert('event_trace_processed', traces.map((t) => ({ ...common, agent_name: 'bot', timestamp: chTime(t.minutesAgo), trace_id: t.trace_id, error_count: t.error_count, root_status_code: t.root_status_code, has_root: 1, root_duration_ms: t.root_duration_ms })));
    // The trace at 30 minutes is processed again (a late span): the newer row replaces the older.
    await insert('event_trace_processed', [{ ...common, agent_name: 'bot', timestamp: chTime(30), trace_id: traces[1].trace_id, error_count: 3, root_status_code: 'ERROR', has_root: 1, root_duration_ms: 950, processed_at: chTime(-1) }]);
    await insert('event_tool_called', [
      { ...common, timestamp: chTime(35), tool: 'search', agent_name: 'bot', trace_id: traces[0].trace_id, span_id: storedSpanId(spanIdFor('a1')), duration_ms: 5, error: 0 },
      { ...common, timestamp: chTime(25), tool: 'search', agent_name: 'bot', trace_id: traces[1].trace_id, span_id: storedSpanId(spanIdFor('b1')), duration_ms: 5, error: 1 },
      { ...common, timestamp: chTime(15), tool: 'lookup', agent_name: 'bot', trace_id: traces[2].trace_id, span_id: storedSpanId(spanIdFor('c1')), duration_ms: 5, error: 0 },
      { ...common, timestamp: chTime(5), tool: 'lookup', agent_name: 'bot', trace_id: traces[3].trace_id, span_id: storedSpanId(spanIdFor('d1')), duration_ms: 5, error: 0 },
    ]);

    const metrics = (await metricsOf(project.id)).body.metrics as any[];
    const errorRate = metrics.find((m) => m.name === 'Error rate');
    expect(errorRate.total_events).toBe(5);
    expect(errorRate.monitor).toEqual({ threshold: 0.05, interval_value: 24, latest_status: 'breached', latest_value: 0.25 });
    expect(errorRate.recent_events.map((e: any) => [e.trace_id, e.value])).toEqual([
      [traces[3].trace_id, false], [traces[2].trace_id, false], [traces[1].trace_id, true], [traces[0].trace_id, false], [traces[4].trace_id, true],
    ]);
    for (const e of errorRate.recent_events) expect(Object.keys(e).sort()).toEqual(['created_at', 'id', 'trace_id', 'value']);
    // created_at is the trace's time, as ISO 8601.
    const age = Date.now() - new Date(errorRate.recent_events[0].created_at).getTime();
    expect(new Date(errorRate.recent_events[0].created_at).toISOString()).toBe(errorRate.recent_events[0].created_at);
    expect(age).toBeGreaterThan(9 * 60_000);
    expect(age).toBeLessThan(11 * 60_000);

    const failing = metrics.find((m) => m.name === 'Failing tool calls');
    expect(failing.total_events).toBe(4);
    expect(failing.monitor).toMatchObject({ latest_status: 'breached', latest_value: 0.25 });
    expect(failing.recent_events.map((e: any) => [e.id, e.value])).toEqual([
      [`${traces[3].trace_id}:${spanIdFor('d1')}`, false], [`${traces[2].trace_id}:${spanIdFor('c1')}`, false], [`${traces[1].trace_id}:${spanIdFor('b1')}`, true], [`${traces[0].trace_id}:${spanIdFor('a1')}`, false],
    ]);

    const latency = metrics.find((m) => m.name === 'Latency p95 (ms)');
    expect(latency.total_events).toBe(5);
    // p95 (exact) of 100, 200, 300, 950 within the interval.
    expect(latency.monitor).toEqual({ threshold: 30_000, interval_value: 24, latest_status: 'ok', latest_value: 950 });
    expect(latency.recent_events[2]).toMatchObject({ trace_id: traces[1].trace_id, value: 950 });

    // Another project's traces never show up here.
    const other = await svc.newProject('metrics-observed-other');
    const otherRate = (await metricsOf(other.id)).body.metrics[0];
    expect(otherRate.total_events).toBe(0);
  });

  it('creates a BINARY metric that takes events, with defaults and every field', async () => {
    const project = await svc.newProject('metrics-binary');
    const created = await svc.call('POST', `/projects/${project.id}/metrics`, { body: { name: ' Hallucination ', collection_type: 'BINARY', description: 'judge verdict' } });
    expect(created.status).toBe(201);
    expect(Object.keys(created.body).sort()).toEqual(METRIC_KEYS);
    expect(created.body).toMatchObject({
      name: 'Hallucination', description: 'judge verdict', type: 'SYNTHETIC', collection_type: 'BINARY', project_id: project.id,
      project_name: 'metrics-binary', preset: false, agent_name: null, sampling_rate: 1, total_events: 0, recent_events: [],
      monitor: { threshold: 0.5, interval_value: 24, latest_status: 'no_data', latest_value: null }, collection_config: null,
    });
    const id = created.body.id;
    const traceIds = Array.from({ length: 12 }, () => crypto.randomUUID());
    const values = [true, false, 1, 0, true, true, false, true, true, 1, 1, 1];
    for (let i = 0; i < traceIds.length; i++) {
      const res = await svc.call('POST', `/metrics/${id}/events`, { body: { trace_id: traceIds[i], value: values[i] } });
      expect(res.status).toBe(201);
      expect(Object.keys(res.body).sort()).toEqual(['created_at', 'id', 'sampled', 'trace_id', 'value']);
      expect(res.body).toMatchObject({ trace_id: traceIds[i], value: values[i] === true || values[i] === 1, sampled: true });
    }
    for (const value of ['yes', 2, null, { v: 1 }]) {
      const bad = await svc.call('POST', `/metrics/${id}/events`, { body: { trace_id: traceIds[0], value } });
      expect(bad.status, JSON.stringify(value)).toBe(400);
      expect(bad.body.code).toBe('validation_error');
      expect(bad.body.detail).toMatch(/value/);
    }
    const got = (await svc.call('GET', `/metrics/${id}`)).body;
    expect(got.total_events).toBe(12);
    expect(got.recent_events).toHaveLength(10);
    expect(got.recent_events.map((e: any) => e.trace_id)).toEqual(traceIds.slice(2).reverse());
    expect(got.monitor).toEqual({ threshold: 0.5, interval_value: 24, latest_status: 'breached', latest_value: 9 / 12 });

    // A second verdict for the same trace replaces the first.
    const again = await svc.call('POST', `/metrics/${id}/events`, { body: { trace_id: traceIds[11], value: false } });
    expect(again.status).toBe(201);
    const after = (await svc.call('GET', `/metrics/${id}`)).body;
    expect(after.total_events).toBe(12);
    expect(after.recent_events[0]).toMatchObject({ trace_id: traceIds[11], value: false });
    expect(after.monitor.latest_value).toBe(8 / 12);
  });

  it('validates VALUE and FLAG events and aggregates them (mean, count)', async () => {
    const project = await svc.newProject('metrics-value-flag');
    const value = (await svc.call('POST', `/projects/${project.id}/metrics`, { body: { name: 'Helpfulness', collection_type: 'VALUE', agent_name: 'bot', monitor: { threshold: 7, interval_value: 1 } } })).body;
    expect(value).toMatchObject({ agent_name: 'bot', monitor: { threshold: 7, interval_value: 1 } });
    for (const v of [4, 8, 9]) expect((await svc.call('POST', `/metrics/${value.id}/events`, { body: { trace_id: crypto.randomUUID(), value: v } })).status).toBe(201);
    for (const v of ['8', true]) expect((await svc.call('POST', `/metrics/${value.id}/events`, { body: { trace_id: crypto.randomUUID(), value: v } })).status).toBe(400);
    expect((await svc.call('GET', `/metrics/${value.id}`)).body.monitor).toEqual({ threshold: 7, interval_value: 1, latest_status: 'ok', latest_value: 7 });

    const flag = (await svc.call('POST', `/projects/${project.id}/metrics`, { body: { name: 'Escalation', collection_type: 'FLAG' } })).body;
    expect(flag.monitor.threshold).toBe(0);
    expect((await svc.call('POST', `/metrics/${flag.id}/events`, { body: { trace_id: crypto.randomUUID(), value: true } })).body.value).toBe(true);
    expect((await svc.call('POST', `/metrics/${flag.id}/events`, { body: { trace_id: crypto.randomUUID(), value: '  user asked for a human ' } })).body.value).toBe('user asked for a human');
    for (const v of [false, '', 1]) expect((await svc.call('POST', `/metrics/${flag.id}/events`, { body: { trace_id: crypto.randomUUID(), value: v } })).status).toBe(400);
    expect((await svc.call('GET', `/metrics/${flag.id}`)).body.monitor).toMatchObject({ latest_status: 'breached', latest_value: 2 });
  });

  it('maps an OpenTelemetry trace id to the Lookout trace id of the project', async () => {
    const project = await svc.newProject('metrics-otel-id');
    const metric = (await svc.call('POST', `/projects/${project.id}/metrics`, { body: { name: 'Judge', collection_type: 'BINARY' } })).body;
    const otel = 'ABCDEF0123456789abcdef0123456789';
    const res = await svc.call('POST', `/metrics/${metric.id}/events`, { body: { trace_id: otel, value: true } });
    expect(res.body.trace_id).toBe(lookoutTraceId(project.id, otel.toLowerCase()));
    const same = await svc.call('POST', `/metrics/${metric.id}/events`, { body: { trace_id: res.body.trace_id, value: false } });
    expect(same.body.id).toBe(res.body.id);
    expect((await svc.call('GET', `/metrics/${metric.id}`)).body.total_events).toBe(1);
    for (const trace_id of ['', 'not-a-trace', 'abc']) {
      expect((await svc.call('POST', `/metrics/${metric.id}/events`, { body: { trace_id, value: true } })).status).toBe(400);
    }
  });

  it('honours sampling_rate for SYNTHETIC metrics, deterministically per trace', async () => {
    const project = await svc.newProject('metrics-sampling');
    const none = (await svc.call('POST', `/projects/${project.id}/metrics`, { body: { name: 'Never', collection_type: 'VALUE', sampling_rate: 0 } })).body;
    const dropped = await svc.call('POST', `/metrics/${none.id}/events`, { body: { trace_id: crypto.randomUUID(), value: 1 } });
    expect(dropped.status).toBe(200);
    expect(dropped.body).toMatchObject({ id: null, created_at: null, sampled: false, value: 1 });
    expect((await svc.call('GET', `/metrics/${none.id}`)).body.total_events).toBe(0);

    const half = (await svc.call('POST', `/projects/${project.id}/metrics`, { body: { name: 'Half', collection_type: 'VALUE', sampling_rate: 0.5 } })).body;
    expect(half.sampling_rate).toBe(0.5);
    const traceIds = Array.from({ length: 160 }, () => crypto.randomUUID());
    const first = await Promise.all(traceIds.map((trace_id) => svc.call('POST', `/metrics/${half.id}/events`, { body: { trace_id, value: 1 } })));
    const kept = first.filter((r) => r.status === 201).length;
    expect(kept).toBeGreaterThan(50);
    expect(kept).toBeLessThan(110);
    expect(first.every((r) => r.body.sampled === (r.status === 201))).toBe(true);
    expect((await svc.call('GET', `/metrics/${half.id}`)).body.total_events).toBe(kept);
    // The same trace gets the same answer every time.
    const second = await Promise.all(traceIds.slice(0, 40).map((trace_id) => svc.call('POST', `/metrics/${half.id}/events`, { body: { trace_id, value: 2 } })));
    expect(second.map((r) => r.status)).toEqual(first.slice(0, 40).map((r) => r.status));

    // OBSERVED metrics are not sampled: every event is kept, and a sampling_rate is refused.
    const observed = await svc.call('POST', `/projects/${project.id}/metrics`, { body: { name: 'Thumbs', type: 'OBSERVED', collection_type: 'BINARY' } });
    expect(observed.body).toMatchObject({ type: 'OBSERVED', sampling_rate: null, preset: false });
    expect((await svc.call('POST', `/metrics/${observed.body.id}/events`, { body: { trace_id: crypto.randomUUID(), value: true } })).status).toBe(201);
    const refused = await svc.call('POST', `/projects/${project.id}/metrics`, { body: { name: 'Thumbs2', type: 'OBSERVED', collection_type: 'BINARY', sampling_rate: 0.5 } });
    expect(refused.body).toEqual({ code: 'validation_error', detail: 'sampling_rate: only SYNTHETIC metrics are sampled' });
  });

  it('answers conflicts, bad input and preset rules with {detail, code}', async () => {
    const project = await svc.newProject('metrics-errors');
    const path = `/projects/${project.id}/metrics`;
    expect((await svc.call('POST', path, { body: { name: 'Judge', collection_type: 'BINARY' } })).status).toBe(201);
    const taken = await svc.call('POST', path, { body: { name: 'judge', collection_type: 'VALUE' } });
    expect(taken.status).toBe(409);
    expect(taken.body).toEqual({ code: 'conflict', detail: "A metric named 'judge' already exists in this project" });
    expect((await svc.call('POST', path, { body: { name: 'Error rate', collection_type: 'VALUE' } })).status).toBe(409);

    const cases: [unknown, RegExp][] = [
      [{ name: 'x' }, /collection_type is required/],
      [{ collection_type: 'BINARY' }, /name is required/],
      [{ name: '  ', collection_type: 'BINARY' }, /name: must not be blank/],
      [{ name: 'x', collection_type: 'SCORE' }, /collection_type: must be one of BINARY, VALUE, FLAG/],
      [{ name: 'x', collection_type: 'BINARY', type: 'MANUAL' }, /type: must be one of/],
      [{ name: 'x', collection_type: 'BINARY', sampling_rate: 1.5 }, /sampling_rate/],
      [{ name: 'x', collection_type: 'BINARY', monitor: { interval_value: 0 } }, /monitor.interval_value/],
      [{ name: 'x', collection_type: 'BINARY', monitor: { threshold: 'high' } }, /monitor.threshold/],
      [{ name: 'x', collection_type: 'BINARY', collection_config: {} }, /unknown key 'collection_config'/],
    ];
    for (const [body, detail] of cases) {
      const res = await svc.call('POST', path, { body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.code).toBe('validation_error');
      expect(res.body.detail).toMatch(detail);
    }

    const preset = (await metricsOf(project.id)).body.metrics[0];
    const presetEvent = await svc.call('POST', `/metrics/${preset.id}/events`, { body: { trace_id: crypto.randomUUID(), value: true } });
    expect(presetEvent.status).toBe(400);
    expect(presetEvent.body.detail).toMatch(/computed from trace data/);
    expect((await svc.call('DELETE', `/metrics/${preset.id}`)).body).toEqual({ code: 'conflict', detail: 'Preset metrics cannot be deleted' });
    expect((await svc.call('POST', `/metrics/${preset.id}/events`, { body: { trace_id: crypto.randomUUID() } })).body.detail).toBe('value is required');

    const mine = (await metricsOf(project.id)).body.metrics.find((m: { name: string }) => m.name === 'Judge');
    expect((await svc.call('DELETE', `/metrics/${mine.id}`)).status).toBe(204);
    expect((await svc.call('GET', `/metrics/${mine.id}`)).body).toEqual({ code: 'not_found', detail: 'Metric not found' });
    expect((await svc.call('GET', '/metrics/not-a-uuid')).status).toBe(404);
  });

  it('isolates tenants and project-limited keys, and enforces scopes', async () => {
    const project = await svc.newProject('metrics-isolated');
    const other = await svc.newProject('metrics-isolated-other');
    const metric = (await svc.call('POST', `/projects/${project.id}/metrics`, { body: { name: 'Judge', collection_type: 'BINARY' } })).body;
    const intruder = await svc.newTenant('metrics-intruder');
    const limited = await svc.newKey('admin', { projectId: other.id });
    for (const key of [intruder.adminKey, limited]) {
      for (const [method, path, body] of [
        ['GET', `/projects/${project.id}/metrics`, undefined],
        ['POST', `/projects/${project.id}/metrics`, { name: 'x', collection_type: 'BINARY' }],
        ['GET', `/metrics/${metric.id}`, undefined],
        ['DELETE', `/metrics/${metric.id}`, undefined],
        ['POST', `/metrics/${metric.id}/events`, { trace_id: crypto.randomUUID(), value: true }],
      ] as [string, string, unknown][]) {
        const res = await svc.call(method, path, { key, body });
        expect(res.status, `${method} ${path}`).toBe(404);
        expect(res.body.code).toBe('not_found');
      }
    }
    const read = await svc.newKey('read');
    expect((await svc.call('GET', `/metrics/${metric.id}`, { key: read })).status).toBe(200);
    expect((await svc.call('POST', `/metrics/${metric.id}/events`, { key: read, body: { trace_id: crypto.randomUUID(), value: true } })).status).toBe(403);
    expect((await svc.call('GET', `/metrics/${metric.id}`)).body.total_events).toBe(0);
  });

  it('lists every route in the OpenAPI document', async () => {
    const paths = (await svc.call('GET', '/openapi.json')).body.paths;
    expect(Object.keys(paths['/projects/{project_id}/metrics']).sort()).toEqual(['get', 'post']);
    expect(Object.keys(paths['/metrics/{metric_id}']).sort()).toEqual(['delete', 'get']);
    expect(paths['/metrics/{metric_id}/events'].post.requestBody).toBeDefined();
  });
});
