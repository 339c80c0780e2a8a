import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { lookoutTraceId } from '../../../src/spans/trace-id.js';
import { startTestService, type TestService } from '../../helpers/service.js';
import { GEN_AI_RUN, runGenAiSupportAgent } from '../../unit/ingest/fixtures/gen-ai-agent-run.js';
import { postOtlp, protobufBody, waitFor } from '../ingest/otlp-client.js';

let svc: TestService;
let project: { id: string; name: string };
let run: { spans: ReadableSpan[]; otelTraceId: string; traceId: string };

function record(service: string, threadId?: string) {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': service, 'service.version': '3.1.0' }),
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  const otelTraceId = runGenAiSupportAgent(provider.getTracer('traces-api'));
  let spans = exporter.getFinishedSpans();
  if (threadId) {
    spans = spans.map((s) => (s.parentSpanContext ? s : Object.assign(Object.create(Object.getPrototypeOf(s)), s, { attributes: { ...s.attributes, 'gen_ai.conversation.id': threadId } })));
  }
  return { spans, otelTraceId, traceId: lookoutTraceId(project.id, otelTraceId) };
}

async function send(spans: ReadableSpan[], key = svc.adminKey, projectId = project.id) {
  const res = await postOtlp(svc.url, key, protobufBody(spans), { headers: { 'x-lookout-project': projectId } });
  expect(res.status).toBe(200);
}

async function settled(projectId: string, traceId: string) {
  return waitFor(async () => {
    const res = await svc.call('GET', `/projects/${projectId}/traces?limit=200`);
    return res.body.traces?.find((t: { id: string }) => t.id === traceId);
  }, 15_000, `trace ${traceId} in the list`);
}

beforeAll(async () => {
  svc = await startTestService();
  project = await svc.newProject('traces api');
  run = record('support-svc');
  await send(run.spans);
  await settled(project.id, run.traceId);
});
afterAll(async () => {
  await svc?.stop();
});

describe('GET /traces/{trace_id}', () => {
  it('returns the default payload with every field of the Trace table', async () => {
    const res = await svc.call('GET', `/traces/${run.traceId}`);
    expect(res.status).toBe(200);
    const t = res.body;
    expect(Object.keys(t).sort()).toEqual(
      [
        'id', 'otel_trace_id', 'project_id', 'project_name', 'service_name', 'agent_name', 'thread_id', 'thread_trace_count',
        'agent_input_display', 'agent_input', 'agent_output', 'content_expired', 'release', 'tool_calls', 'interaction', 'has_error',
        'total_duration_ms', 'timestamp', 'spans', 'stats', 'issue_extraction',
        'estimated_cost_usd', 'estimated_cost_basis', 'cost_unpriced_models',
      ].sort(),
    );
    // List prices (USD per million tokens) of the bundled catalog: gpt-4o-2024-08-06 $2.50 input,
    // $1.25 cached input, $10 output; claude-3-5-haiku $0.80 input, $4 output. The gpt call's 900
    // input tokens include 512 cached ones.
    const gptCost = ((900 - 512) * 2.5 + 512 * 1.25 + 40 * 10) / 1e6;
    const haikuCost = (1100 * 0.8 + 60 * 4) / 1e6;
    expect(t.estimated_cost_usd).toBeCloseTo(gptCost + haikuCost, 10);
    expect(t.estimated_cost_basis).toBe('stored');
    expect(t.cost_unpriced_models).toEqual([]);
    // The same figure the trace list shows.
    const listed = (await svc.call('GET', `/projects/${project.id}/traces?limit=200`)).body.traces.find((x: { id: string }) => x.id === run.traceId);
    expect(listed.estimated_cost_usd).toBe(t.estimated_cost_usd);
    const root = run.spans.find((s) => !s.parentSpanContext)!;
    const rootNs = (BigInt(root.startTime[0]) * 1_000_000_000n + BigInt(root.startTime[1])).toString();
    expect(t).toMatchObject({
      id: run.traceId,
      otel_trace_id: run.otelTraceId,
      project_id: project.id,
      project_name: 'traces api',
      service_name: 'support-svc',
      agent_name: GEN_AI_RUN.agentName,
      thread_id: GEN_AI_RUN.threadId,
      thread_trace_count: 1,
      agent_input_display: GEN_AI_RUN.userRequest,
      release: '3.1.0',
      interaction: { has_input: true, has_output: true, input_kind: 'messages', has_user_message_tools: true },
      has_error: true,
      timestamp: new Date(Number(BigInt(rootNs) / 1_000_000n)).toISOString(),
      stats: { span_count: 5, total_tokens: 2100, error_count: 1, models_used: ['claude-3-5-haiku-20241022', 'gpt-4o-2024-08-06'] },
    });
    expect(t.agent_input).toEqual([{ role: 'user', parts: [{ type: 'text', content: GEN_AI_RUN.userRequest }] }]);
    expect(t.agent_output[0].parts[0].content).toBe(GEN_AI_RUN.reply);
    expect(t.total_duration_ms).toBeCloseTo(t.stats.total_duration_ms);
    expect(t.tool_calls).toEqual([
      expect.objectContaining({ name: 'lookup_order', is_error: true, user_facing_message: '', user_facing_message_truncated: false, user_facing_messages_omitted: 0 }),
      expect.objectContaining({ name: 'reply_to_user', is_error: false, user_facing_message: GEN_AI_RUN.reply }),
    ]);
    expect(t.stats.tool_calls).toEqual([
      { name: 'lookup_order', otel_span_id: t.tool_calls[0].span_id, status: 'error' },
      { name: 'reply_to_user', otel_span_id: t.tool_calls[1].span_id, status: 'ok' },
    ]);
    expect(t.issue_extraction).toMatchObject({ status: expect.any(String), issue_count: expect.any(Number), occurrence_count: expect.any(Number) });

    expect(t.spans).toHaveLength(5);
    expect(t.spans[0]).toMatchObject({ otel_span_id: root.spanContext().spanId, parent_otel_span_id: null, start_time_ns: rootNs, kind: 'internal' });
    for (const span of t.spans) {
      expect(Object.keys(span).sort()).toEqual(
        ['id', 'otel_span_id', 'parent_otel_span_id', 'name', 'kind', 'start_time_ns', 'end_time_ns', 'duration_ms', 'status_code',
          'status_description', 'span_class', 'input_tokens', 'output_tokens', 'model_name', 'tps', 'attributes', 'events'].sort(),
      );
      expect(span.start_time_ns).toMatch(/^\d{19}$/);
      expect(typeof span.duration_ms).toBe('number');
    }
    const gpt = t.spans.find((s: { model_name: string }) => s.model_name === 'gpt-4o-2024-08-06');
    expect(gpt).toMatchObject({ input_tokens: 900, output_tokens: 40, status_code: 'UNSET', kind: 'client', span_class: 'generation' });
    expect(gpt.tps).toBeGreaterThan(0);
    expect(gpt.attributes['gen_ai.usage.cache_read.input_tokens']).toBe(512);
    const failed = t.spans.find((s: { name: string }) => s.name === 'execute_tool lookup_order');
    expect(failed).toMatchObject({ status_code: 'ERROR', status_description: 'orders API returned 503', tps: null });
    expect(failed.events[0]).toMatchObject({ name: 'exception', attributes: { 'exception.message': 'orders API returned 503' } });
    expect(failed.events[0].time_ns).toMatch(/^\d{19}$/);
  });

  it('drops attributes and events on request, and finds the trace by its OpenTelemetry id', async () => {
    const res = await svc.call('GET', `/traces/${run.otelTraceId}?include_attributes=false&include_events=false`);
    expect(res.status).toBe(200);
    expect(res.body.id).toBe(run.traceId);
    for (const span of res.body.spans) {
      expect(span).not.toHaveProperty('attributes');
      expect(span).not.toHaveProperty('events');
    }
  });

  it('finds the context bundle with the project id in upper case (ids are matched in any case)', async () => {
    const response = await fetch(`${svc.api}/traces/${run.traceId}?expand=context&project_id=${project.id.toUpperCase()}`, {
      headers: { authorization: `Bearer ${svc.adminKey}` },
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ id: run.traceId, project_id: project.id, spans_total: 5 });
  });

  it('returns the context bundle with exact nanosecond numbers, paged', async () => {
    const response = await fetch(`${svc.api}/traces/${run.traceId}?expand=context&project_id=${project.id}&spans_limit=2&spans_offset=1`, {
      headers: { authorization: `Bearer ${svc.adminKey}` },
    });
    expect(response.status).toBe(200);
    const text = await response.text();
    const bundle = JSON.parse(text);
    expect(bundle).toMatchObject({
      id: run.traceId,
      project_id: project.id,
      project_name: 'traces api',
      otel_trace_id: run.otelTraceId,
      service_name: 'support-svc',
      spans_total: 5,
      issue_occurrences: expect.any(Array),
      stats: { span_count: 5, total_tokens: 2100 },
      trace: { agent_name: GEN_AI_RUN.agentName, thread_id: GEN_AI_RUN.threadId },
    });
    expect(typeof bundle.created_at).toBe('string');
    expect(bundle.spans).toHaveLength(2);
    const full = await svc.call('GET', `/traces/${run.traceId}`);
    const expected = full.body.spans.slice(1, 3);
    bundle.spans.forEach((span: Record<string, unknown>, i: number) => {
      expect(span).not.toHaveProperty('id');
      expect(span.otel_span_id).toBe(expected[i].otel_span_id);
      expect(Array.isArray(span.events)).toBe(true);
      // Written as bare 19-digit numbers, digit for digit.
      expect(text).toContain(`"start_time_ns":${expected[i].start_time_ns}`);
      expect(text).toContain(`"end_time_ns":${expected[i].end_time_ns}`);
    });
  });

  it('validates the context parameters', async () => {
    const base = `/traces/${run.traceId}?expand=context`;
    expect((await svc.call('GET', base)).status).toBe(400);
    expect((await svc.call('GET', `${base}&project_id=${project.id}&spans_limit=0`)).status).toBe(400);
    expect((await svc.call('GET', `${base}&project_id=${project.id}&spans_limit=501`)).status).toBe(400);
    expect((await svc.call('GET', `${base}&project_id=${project.id}&spans_offset=-1`)).status).toBe(400);
    expect((await svc.call('GET', `/traces/${run.traceId}?expand=everything`)).status).toBe(400);
    expect((await svc.call('GET', `/traces/${run.traceId}?spans_limit=5`)).status).toBe(400);
    const other = await svc.newProject('not the trace project');
    expect((await svc.call('GET', `${base}&project_id=${other.id}`)).status).toBe(404);
    const ok = await svc.call('GET', `${base}&project_id=${project.id}&spans_limit=500&spans_offset=10`);
    expect(ok.status).toBe(200);
    expect(ok.body.spans).toEqual([]);
  });

  it('is 404 for unknown ids, for another tenant, and outside a project-limited key', async () => {
    expect((await svc.call('GET', '/traces/00000000-0000-5000-8000-000000000000')).status).toBe(404);
    expect((await svc.call('GET', '/traces/not-an-id')).status).toBe(404);
    const tenant = await svc.newTenant('traces-other');
    const res = await svc.call('GET', `/traces/${run.traceId}`, { key: tenant.adminKey });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ detail: 'Trace not found', code: 'not_found' });
    expect((await svc.call('GET', `/traces/${run.otelTraceId}`, { key: tenant.adminKey })).status).toBe(404);
    const elsewhere = await svc.newProject('elsewhere');
    const limited = await svc.newKey('read', { projectId: elsewhere.id });
    expect((await svc.call('GET', `/traces/${run.traceId}`, { key: limited })).status).toBe(404);
    expect((await svc.call('GET', `/traces/${run.traceId}`, { key: await svc.newKey('read', { projectId: project.id }) })).status).toBe(200);
  });
});

describe('trace lists and agent names', () => {
  it('lists newest first with cursor pagination and filters', async () => {
    const listProject = await svc.newProject('list');
    const sent: string[] = [];
    for (let i = 0; i < 5; i++) {
      const r = record(i % 2 === 0 ? 'even-svc' : 'odd-svc', i < 2 ? 'thread-A' : undefined);
      const traceId = lookoutTraceId(listProject.id, r.otelTraceId);
      await send(r.spans, svc.adminKey, listProject.id);
      sent.push(traceId);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await waitFor(async () => {
      const res = await svc.call('GET', `/projects/${listProject.id}/traces`);
      return res.body.traces.length === 5 ? true : undefined;
    }, 15_000, 'five traces listed');
    const page1 = await svc.call('GET', `/projects/${listProject.id}/traces?limit=2`);
    expect(page1.status).toBe(200);
    expect(page1.body.traces.map((t: { id: string }) => t.id)).toEqual([sent[4], sent[3]]);
    expect(page1.body.next_cursor).toEqual(expect.any(String));
    const page2 = await svc.call('GET', `/projects/${listProject.id}/traces?limit=2&cursor=${page1.body.next_cursor}`);
    expect(page2.body.traces.map((t: { id: string }) => t.id)).toEqual([sent[2], sent[1]]);
    const page3 = await svc.call('GET', `/projects/${listProject.id}/traces?limit=2&cursor=${page2.body.next_cursor}`);
    expect(page3.body.traces.map((t: { id: string }) => t.id)).toEqual([sent[0]]);
    expect(page3.body.next_cursor).toBeNull();
    expect(page1.body.traces[0]).toMatchObject({
      project_id: listProject.id,
      agent_name: GEN_AI_RUN.agentName,
      has_error: true,
      span_count: 5,
      total_tokens: 2100,
      error_count: 1,
      tool_call_count: 2,
      models_used: ['claude-3-5-haiku-20241022', 'gpt-4o-2024-08-06'],
      estimated_cost_usd: expect.anything(),
    });

    const thread = await svc.call('GET', `/projects/${listProject.id}/traces?thread_id=thread-A`);
    expect(thread.body.traces.map((t: { id: string }) => t.id).sort()).toEqual([sent[0], sent[1]].sort());
    const detail = await svc.call('GET', `/traces/${sent[0]}`);
    expect(detail.body.thread_trace_count).toBe(2);
    expect((await svc.call('GET', `/projects/${listProject.id}/traces?has_error=false`)).body.traces).toEqual([]);
    expect((await svc.call('GET', `/projects/${listProject.id}/traces?agent_name=nobody`)).body.traces).toEqual([]);
    expect((await svc.call('GET', `/projects/${listProject.id}/traces?start=2000-01-01T00:00:00Z&end=2001-01-01T00:00:00Z`)).body.traces).toEqual([]);
    expect((await svc.call('GET', `/projects/${listProject.id}/traces?start=yesterday`)).status).toBe(400);
    expect((await svc.call('GET', `/projects/${listProject.id}/traces?cursor=garbage`)).status).toBe(400);
    const tenant = await svc.newTenant('list-other');
    expect((await svc.call('GET', `/projects/${listProject.id}/traces`, { key: tenant.adminKey })).status).toBe(404);
  });

  it('lists distinct agent names of the tenant, within a limited key\'s project', async () => {
    const names = await svc.call('GET', '/traces/agent-names');
    expect(names.status).toBe(200);
    expect(names.body.agent_names).toContain(GEN_AI_RUN.agentName);
    expect([...names.body.agent_names].sort()).toEqual(names.body.agent_names);
    expect(new Set(names.body.agent_names).size).toBe(names.body.agent_names.length);
    const empty = await svc.newProject('no traces');
    const limited = await svc.newKey('read', { projectId: empty.id });
    expect((await svc.call('GET', '/traces/agent-names', { key: limited })).body).toEqual({ agent_names: [] });
    const tenant = await svc.newTenant('names-other');
    expect((await svc.call('GET', '/traces/agent-names', { key: tenant.adminKey })).body).toEqual({ agent_names: [] });
    // Narrowed to one project on request (the dashboard's agent filter), with the usual 404 rules.
    expect((await svc.call('GET', `/traces/agent-names?project_id=${empty.id}`)).body).toEqual({ agent_names: [] });
    expect((await svc.call('GET', `/traces/agent-names?project_id=${empty.id}`, { key: tenant.adminKey })).status).toBe(404);
    const other = await svc.newProject('other names');
    expect((await svc.call('GET', `/traces/agent-names?project_id=${other.id}`, { key: limited })).status).toBe(404);
    expect((await svc.call('GET', '/traces/agent-names?bogus=1')).status).toBe(400);
  });
});

describe('a span stored twice', () => {
  // The trace read takes every stored row of the trace (no FINAL) and drops a span's second copy by
  // its id. Two copies are what two writers racing on one re-sent batch leave, each in its own part;
  // merges are stopped so the copy is still there when the trace is read.
  it('is answered once, by Lookout id and by OpenTelemetry id', async () => {
    const ch = svc.service.deps.ch;
    const copied = record('copied-svc');
    await send(copied.spans);
    await settled(project.id, copied.traceId);
    const spans = ch.table('spans');
    await ch.client.command({ query: `SYSTEM STOP MERGES ${spans}` });
    try {
      await ch.client.command({ query: `INSERT INTO ${spans} SELECT * FROM ${spans} WHERE trace_id = {t:String}`, query_params: { t: copied.traceId } });
      const stored = await ch.client.query({ query: `SELECT toUInt32(count()) AS n FROM ${spans} WHERE trace_id = {t:String}`, query_params: { t: copied.traceId }, format: 'JSONEachRow' });
      expect(await stored.json()).toEqual([{ n: 2 * copied.spans.length }]);
      for (const id of [copied.traceId, copied.otelTraceId]) {
        const res = await svc.call('GET', `/traces/${id}`);
        expect(res.status).toBe(200);
        const ids = (res.body.spans as { otel_span_id: string }[]).map((s) => s.otel_span_id).sort();
        expect(ids).toEqual(copied.spans.map((s) => s.spanContext().spanId).sort());
      }
    } finally {
      await ch.client.command({ query: `SYSTEM START MERGES ${spans}` });
    }
  });
});
