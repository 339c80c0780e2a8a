import { beforeEach, describe, expect, it } from 'vitest';
import { context, trace, type Attributes, type Tracer } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { deriveSpanEventRows, otlpOrigin } from '../../../src/spans/event-rows.js';
import type { NormalizedSpan } from '../../../src/spans/normalized-span.js';
import { buildSpanTree } from '../../../src/spans/span-tree.js';
import { summarizeTrace, traceAgentName } from '../../../src/spans/trace-summary.js';
import { normalizeSdkSpans } from './fixtures/normalize-sdk-spans.js';

/**
 * One model call seen by a framework span and the client library's span below it
 * (src/spans/model-calls.ts): one generation.completed row, usage completed across both, whether
 * the two spans come in one request or in two; and the agent name taken from the invocation span.
 */

const origin = otlpOrigin('key-1', 'user-1');
const T0 = Date.now() - 60_000; // ms

let exporter: InMemorySpanExporter;
let tracer: Tracer;
beforeEach(() => {
  exporter = new InMemorySpanExporter();
  tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).getTracer('t');
});

// No context manager is registered here: the parent travels explicitly.
let parentContext = context.active();

function span(name: string, attributes: Attributes, startMs: number, endMs: number, body?: () => void) {
  const s = tracer.startSpan(name, { attributes, startTime: T0 + startMs }, parentContext);
  if (body) {
    const outer = parentContext;
    parentContext = trace.setSpan(outer, s);
    body();
    parentContext = outer;
  }
  s.end(T0 + endMs);
}

/** pydantic-ai over openai-v2 as the issue found it: the cached tokens only on the framework span. */
function pydanticRun(call2Outer: Attributes = {}) {
  span('invoke_agent weather-agent', { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'weather-agent' }, 0, 100, () => {
    for (const [at, extra] of [[0, {}], [50, call2Outer]] as const) {
      span(
        'chat gpt-4o-mini',
        { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'gpt-4o-mini', 'gen_ai.system': 'openai', 'gen_ai.usage.input_tokens': 145, 'gen_ai.usage.output_tokens': 21, 'gen_ai.usage.cache_read.input_tokens': 64, ...extra },
        at + 1,
        at + 40,
        () =>
          span(
            'chat gpt-4o-mini',
            { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'gpt-4o-mini', 'gen_ai.response.model': 'gpt-4o-mini-2024-07-18', 'gen_ai.system': 'openai', 'gen_ai.usage.input_tokens': 145, 'gen_ai.usage.output_tokens': 21 },
            at + 2,
            at + 38,
          ),
      );
    }
  });
  return normalizeSdkSpans(exporter.getFinishedSpans());
}

const rowsOf = (spans: NormalizedSpan[]) => deriveSpanEventRows(spans, buildSpanTree(spans), origin, () => '').generations;
const summary = (spans: NormalizedSpan[]) => summarizeTrace(spans, { origin, processedAt: '2026-11-28 00:00:00.000' });
const outerOf = (spans: NormalizedSpan[]) => spans.filter((s) => s.name === 'chat gpt-4o-mini' && s.attributes['gen_ai.usage.cache_read.input_tokens'] !== undefined);

describe('one model call counted once', () => {
  it('one request: one row per call, at the outer span, with the usage completed from both', () => {
    const spans = pydanticRun();
    expect(spans.filter((s) => s.spanClass === 'generation')).toHaveLength(4);
    const rows = rowsOf(spans);
    expect(rows.map((r) => r.span_id).sort()).toEqual(outerOf(spans).map((s) => s.spanId).sort());
    for (const r of rows) {
      expect(r).toMatchObject({ model: 'gpt-4o-mini-2024-07-18', provider: 'openai', input_tokens: 145, output_tokens: 21, cached_input_tokens: 64, duration_ms: 36 });
    }
    const { processed, usage, generations } = summary(spans);
    expect(processed).toMatchObject({ input_tokens: 290, output_tokens: 42, generations: 2, generations_with_provider: 2, agent_name: 'weather-agent' });
    // The counted (inner) spans are priced with the cached tokens only the framework span reported.
    expect(usage.generations.map((g) => [g.model, g.input_tokens, g.output_tokens, g.cached_input_tokens])).toEqual([
      ['gpt-4o-mini-2024-07-18', 145, 21, 64],
      ['gpt-4o-mini-2024-07-18', 145, 21, 64],
    ]);
    // Settling rewrites the same two rows (same key), never a third.
    expect(generations.map((g) => g.span_id).sort()).toEqual(rows.map((r) => r.span_id).sort());
    expect(generations).toEqual(rows.map((r) => expect.objectContaining({ ...r })));
  });

  it('split requests: the inner span alone writes no row; its outer writes one; settling completes it', () => {
    const spans = pydanticRun();
    const inner = spans.filter((s) => s.spanClass === 'generation' && !outerOf(spans).includes(s));
    const rest = spans.filter((s) => !inner.includes(s));
    // Request 1: only the client spans (their parent, the framework span, is in request 2).
    expect(rowsOf(inner)).toEqual([]);
    // Request 2: the framework spans and the agent; each holds its call's row with what it knows.
    const second = rowsOf(rest);
    expect(second.map((r) => [r.input_tokens, r.output_tokens, r.cached_input_tokens, r.model])).toEqual([
      [145, 21, 64, 'gpt-4o-mini'],
      [145, 21, 64, 'gpt-4o-mini'],
    ]);
    // Settling sees both and rewrites the same keys with the completed usage.
    const settled = summary(spans).generations;
    expect(settled.map((g) => [g.span_id, g.timestamp])).toEqual(second.map((r) => [r.span_id, r.timestamp]));
    expect(settled.every((g) => g.model === 'gpt-4o-mini-2024-07-18' && g.duration_ms === 36)).toBe(true);
  });

  it('the other order: the framework span first, alone, then the client span; still one row', () => {
    const spans = pydanticRun();
    const outer = outerOf(spans);
    const agent = spans.filter((s) => s.spanClass === 'agent');
    const inner = spans.filter((s) => s.spanClass === 'generation' && !outer.includes(s));
    // The agent and framework spans arrive first: the framework span decides (its ancestry is whole).
    const first = rowsOf([...agent, ...outer]);
    expect(first.map((r) => r.span_id).sort()).toEqual(outer.map((s) => s.spanId).sort());
    // The client spans arrive later: their parent is missing, so they write nothing.
    expect(rowsOf(inner)).toEqual([]);
  });

  it('different usage, operation or time: separate calls, each with its row', () => {
    // An outer span reporting the sum of work below it is not the same call as one request.
    const summed = pydanticRun({ 'gen_ai.usage.input_tokens': 290 });
    expect(rowsOf(summed)).toHaveLength(3);
    exporter.reset();
    const embed = pydanticRun({ 'gen_ai.operation.name': 'embeddings' });
    expect(rowsOf(embed)).toHaveLength(3);
    exporter.reset();
    span('chat outer', { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'm' }, 0, 10, () => {
      // Starts after its parent ended (a detached follow-up): not the same request.
      span('chat later', { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'm', 'gen_ai.usage.input_tokens': 5, 'gen_ai.usage.output_tokens': 1 }, 20, 30);
    });
    expect(rowsOf(normalizeSdkSpans(exporter.getFinishedSpans()))).toHaveLength(2);
  });

  it('OpenInference LLM span over a gen_ai client span with no usage of its own: one call', () => {
    span('ChatOpenAI', { 'openinference.span.kind': 'LLM', 'llm.model_name': 'gpt-4o-mini', 'llm.token_count.prompt': 30, 'llm.token_count.completion': 4, 'llm.token_count.prompt_details.cache_read': 10 }, 0, 10, () =>
      span('openai.chat', { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'gpt-4o-mini' }, 1, 9),
    );
    const spans = normalizeSdkSpans(exporter.getFinishedSpans());
    const rows = rowsOf(spans);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ input_tokens: 30, output_tokens: 4, cached_input_tokens: 10, model: 'gpt-4o-mini' });
    expect(summary(spans).processed).toMatchObject({ input_tokens: 30, output_tokens: 4, generations: 1 });
    // Settling writes the same row again (a chain may have been split across requests).
    expect(summary(spans).generations).toEqual(rows);
    exporter.reset();
    // A lone root model call settles with no rewrite: its ingest row is already final.
    span('chat', { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'm', 'gen_ai.usage.input_tokens': 3 }, 0, 5);
    const lone = normalizeSdkSpans(exporter.getFinishedSpans());
    expect(rowsOf(lone)).toHaveLength(1);
    expect(summary(lone).generations).toEqual([]);
  });
});

describe('the agent name of a run', () => {
  it('comes from the invocation span, not a placeholder copied onto every span', () => {
    const placeholder = { 'gen_ai.agent.name': 'OpenAI Agent' };
    span('workflow', { ...placeholder }, 0, 100, () =>
      span('invoke_agent weather-agent', { ...placeholder, 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'weather-agent' }, 1, 99, () => {
        span('chat gpt-4o-mini', { ...placeholder, 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'gpt-4o-mini', 'gen_ai.usage.input_tokens': 10, 'gen_ai.usage.output_tokens': 2 }, 2, 20);
        span('execute_tool get_weather', { ...placeholder, 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'get_weather' }, 21, 30);
      }),
    );
    const spans = normalizeSdkSpans(exporter.getFinishedSpans());
    const tree = buildSpanTree(spans);
    expect(traceAgentName(tree)).toBe('weather-agent');
    const s = summary(spans);
    expect(s.trace.agent_name).toBe('weather-agent');
    expect(s.tools.map((t) => t.agent_name)).toEqual(['weather-agent']);
    expect(deriveSpanEventRows(spans, tree, origin, () => '').tools[0].agent_name).toBe('weather-agent');
  });

  it('the outermost invocation names the run; other spans only when no invocation names one', () => {
    span('invoke_agent triage', { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'triage' }, 0, 100, () =>
      span('Agent billing', { 'openinference.span.kind': 'AGENT', 'agent.name': 'billing' }, 10, 90),
    );
    expect(traceAgentName(buildSpanTree(normalizeSdkSpans(exporter.getFinishedSpans())))).toBe('triage');
    exporter.reset();
    // OpenInference's OpenAI Agents processor names the agent only by graph.node.id on its AGENT span.
    span('Agent workflow', { 'openinference.span.kind': 'AGENT' }, 0, 100, () =>
      span('weather-agent', { 'openinference.span.kind': 'AGENT', 'graph.node.id': 'weather-agent' }, 1, 99, () =>
        span('chain', { 'openinference.span.kind': 'CHAIN', 'graph.node.id': 'a-step' }, 2, 3),
      ),
    );
    expect(traceAgentName(buildSpanTree(normalizeSdkSpans(exporter.getFinishedSpans())))).toBe('weather-agent');
    exporter.reset();
    span('root', {}, 0, 100, () => span('chat', { 'gen_ai.operation.name': 'chat', 'gen_ai.agent.name': 'only-name' }, 1, 2));
    expect(traceAgentName(buildSpanTree(normalizeSdkSpans(exporter.getFinishedSpans())))).toBe('only-name');
  });
});
