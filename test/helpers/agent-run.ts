import { ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';

export interface AgentRun {
  root: ReadableSpan;
  children: ReadableSpan[];
  otelTraceId: string;
}

/**
 * One agent run made by the OpenTelemetry SDK: a root `invoke_agent <agent>` span and `children`
 * chat spans below it, each 10 input + 2 output tokens of gpt-4o-mini. Tests send the root and the
 * children in whatever requests and orders they exercise.
 */
export function agentRun(children: number, agent = 'test-agent'): AgentRun {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ resource: resourceFromAttributes({ 'service.name': agent }), spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const tracer = provider.getTracer(agent);
  const root = tracer.startSpan(`invoke_agent ${agent}`, { attributes: { 'gen_ai.agent.name': agent } });
  const ctx = trace.setSpan(ROOT_CONTEXT, root);
  for (let i = 0; i < children; i++) {
    tracer.startSpan(`chat ${i}`, { attributes: { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'gpt-4o-mini', 'gen_ai.usage.input_tokens': 10, 'gen_ai.usage.output_tokens': 2 } }, ctx).end();
  }
  root.end();
  const spans = exporter.getFinishedSpans();
  const rootSpan = spans.find((s) => s.name.startsWith('invoke_agent'))!;
  return { root: rootSpan, children: spans.filter((s) => s !== rootSpan), otelTraceId: root.spanContext().traceId };
}
