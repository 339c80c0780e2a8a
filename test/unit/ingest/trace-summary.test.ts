import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { context } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { otlpOrigin } from '../../../src/spans/event-rows.js';
import type { NormalizedSpan } from '../../../src/spans/normalized-span.js';
import { lookoutTraceId } from '../../../src/spans/trace-id.js';
import { summarizeTrace } from '../../../src/spans/trace-summary.js';
import type { PriceTrace } from '../../../src/spans/trace-pricing.js';
import { GEN_AI_RUN, runGenAiSupportAgent } from './fixtures/gen-ai-agent-run.js';
import { normalizeSdkSpans, TEST_SCOPE } from './fixtures/normalize-sdk-spans.js';
import { runVercelWeatherAgent } from './fixtures/vercel-ai-run.js';

const origin = otlpOrigin('key-1', 'user-1');

function record(run: (provider: BasicTracerProvider) => unknown) {
  return async () => {
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ 'service.name': 'support-svc', 'service.version': '3.1.0' }),
      spanProcessors: [new SimpleSpanProcessor(exporter)],
    });
    await run(provider);
    return normalizeSdkSpans(exporter.getFinishedSpans());
  };
}

describe('trace summary: GenAI agent run', () => {
  let spans: NormalizedSpan[];
  beforeAll(async () => {
    spans = await record((p) => runGenAiSupportAgent(p.getTracer('agent')))();
  });

  it('never counts the agent span usage on top of its model calls', () => {
    const { processed } = summarizeTrace(spans, { origin, processedAt: '2026-11-22 00:00:00.000' });
    const input = GEN_AI_RUN.generations.reduce((n, g) => n + g.input, 0);
    const output = GEN_AI_RUN.generations.reduce((n, g) => n + g.output, 0);
    expect(processed).toMatchObject({ input_tokens: input, output_tokens: output, total_tokens: input + output });
  });

  it('fills the trace.processed row', () => {
    const { processed } = summarizeTrace(spans, { origin, processedAt: '2026-11-22 00:00:00.000' });
    const root = spans.find((s) => s.parentSpanId === '')!;
    expect(processed).toMatchObject({
      tenant_id: TEST_SCOPE.tenantId,
      project_id: TEST_SCOPE.projectId,
      trace_id: lookoutTraceId(TEST_SCOPE.projectId, root.otelTraceId),
      actor: 'sdk',
      surface: 'otlp',
      user_id: 'user-1',
      api_key_id: 'key-1',
      agent_name: 'support-agent',
      root_status_code: 'UNSET',
      has_root: 1,
      root_duration_ms: root.durationMs,
      error_count: 1,
      failing_tool_calls: 1,
      models: ['claude-3-5-haiku-20241022', 'gpt-4o-2024-08-06'],
      estimated_cost_usd: null,
      estimated_cost_basis: 'unavailable',
      cost_priced_tokens: 0,
      cost_unpriced_models: [],
      cost_priced_at: null,
      cost_model_costs: {},
      processed_at: '2026-11-22 00:00:00.000',
    });
  });

  it('counts the run\'s model calls, those naming a provider, and its tool calls (window coverage)', () => {
    const { processed } = summarizeTrace(spans, { origin, processedAt: '2026-11-22 00:00:00.000' });
    // The agent span repeats its calls' usage but is not a model call; both chats name a provider;
    // lookup_order and reply_to_user are the tools.
    expect(processed).toMatchObject({ generations: GEN_AI_RUN.generations.length, generations_with_provider: 2, tool_calls: 2 });
    const withoutProvider = spans.map((s) => (s.model === GEN_AI_RUN.generations[0].model ? { ...s, provider: '' } : s));
    expect(summarizeTrace(withoutProvider, { origin, processedAt: '2026-11-22 00:00:00.000' }).processed).toMatchObject({ generations: 2, generations_with_provider: 1, tool_calls: 2 });
  });

  it('leaves first_processing to its column default: no settle marks a first processing', () => {
    expect(summarizeTrace(spans, { origin, processedAt: '2026-11-22 00:00:00.000' }).processed).not.toHaveProperty('first_processing');
  });

  it('fills the traces row: thread, agent, release, interaction, tool calls, stats', () => {
    const { trace } = summarizeTrace(spans, { origin, processedAt: '2026-11-22 00:00:00.000' });
    expect(trace).toMatchObject({
      service_name: 'support-svc',
      agent_name: 'support-agent',
      thread_id: GEN_AI_RUN.threadId,
      release: '3.1.0',
      agent_input_display: GEN_AI_RUN.userRequest,
      has_error: 1,
      span_count: 5,
      error_count: 1,
      models_used: ['claude-3-5-haiku-20241022', 'gpt-4o-2024-08-06'],
      total_tokens: 2100, // 2000 input + 100 output, the agent's repeated sum left out
    });
    expect(JSON.parse(trace.interaction)).toEqual({ has_input: true, has_output: true, input_kind: 'messages', has_user_message_tools: true });
    const toolCalls = JSON.parse(trace.tool_calls);
    expect(toolCalls.map((t: { name: string }) => t.name)).toEqual(['lookup_order', 'reply_to_user']);
    expect(toolCalls[0]).toMatchObject({ is_error: true, user_facing_message: '', user_facing_message_truncated: false, user_facing_messages_omitted: 0 });
    expect(toolCalls[1]).toMatchObject({ is_error: false, user_facing_message: GEN_AI_RUN.reply, user_facing_message_truncated: false });
    expect(JSON.parse(trace.stats_tool_calls)).toEqual([
      { name: 'lookup_order', otel_span_id: toolCalls[0].span_id, status: 'error' },
      { name: 'reply_to_user', otel_span_id: toolCalls[1].span_id, status: 'ok' },
    ]);
    expect(JSON.parse(trace.agent_output!)[0].parts[0].content).toBe(GEN_AI_RUN.reply);
  });

  it('passes the counted usage to the cost hook and stores its answer', () => {
    const seen: unknown[] = [];
    const priceTrace: PriceTrace = (usage) => {
      seen.push(usage);
      return {
        estimated_cost_usd: 0.0123,
        estimated_cost_basis: 'stored',
        cost_priced_tokens: 2100,
        cost_unpriced_models: [],
        cost_priced_at: '2026-11-22 00:00:00.000',
        cost_model_costs: { 'gpt-4o-2024-08-06': 0.01, 'claude-3-5-haiku-20241022': 0.0023 },
      };
    };
    const { processed, trace, usage } = summarizeTrace(spans, { origin, processedAt: '2026-11-22 00:00:00.000', priceTrace });
    expect(seen).toEqual([usage]);
    expect(usage.generations.map((g) => [g.model, g.input_tokens, g.output_tokens, g.cached_input_tokens]).sort()).toEqual([
      ['claude-3-5-haiku-20241022', 1100, 60, 0],
      ['gpt-4o-2024-08-06', 900, 40, 512],
    ]);
    expect(processed.estimated_cost_usd).toBe(0.0123);
    expect(processed.estimated_cost_basis).toBe('stored');
    expect(trace.estimated_cost_usd).toBe(0.0123);
  });

  it('summarizes a partial trace (no root yet) from what it has', () => {
    const partial = spans.filter((s) => s.parentSpanId !== '');
    const { processed, trace } = summarizeTrace(partial, { origin, processedAt: '2026-11-22 00:00:00.000' });
    expect(processed).toMatchObject({ has_root: 0, root_status_code: '', root_duration_ms: null, input_tokens: 2000, output_tokens: 100 });
    // No span names the agent any more: the trace falls back to its service.
    expect(trace.agent_name).toBe('support-svc');
  });

  it('re-derives tool.called rows with the whole trace known', () => {
    const { tools } = summarizeTrace(spans, { origin, processedAt: '2026-11-22 00:00:00.000' });
    expect(tools.map((t) => [t.tool, t.agent_name, t.error])).toEqual([
      ['lookup_order', 'support-agent', 1],
      ['reply_to_user', 'support-agent', 0],
    ]);
  });
});

describe('trace summary: Vercel AI SDK run', () => {
  const manager = new AsyncLocalStorageContextManager();
  let spans: NormalizedSpan[];
  beforeAll(async () => {
    context.setGlobalContextManager(manager.enable());
    spans = await record((p) => runVercelWeatherAgent(p.getTracer('ai'), { threadId: 'thread-9' }))();
  });
  afterAll(() => {
    context.disable();
  });

  it('counts the two model calls once, not again through ai.generateText', () => {
    const { processed, trace } = summarizeTrace(spans, { origin, processedAt: '2026-11-22 00:00:00.000' });
    expect(processed).toMatchObject({ input_tokens: 280, output_tokens: 27, total_tokens: 307, models: ['gpt-4o-mini'], agent_name: 'weather-agent' });
    expect(trace).toMatchObject({
      thread_id: 'thread-9',
      agent_input_display: 'What is the weather in Lisbon?',
      agent_output: 'It is 21°C and sunny in Lisbon.',
    });
    expect(JSON.parse(trace.interaction)).toEqual({ has_input: true, has_output: true, input_kind: 'text', has_user_message_tools: false });
    expect(JSON.parse(trace.tool_calls)).toHaveLength(1);
  });
});
