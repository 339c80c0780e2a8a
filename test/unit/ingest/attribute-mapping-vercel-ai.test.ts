import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { context } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { mapAttributes } from '../../../src/spans/attribute-mapping.js';
import type { Attributes } from '../../../src/spans/otlp-types.js';
import { runVercelWeatherAgent } from './fixtures/vercel-ai-run.js';

/** The attribute sets come from a real `ai` generateText run (mock model, one tool, telemetry on). */
describe('attribute mapping: Vercel AI SDK', () => {
  let spans: ReadableSpan[] = [];
  const manager = new AsyncLocalStorageContextManager();

  beforeAll(async () => {
    context.setGlobalContextManager(manager.enable());
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    await runVercelWeatherAgent(provider.getTracer('ai'), { threadId: 'thread-9', release: '2026.11.1' });
    spans = exporter.getFinishedSpans();
  });
  afterAll(() => {
    context.disable();
  });

  const attrs = (s: ReadableSpan) => s.attributes as Attributes;
  const resource = { 'service.name': 'weather-app' };

  it('produced the expected spans', () => {
    expect(spans.map((s) => s.name).sort()).toEqual(['ai.generateText', 'ai.generateText.doGenerate', 'ai.generateText.doGenerate', 'ai.toolCall']);
  });

  it('maps the doGenerate spans as generations with model, provider and usage', () => {
    const [first, second] = spans.filter((s) => s.name === 'ai.generateText.doGenerate').map((s) => mapAttributes(attrs(s), resource));
    expect(first).toMatchObject({
      spanClass: 'generation',
      model: 'gpt-4o-mini',
      provider: 'openai',
      inputTokens: 120,
      outputTokens: 15,
      cachedInputTokens: 20,
      agentName: 'weather-agent',
      threadId: 'thread-9',
      release: '2026.11.1',
    });
    expect(second).toMatchObject({ inputTokens: 160, outputTokens: 12, cachedInputTokens: null, agentOutput: 'It is 21°C and sunny in Lisbon.' });
  });

  it('maps the toolCall span as a tool with its arguments', () => {
    const mapped = mapAttributes(attrs(spans.find((s) => s.name === 'ai.toolCall')!), resource);
    expect(mapped).toMatchObject({ spanClass: 'tool', toolName: 'get_weather', toolArguments: '{"city":"Lisbon"}', agentName: 'weather-agent' });
  });

  it('maps the outer generateText span as the agent, with its prompt and summed usage', () => {
    const mapped = mapAttributes(attrs(spans.find((s) => s.name === 'ai.generateText')!), resource);
    expect(mapped).toMatchObject({
      spanClass: 'agent',
      agentName: 'weather-agent',
      agentInput: '{"prompt":"What is the weather in Lisbon?"}',
      agentOutput: 'It is 21°C and sunny in Lisbon.',
      // The SDK repeats the sum of its steps here; span-tree keeps it out of trace totals.
      inputTokens: 280,
      outputTokens: 27,
    });
  });

  it('reads the AI SDK v4 usage names', () => {
    const mapped = mapAttributes(
      { 'ai.operationId': 'ai.streamText.doStream', 'ai.model.id': 'claude-3-5-sonnet-latest', 'ai.model.provider': 'anthropic.messages', 'ai.usage.promptTokens': 30, 'ai.usage.completionTokens': 4 },
      {},
    );
    expect(mapped).toMatchObject({ spanClass: 'generation', provider: 'anthropic', inputTokens: 30, outputTokens: 4 });
  });
});
