import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { context } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import type { ExportResult } from '@opentelemetry/core';
import { OTLPTraceExporter as OTLPJsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as OTLPProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { lookoutTraceId } from '../../src/spans/trace-id.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { waitFor } from '../integration/ingest/otlp-client.js';
import { GEN_AI_RUN, runGenAiSupportAgent } from '../unit/ingest/fixtures/gen-ai-agent-run.js';
import { runVercelWeatherAgent } from '../unit/ingest/fixtures/vercel-ai-run.js';

/**
 * End to end through the real OpenTelemetry SDK and its stock OTLP exporters (JSON over HTTP, and
 * protobuf with gzip), against the running service; then everything read back over the REST API.
 */

let svc: TestService;
let project: { id: string };
let ingestKey: string;
const manager = new AsyncLocalStorageContextManager();

beforeAll(async () => {
  svc = await startTestService();
  project = await svc.newProject('sdk e2e');
  ingestKey = await svc.newKey('ingest', { projectId: project.id });
  context.setGlobalContextManager(manager.enable());
});
afterAll(async () => {
  context.disable();
  await svc?.stop();
});

/** Wraps an exporter to record every export result (0 = SUCCESS: the service answered 200). */
function recording(inner: SpanExporter, results: number[]): SpanExporter {
  return {
    export: (spans: ReadableSpan[], done: (result: ExportResult) => void) =>
      inner.export(spans, (result) => {
        results.push(result.code);
        done(result);
      }),
    shutdown: () => inner.shutdown(),
    forceFlush: () => inner.forceFlush?.() ?? Promise.resolve(),
  };
}

function provider(exporter: SpanExporter, service: string) {
  return new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': service, 'service.version': '5.0.1' }),
    spanProcessors: [new BatchSpanProcessor(exporter, { maxExportBatchSize: 3, scheduledDelayMillis: 50 })],
  });
}

/**
 * The trace's detail once it is listed settled with all its `spans`: the batches go in concurrent
 * requests, and one slower than TRACE_SETTLE_MS lets a first settle list the trace before the late
 * span settles it again.
 */
async function settledDetail(traceId: string, spans: number) {
  await waitFor(async () => {
    const res = await svc.call('GET', `/projects/${project.id}/traces?limit=200`);
    return res.body.traces.some((t: { id: string; span_count: number }) => t.id === traceId && t.span_count === spans) ? true : undefined;
  }, 20_000, 'trace settled with every span');
  const res = await svc.call('GET', `/traces/${traceId}`);
  expect(res.status).toBe(200);
  return res.body;
}

async function events(traceId: string, table: string) {
  const { ch } = svc.service.deps;
  const res = await ch.client.query({
    query: `SELECT * FROM ${ch.table(table)} FINAL WHERE trace_id = {t:String} ORDER BY ${table === 'event_trace_processed' ? 'timestamp' : 'timestamp, span_id'}`,
    query_params: { t: traceId },
    format: 'JSONEachRow',
    clickhouse_settings: { output_format_json_quote_64bit_integers: 1 },
  });
  return res.json<Record<string, unknown>>();
}

/** Spans of one runGenAiSupportAgent run. */
const AGENT_RUN_SPANS = 5;

function expectAgentRun(t: Record<string, any>, service: string) {
  expect(t).toMatchObject({
    service_name: service,
    agent_name: GEN_AI_RUN.agentName,
    thread_id: GEN_AI_RUN.threadId,
    thread_trace_count: expect.any(Number),
    release: '5.0.1',
    agent_input_display: GEN_AI_RUN.userRequest,
    has_error: true,
    interaction: { has_input: true, has_output: true, input_kind: 'messages', has_user_message_tools: true },
    stats: { span_count: AGENT_RUN_SPANS, total_tokens: 2100, error_count: 1, models_used: ['claude-3-5-haiku-20241022', 'gpt-4o-2024-08-06'] },
    issue_extraction: expect.objectContaining({ status: expect.any(String) }),
  });
  expect(t.tool_calls.map((c: { name: string; is_error: boolean }) => [c.name, c.is_error])).toEqual([
    ['lookup_order', true],
    ['reply_to_user', false],
  ]);
  expect(t.tool_calls[1].user_facing_message).toBe(GEN_AI_RUN.reply);
  expect(t.spans.map((s: { name: string }) => s.name)).toEqual([
    `invoke_agent ${GEN_AI_RUN.agentName}`,
    'chat gpt-4o-2024-08-06',
    'execute_tool lookup_order',
    'chat claude-3-5-haiku-20241022',
    'execute_tool reply_to_user',
  ]);
  const [root, gpt, lookup, claude] = t.spans;
  expect(root).toMatchObject({ parent_otel_span_id: null, kind: 'internal', span_class: 'agent', status_code: 'UNSET' });
  expect(gpt).toMatchObject({ parent_otel_span_id: root.otel_span_id, kind: 'client', model_name: 'gpt-4o-2024-08-06', input_tokens: 900, output_tokens: 40 });
  expect(claude).toMatchObject({ model_name: 'claude-3-5-haiku-20241022', input_tokens: 1100, output_tokens: 60 });
  expect(lookup).toMatchObject({ status_code: 'ERROR', status_description: 'orders API returned 503', span_class: 'tool' });
  expect(lookup.events.map((e: { name: string }) => e.name)).toEqual(['exception']);
  for (const s of t.spans) {
    expect(BigInt(s.end_time_ns) >= BigInt(s.start_time_ns)).toBe(true);
    expect(s.duration_ms).toBeCloseTo(Number(BigInt(s.end_time_ns) - BigInt(s.start_time_ns)) / 1e6, 6);
  }
  expect(t.total_duration_ms).toBeCloseTo(root.duration_ms, 6);
}

describe('stock OpenTelemetry exporters', () => {
  it('OTLP/HTTP JSON exporter: an agent run stored, settled and read back', async () => {
    const results: number[] = [];
    const exporter = recording(new OTLPJsonExporter({ url: `${svc.url}/v1/traces`, headers: { authorization: `Bearer ${ingestKey}` } }), results);
    const p = provider(exporter, 'json-agent');
    const otelTraceId = runGenAiSupportAgent(p.getTracer('e2e'));
    await p.forceFlush();
    await p.shutdown();
    expect(results.length).toBeGreaterThan(1);
    expect(results.every((code) => code === 0)).toBe(true);
    const traceId = lookoutTraceId(project.id, otelTraceId);
    const t = await settledDetail(traceId, AGENT_RUN_SPANS);
    expect(t).toMatchObject({ id: traceId, otel_trace_id: otelTraceId, project_id: project.id, project_name: 'sdk e2e' });
    expectAgentRun(t, 'json-agent');
    // Spans came in several exports (batches of 3); the summary still sees the whole trace.
    const [processed] = await events(traceId, 'event_trace_processed');
    expect(processed).toMatchObject({ agent_name: GEN_AI_RUN.agentName, input_tokens: '2000', output_tokens: '100', error_count: 1, failing_tool_calls: 1, has_root: 1 });
    const tools = await events(traceId, 'event_tool_called');
    expect(tools.map((r) => [r.tool, r.agent_name, r.error])).toEqual([
      ['lookup_order', GEN_AI_RUN.agentName, 1],
      ['reply_to_user', GEN_AI_RUN.agentName, 0],
    ]);
    expect(tools.every((r) => r.actor === 'sdk' && r.surface === 'otlp' && r.api_key_id !== '')).toBe(true);
  });

  it('OTLP/HTTP protobuf exporter with gzip: the same run, the same answer', async () => {
    const results: number[] = [];
    const exporter = recording(
      new OTLPProtoExporter({ url: `${svc.url}/v1/traces`, headers: { authorization: `Bearer ${ingestKey}` }, compression: 'gzip' as never }),
      results,
    );
    const p = provider(exporter, 'proto-agent');
    const otelTraceId = runGenAiSupportAgent(p.getTracer('e2e'));
    await p.forceFlush();
    await p.shutdown();
    expect(results.every((code) => code === 0)).toBe(true);
    const t = await settledDetail(lookoutTraceId(project.id, otelTraceId), AGENT_RUN_SPANS);
    expectAgentRun(t, 'proto-agent');
    const generations = await events(t.id, 'event_generation_completed');
    expect(generations.map((g) => [g.model, g.provider, g.input_tokens, g.output_tokens, g.cached_input_tokens])).toEqual([
      ['gpt-4o-2024-08-06', 'openai', '900', '40', '512'],
      ['claude-3-5-haiku-20241022', 'anthropic', '1100', '60', '0'],
    ]);
    expect((await events(t.id, 'event_span_errored')).map((e) => e.span_name)).toEqual(['execute_tool lookup_order']);
  });

  it('Vercel AI SDK run (mock model, one tool, telemetry on): model, tokens once, tool call', async () => {
    const results: number[] = [];
    const exporter = recording(new OTLPProtoExporter({ url: `${svc.url}/v1/traces`, headers: { authorization: `Bearer ${ingestKey}` } }), results);
    const p = provider(exporter, 'weather-app');
    const text = await runVercelWeatherAgent(p.getTracer('ai'), { threadId: 'weather-thread-1' });
    expect(text).toContain('Lisbon');
    await p.forceFlush();
    await p.shutdown();
    expect(results.every((code) => code === 0)).toBe(true);
    const ids = await waitFor(async () => {
      const res = await svc.call('GET', `/projects/${project.id}/traces?agent_name=weather-agent`);
      return res.body.traces.length > 0 ? res.body.traces : undefined;
    }, 20_000, 'AI SDK trace');
    const t = (await svc.call('GET', `/traces/${ids[0].id}`)).body;
    expect(t).toMatchObject({
      service_name: 'weather-app',
      agent_name: 'weather-agent',
      thread_id: 'weather-thread-1',
      agent_input_display: 'What is the weather in Lisbon?',
      agent_output: 'It is 21°C and sunny in Lisbon.',
      has_error: false,
      interaction: { has_input: true, has_output: true, input_kind: 'text', has_user_message_tools: false },
      // 120+160 input and 15+12 output from the two model calls; ai.generateText's repeated sum is not added.
      stats: { span_count: 4, total_tokens: 307, error_count: 0, models_used: ['gpt-4o-mini'] },
    });
    expect(t.tool_calls).toEqual([expect.objectContaining({ name: 'get_weather', is_error: false })]);
    const generations = await events(t.id, 'event_generation_completed');
    expect(generations.map((g) => [g.model, g.provider, g.input_tokens, g.output_tokens])).toEqual([
      ['gpt-4o-mini', 'openai', '120', '15'],
      ['gpt-4o-mini', 'openai', '160', '12'],
    ]);
    expect(generations[0].cached_input_tokens).toBe('20');
    const [processed] = await events(t.id, 'event_trace_processed');
    expect(processed).toMatchObject({ input_tokens: '280', output_tokens: '27', total_tokens: '307', models: ['gpt-4o-mini'] });
    const names = await svc.call('GET', '/traces/agent-names', { key: await svc.newKey('read', { projectId: project.id }) });
    expect(names.body.agent_names).toEqual([GEN_AI_RUN.agentName, 'weather-agent'].sort());
  });
});
