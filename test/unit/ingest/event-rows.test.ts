import { beforeAll, describe, expect, it } from 'vitest';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { mapAttributes } from '../../../src/spans/attribute-mapping.js';
import { deriveSpanEventRows, otlpOrigin, tokensPerSecond } from '../../../src/spans/event-rows.js';
import { nsToDateTime64 } from '../../../src/platform/clickhouse/clickhouse-time.js';
import type { NormalizedSpan } from '../../../src/spans/normalized-span.js';
import { buildSpanTree } from '../../../src/spans/span-tree.js';
import { runGenAiSupportAgent } from './fixtures/gen-ai-agent-run.js';
import { normalizeSdkSpans } from './fixtures/normalize-sdk-spans.js';

describe('per-span event rows', () => {
  let spans: NormalizedSpan[];
  beforeAll(() => {
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    runGenAiSupportAgent(provider.getTracer('t'));
    spans = normalizeSdkSpans(exporter.getFinishedSpans());
  });

  it('derives spans, generation.completed, tool.called and span.errored rows', () => {
    const origin = otlpOrigin('key-9', 'user-9');
    const rows = deriveSpanEventRows(spans, buildSpanTree(spans), origin, () => 'fallback');
    expect(rows.spans).toHaveLength(5);
    expect(rows.generations).toHaveLength(2);
    expect(rows.tools).toHaveLength(2);
    expect(rows.errors).toHaveLength(1);
    const gen = rows.generations.find((g) => g.model === 'gpt-4o-2024-08-06')!;
    const span = spans.find((s) => s.spanId === gen.span_id)!;
    expect(gen).toEqual({
      tenant_id: 'tenant-1',
      project_id: 'project-1',
      timestamp: nsToDateTime64(span.startNs),
      actor: 'sdk',
      surface: 'otlp',
      user_id: 'user-9',
      api_key_id: 'key-9',
      trace_id: span.traceId,
      span_id: span.spanId,
      model: 'gpt-4o-2024-08-06',
      provider: 'openai',
      duration_ms: span.durationMs,
      input_tokens: 900,
      output_tokens: 40,
      cached_input_tokens: 512,
      cache_write_input_tokens: 0,
      tps: tokensPerSecond(40, span.durationMs),
      error: 0,
    });
    expect(rows.tools.find((t) => t.tool === 'lookup_order')).toMatchObject({ agent_name: 'support-agent', error: 1, output_tokens: 0 });
    expect(rows.errors[0]).toMatchObject({ span_name: 'execute_tool lookup_order', api_key_id: 'key-9' });
    const spanRow = rows.spans.find((r) => r.span_id === span.spanId)!;
    expect(spanRow).toMatchObject({ span_class: 'generation', kind: 'client', status_code: 'UNSET', agent_name: 'support-agent', start_time_ns: span.startNs });
    expect(spanRow.attributes['gen_ai.request.model']).toBe('gpt-4o-2024-08-06');
  });

  it('fills cache_write_input_tokens from each convention\'s cache-write usage attribute (0 when absent)', () => {
    const gen = spans.find((s) => s.spanClass === 'generation' && s.model === 'gpt-4o-2024-08-06')!;
    const cases: [string, number][] = [
      ['gen_ai.usage.cache_creation.input_tokens', 300],
      ['gen_ai.usage.cache_creation_input_tokens', 301],
      ['gen_ai.usage.input_tokens.cache_write', 302],
      ['llm.token_count.prompt_details.cache_write', 303],
      ['ai.usage.inputTokenDetails.cacheWriteTokens', 304],
    ];
    for (const [key, value] of cases) {
      const attributes = { ...gen.attributes, [key]: value };
      // A root span: a model call whose parent is not in the request gets its row at settling (model-calls.ts).
      const span: NormalizedSpan = { ...gen, parentSpanId: '', attributes, ...mapAttributes(attributes, gen.resource) };
      const rows = deriveSpanEventRows([span], buildSpanTree([span]), otlpOrigin('', ''), () => '');
      expect(rows.generations.map((g) => g.cache_write_input_tokens), key).toEqual([value]);
      // Cache writes are part of the prompt: input and cache-read counts stay as reported.
      expect(rows.generations[0]).toMatchObject({ input_tokens: 900, cached_input_tokens: 512 });
    }
    // The current gen_ai name wins over the deprecated one; a malformed value falls through to the next source.
    const both = mapAttributes({ 'gen_ai.usage.cache_creation.input_tokens': 7, 'gen_ai.usage.cache_creation_input_tokens': 8 }, {});
    expect(both.cacheWriteInputTokens).toBe(7);
    expect(mapAttributes({ 'gen_ai.usage.cache_creation.input_tokens': 'n/a', 'llm.token_count.prompt_details.cache_write': '9' }, {}).cacheWriteInputTokens).toBe(9);
    expect(mapAttributes({ 'gen_ai.usage.input_tokens': 5 }, {}).cacheWriteInputTokens).toBeNull();
  });

  it('uses the trace-level fallback agent for a tool span whose ancestors are not in the batch', () => {
    const toolsOnly = spans.filter((s) => s.spanClass === 'tool');
    const rows = deriveSpanEventRows(toolsOnly, buildSpanTree(toolsOnly), otlpOrigin('', ''), () => 'from-trace');
    expect(rows.tools.map((t) => t.agent_name)).toEqual(['from-trace', 'from-trace']);
  });

  it('formats times without losing precision', () => {
    expect(nsToDateTime64('1700000000123456789')).toBe('2023-11-14 22:13:20.123');
    expect(tokensPerSecond(null, 100)).toBeNull();
    expect(tokensPerSecond(50, 0)).toBeNull();
    expect(tokensPerSecond(50, 500)).toBe(100);
  });
});
