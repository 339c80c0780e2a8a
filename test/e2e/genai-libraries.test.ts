import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { context, trace, type Attributes, type Tracer } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { calcPrice } from '@pydantic/genai-prices';
import { setSession } from '@arizeai/openinference-core';
import { OpenAIInstrumentation as OpenInferenceOpenAI } from '@arizeai/openinference-instrumentation-openai';
import { LangChainInstrumentation } from '@arizeai/openinference-instrumentation-langchain';
import { OpenAIAgentsInstrumentation } from '@arizeai/openinference-instrumentation-openai-agents';
import { OpenAIInstrumentation as OpenLLMetryOpenAI } from '@traceloop/instrumentation-openai';
import * as CallbackManagerModule from '@langchain/core/callbacks/manager';
import OpenAI from 'openai';
import * as openaiModule from 'openai';
import { createOpenAI } from '@ai-sdk/openai';
import { generateText } from 'ai';
import { lookoutTraceId } from '../../src/spans/trace-id.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { FAKE_MODEL, startFakeOpenAI, type FakeOpenAI } from '../helpers/fake-openai.js';
import { waitFor } from '../integration/ingest/otlp-client.js';

/**
 * Real instrumentation libraries from npm, driving real clients against a fake OpenAI-compatible
 * server on 127.0.0.1, exported by the OpenTelemetry JS SDK's OTLP/HTTP exporter to the running
 * service; every case checks what Lookout made of it: model calls, tokens (cached included), cost,
 * agent, thread, input and output. docs/integrations.md lists what each library sends.
 */

const USAGE = { prompt: 145, completion: 21, cached: 64, reasoning: 5 };
const QUESTION = 'What is the weather in Paris?';
const ANSWER = 'It is 18°C and sunny in Paris.';

let svc: TestService;
let fake: FakeOpenAI;
const manager = new AsyncLocalStorageContextManager();

beforeAll(async () => {
  svc = await startTestService();
  fake = await startFakeOpenAI();
  context.setGlobalContextManager(manager.enable());
});
afterAll(async () => {
  context.disable();
  await fake?.close();
  await svc?.stop();
});

/** One call's price as the pricing package computes it, with and without its cached tokens. */
function price(calls: number, cached = USAGE.cached): number {
  const usage: Record<string, number> = { input_tokens: USAGE.prompt, output_tokens: USAGE.completion };
  if (cached > 0) usage.cache_read_tokens = cached;
  return calls * calcPrice(usage, FAKE_MODEL, { providerId: 'openai' })!.total_price;
}

interface Sink {
  project: string;
  provider: NodeTracerProvider;
  exported: ReadableSpan[];
  /** Export calls made so far; `results` gets each one's code when it answers. */
  exports: () => number;
  results: number[];
}

/** A project of its own and a tracer provider exporting OTLP/HTTP (protobuf) to it. */
async function sink(service: string, batch = 64): Promise<Sink> {
  const project = (await svc.newProject(service)).id;
  const key = await svc.newKey('ingest', { projectId: project });
  const exported: ReadableSpan[] = [];
  const results: number[] = [];
  let exports = 0;
  const inner = new OTLPTraceExporter({ url: `${svc.url}/v1/traces`, headers: { authorization: `Bearer ${key}` } });
  const exporter: SpanExporter = {
    export: (spans, done) => {
      exports++;
      exported.push(...spans);
      inner.export(spans, (r) => {
        results.push(r.code);
        done(r);
      });
    },
    shutdown: () => inner.shutdown(),
    forceFlush: () => inner.forceFlush(),
  };
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': service }),
    spanProcessors: [new BatchSpanProcessor(exporter, { maxExportBatchSize: batch, scheduledDelayMillis: 20 })],
  });
  return { project, provider, exported, exports: () => exports, results };
}

/** Flushes, then waits for the one trace to settle; its detail, event rows and model scorecard. */
async function settled(s: Sink) {
  await s.provider.forceFlush();
  // forceFlush waits for the batches it sends itself, not for one the processor's timer sent just before.
  await waitFor(async () => (s.results.length === s.exports() ? true : undefined), 30_000, 'every export answered');
  expect(s.results.length).toBeGreaterThan(0);
  expect(s.results.every((code) => code === 0)).toBe(true);
  const otelIds = [...new Set(s.exported.map((x) => x.spanContext().traceId))];
  expect(otelIds).toHaveLength(1);
  const id = lookoutTraceId(s.project, otelIds[0]);
  // Settled with every exported span: spans of one trace sent in several requests may arrive after
  // a first settle (a slow request past TRACE_SETTLE_MS), which lists the trace before it settles again.
  await waitFor(async () => {
    const res = await svc.call('GET', `/projects/${s.project}/traces?limit=10`);
    return res.body.traces?.some((t: { id: string; span_count: number }) => t.id === id && t.span_count === s.exported.length) ? true : undefined;
  }, 30_000, 'trace settled with every span');
  const detail = (await svc.call('GET', `/traces/${id}`)).body;
  const generations = await rows(id, 'event_generation_completed');
  const [processed] = await rows(id, 'event_trace_processed');
  const whole = (ms: number) => new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
  const card = await svc.call('GET', `/projects/${s.project}/analytics?view=model_scorecard&start=${whole(Date.now() - 3_600_000)}&end=${whole(Date.now() + 60_000)}`);
  expect(card.status, JSON.stringify(card.body)).toBe(200);
  const scorecard = card.body;
  return { detail, generations, processed, scorecard };
}

async function rows(traceId: string, table: string) {
  const { ch } = svc.service.deps;
  const res = await ch.client.query({
    query: `SELECT *${table === 'event_trace_processed' ? '' : ", lower(leftPad(hex(span_id), 16, '0')) AS span_hex"} FROM ${ch.table(table)} FINAL WHERE trace_id = {t:String} ORDER BY timestamp`,
    query_params: { t: traceId },
    format: 'JSONEachRow',
    clickhouse_settings: { output_format_json_quote_64bit_integers: 0 },
  });
  return res.json<Record<string, any>>();
}

/** Calls, tokens and cost agree across the generation rows, the trace and the model scorecard. */
function expectCalls(r: Awaited<ReturnType<typeof settled>>, calls: number, model: string, cached: number, provider = 'openai') {
  expect(r.generations.map((g) => [g.model, g.provider, g.input_tokens, g.output_tokens, g.cached_input_tokens])).toEqual(
    Array.from({ length: calls }, () => [model, provider, USAGE.prompt, USAGE.completion, cached]),
  );
  expect(r.processed).toMatchObject({ generations: calls, input_tokens: calls * USAGE.prompt, output_tokens: calls * USAGE.completion });
  expect(r.detail.stats.total_tokens).toBe(calls * (USAGE.prompt + USAGE.completion));
  expect(r.detail.estimated_cost_usd).toBeCloseTo(price(calls, cached), 12);
  const card = r.scorecard.rows.find((row: { model: string }) => row.model === model);
  expect(card).toMatchObject({ input_tokens: calls * USAGE.prompt, output_tokens: calls * USAGE.completion });
  expect(card.estimated_cost_usd).toBeCloseTo(price(calls, cached), 12);
}

describe('real JavaScript GenAI instrumentations against a fake OpenAI server', () => {
  it('OpenInference OpenAI: one call, cached tokens priced, the session as thread', async () => {
    const s = await sink('oi-openai-app');
    const inst = new OpenInferenceOpenAI({ tracerProvider: s.provider });
    inst.manuallyInstrument(openaiModule as never);
    try {
      fake.script([{ text: ANSWER }], USAGE);
      const client = new OpenAI({ baseURL: fake.baseURL, apiKey: 'sk-test' });
      const reply = await context.with(setSession(context.active(), { sessionId: 'oi-session-1' }), () =>
        client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: QUESTION }] }),
      );
      expect(reply.choices[0].message.content).toBe(ANSWER);
    } finally {
      inst.disable();
    }
    const r = await settled(s);
    expectCalls(r, 1, FAKE_MODEL, USAGE.cached);
    // No agent span: the run is named after its service.
    expect(r.detail).toMatchObject({ agent_name: 'oi-openai-app', thread_id: 'oi-session-1' });
    expect(r.detail.stats.models_used).toEqual([FAKE_MODEL]);
    expect(r.detail.agent_input_display).toBe(QUESTION);
    // The span's output.value is the whole response body; the answer is in it.
    expect(r.detail.agent_output.choices[0].message.content).toBe(ANSWER);
    await s.provider.shutdown();
  });

  it('OpenLLMetry (Traceloop) OpenAI under an invoke_agent span: agent, thread, tokens (no cached tokens reported)', async () => {
    const s = await sink('openllmetry-app');
    const inst = new OpenLLMetryOpenAI({});
    inst.setTracerProvider(s.provider);
    inst.manuallyInstrument(OpenAI);
    try {
      fake.script([{ text: ANSWER }], USAGE);
      const client = new OpenAI({ baseURL: fake.baseURL, apiKey: 'sk-test' });
      const tracer = s.provider.getTracer('app');
      await tracer.startActiveSpan(
        'invoke_agent support-bot',
        { attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'support-bot', 'gen_ai.conversation.id': 'conv-7' } },
        async (span) => {
          await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: QUESTION }] });
          span.end();
        },
      );
    } finally {
      inst.disable();
    }
    const r = await settled(s);
    // OpenLLMetry JS 0.27 records no cached-token attribute for chat completions: priced without them.
    expectCalls(r, 1, FAKE_MODEL, 0);
    expect(r.detail).toMatchObject({ agent_name: 'support-bot', thread_id: 'conv-7' });
    expect(r.detail.agent_input_display).toBe(QUESTION);
    expect(r.detail.agent_output).toEqual([{ role: 'assistant', finish_reason: 'stop', parts: [{ type: 'text', content: ANSWER }] }]);
    await s.provider.shutdown();
  });

  it('LangChain JS with OpenInference LangChain: one call, cached tokens, session thread', async () => {
    const s = await sink('langchain-app');
    const inst = new LangChainInstrumentation({ tracerProvider: s.provider });
    inst.manuallyInstrument(CallbackManagerModule);
    try {
      fake.script([{ text: ANSWER }], USAGE);
      const { ChatOpenAI } = await import('@langchain/openai');
      const model = new ChatOpenAI({ model: 'gpt-4o-mini', apiKey: 'sk-test', configuration: { baseURL: fake.baseURL } });
      const reply = await context.with(setSession(context.active(), { sessionId: 'lc-session-1' }), () => model.invoke([['user', QUESTION]]));
      expect(reply.content).toBe(ANSWER);
    } finally {
      inst.disable();
    }
    const r = await settled(s);
    // The LangChain span names the requested model and no provider; priced by the model name alone.
    expectCalls(r, 1, 'gpt-4o-mini', USAGE.cached, '');
    expect(r.detail).toMatchObject({ agent_name: 'langchain-app', thread_id: 'lc-session-1' });
    // LangChain's serialized messages are shown as they came (the question is inside them).
    expect(r.detail.agent_input.messages[0][0].kwargs.content).toBe(QUESTION);
    expect(r.detail.agent_input_display).toContain(QUESTION);
    expect(r.detail.agent_output.generations[0][0].text).toBe(ANSWER);
    await s.provider.shutdown();
  });

  it('OpenAI Agents JS SDK with the OpenInference processor: the agent, a tool call, two model calls', async () => {
    const agents = await import('@openai/agents');
    const { z } = await import('zod');
    const s = await sink('agents-app');
    const inst = new OpenAIAgentsInstrumentation({ tracerProvider: s.provider });
    inst.manuallyInstrument(agents);
    try {
      fake.script([{ toolCall: { name: 'get_weather', arguments: { city: 'Paris' } } }, { text: ANSWER }], USAGE);
      agents.setDefaultOpenAIClient(new OpenAI({ baseURL: fake.baseURL, apiKey: 'sk-test' }) as never);
      agents.setOpenAIAPI('chat_completions');
      // The SDK turns its tracing off when NODE_ENV is 'test' (as under vitest).
      agents.setTracingDisabled(false);
      const getWeather = agents.tool({
        name: 'get_weather',
        description: 'Current weather for a city',
        parameters: z.object({ city: z.string() }),
        execute: async ({ city }) => `18°C and sunny in ${city}`,
      });
      const agent = new agents.Agent({ name: 'weather-agent', instructions: 'Be brief.', model: 'gpt-4o-mini', tools: [getWeather] });
      // The processor's spans carry OpenInference context attributes: the session names the thread.
      const result = await context.with(setSession(context.active(), { sessionId: 'agents-thread-1' }), () => agents.run(agent, QUESTION));
      expect(result.finalOutput).toBe(ANSWER);
      await agents.getGlobalTraceProvider().forceFlush();
    } finally {
      inst.disable();
    }
    const r = await settled(s);
    // The processor records the requested model name (the SDK's span data has no response model).
    expectCalls(r, 2, 'gpt-4o-mini', USAGE.cached);
    expect(r.detail).toMatchObject({ agent_name: 'weather-agent', thread_id: 'agents-thread-1' });
    expect(r.detail.tool_calls.map((c: { name: string; is_error: boolean }) => [c.name, c.is_error])).toEqual([['get_weather', false]]);
    expect(r.detail.agent_input_display).toBe(QUESTION);
    expect(r.detail.agent_output).toBe(ANSWER);
    const tools = await rows(r.detail.id, 'event_tool_called');
    expect(tools.map((t) => [t.tool, t.agent_name])).toEqual([['get_weather', 'weather-agent']]);
    await s.provider.shutdown();
  });

  it('Vercel AI SDK with its OpenAI provider: model calls, cached tokens, functionId as agent, metadata thread', async () => {
    const s = await sink('vercel-app');
    fake.script([{ text: ANSWER }], USAGE);
    const openai = createOpenAI({ baseURL: fake.baseURL, apiKey: 'sk-test' });
    const result = await generateText({
      model: openai.chat('gpt-4o-mini'),
      prompt: QUESTION,
      experimental_telemetry: { isEnabled: true, functionId: 'paris-weather', metadata: { threadId: 'vercel-thread-1' }, tracer: s.provider.getTracer('ai') },
    });
    expect(result.text).toBe(ANSWER);
    const r = await settled(s);
    expectCalls(r, 1, FAKE_MODEL, USAGE.cached);
    expect(r.detail).toMatchObject({ agent_name: 'paris-weather', thread_id: 'vercel-thread-1', agent_input_display: QUESTION, agent_output: ANSWER });
    await s.provider.shutdown();
  });
});

// ---------------------------------------------------------------------------------------------
// Shapes no JavaScript stack produces, sent through the real SDK and exporter: a framework
// model-call span over the client library's span for the same call (pydantic-ai over the official
// openai-v2 instrumentation, in Python), and a placeholder agent name on every span (the official
// OpenAI Agents instrumentation). One span per export, so a call's two spans arrive in different
// requests and the decision is made at settling.

function at(tracer: Tracer, name: string, attributes: Attributes, startMs: number, endMs: number, parent: ReturnType<typeof context.active>, body?: (ctx: ReturnType<typeof context.active>) => void) {
  const t0 = Date.now() - 10_000;
  const span = tracer.startSpan(name, { attributes, startTime: t0 + startMs }, parent);
  body?.(trace.setSpan(parent, span));
  span.end(t0 + endMs);
}

describe('nested instrumentation and placeholder agent names, across requests', () => {
  it('a framework span over a client span: one row per call, cached tokens from the framework span, the invoked agent named', async () => {
    const s = await sink('nested-app', 1);
    const tracer = s.provider.getTracer('shapes');
    const placeholder = { 'gen_ai.agent.name': 'OpenAI Agent' };
    at(tracer, 'invoke_agent weather-agent', { ...placeholder, 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'weather-agent', 'gen_ai.conversation.id': 'nested-thread' }, 0, 200, context.active(), (agent) => {
      for (const start of [10, 100]) {
        at(
          tracer,
          'chat gpt-4o-mini',
          { ...placeholder, 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'gpt-4o-mini', 'gen_ai.system': 'openai', 'gen_ai.usage.input_tokens': USAGE.prompt, 'gen_ai.usage.output_tokens': USAGE.completion, 'gen_ai.usage.cache_read.input_tokens': USAGE.cached },
          start,
          start + 60,
          agent,
          (framework) =>
            at(
              tracer,
              'chat gpt-4o-mini',
              { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'gpt-4o-mini', 'gen_ai.response.model': FAKE_MODEL, 'gen_ai.system': 'openai', 'gen_ai.usage.input_tokens': USAGE.prompt, 'gen_ai.usage.output_tokens': USAGE.completion },
              start + 5,
              start + 55,
              framework,
            ),
        );
      }
      at(tracer, 'execute_tool get_weather', { ...placeholder, 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'get_weather' }, 80, 90, agent);
    });
    const r = await settled(s);
    expect(s.results.length).toBe(6);
    expectCalls(r, 2, FAKE_MODEL, USAGE.cached);
    // The rows sit at the framework (outer) spans.
    const outer = s.exported.filter((x) => x.attributes['gen_ai.usage.cache_read.input_tokens'] !== undefined).map((x) => x.spanContext().spanId);
    expect(r.generations.map((g) => g.span_hex).sort()).toEqual(outer.sort());
    expect(r.detail).toMatchObject({ agent_name: 'weather-agent', thread_id: 'nested-thread' });
    const tools = await rows(r.detail.id, 'event_tool_called');
    expect(tools.map((t) => [t.tool, t.agent_name])).toEqual([['get_weather', 'weather-agent']]);
    const names = await svc.call('GET', '/traces/agent-names', { key: await svc.newKey('read', { projectId: s.project }) });
    expect(names.body.agent_names).toEqual(['weather-agent']);
    await s.provider.shutdown();
  });
});
