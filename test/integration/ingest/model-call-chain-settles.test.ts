import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { context, trace, type Attributes, type Context } from '@opentelemetry/api';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { lookoutTraceId } from '../../../src/spans/trace-id.js';
import { startTestService, type TestService } from '../../helpers/service.js';
import { postOtlp, protobufBody, waitFor } from './otlp-client.js';

/**
 * One model call seen by a framework span and the client span below it, the client span settled
 * before its framework span arrived (a batch split, a retried request): the trace keeps one
 * generation.completed row for the call once the framework span is settled too.
 */

const USAGE = { 'gen_ai.usage.input_tokens': 145, 'gen_ai.usage.output_tokens': 21 };

function chainRun(): { root: ReadableSpan; framework: ReadableSpan; client: ReadableSpan } {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ resource: resourceFromAttributes({ 'service.name': 'chain-app' }), spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const tracer = provider.getTracer('chain');
  const t0 = Date.now() - 10_000;
  const at = (name: string, attributes: Attributes, start: number, end: number, parent: Context, body?: (ctx: Context) => void) => {
    const span = tracer.startSpan(name, { attributes, startTime: t0 + start }, parent);
    body?.(trace.setSpan(parent, span));
    span.end(t0 + end);
  };
  at('invoke_agent chain-agent', { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'chain-agent' }, 0, 200, context.active(), (agent) =>
    at('chat gpt-4o-mini', { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'gpt-4o-mini', 'gen_ai.usage.cache_read.input_tokens': 64, ...USAGE }, 10, 70, agent, (framework) =>
      at('chat gpt-4o-mini', { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'gpt-4o-mini', 'gen_ai.response.model': 'gpt-4o-mini-2024-07-18', ...USAGE }, 15, 65, framework),
    ),
  );
  const [client, framework, root] = exporter.getFinishedSpans();
  return { root, framework, client };
}

describe('a model call whose client span settled before its framework span arrived', () => {
  let svc: TestService;
  let projectId: string;
  beforeAll(async () => {
    svc = await startTestService();
    projectId = (await svc.newProject('chain')).id;
  });
  afterAll(async () => {
    await svc?.stop();
  });

  const send = async (spans: ReadableSpan[]) => {
    const res = await postOtlp(svc.url, svc.adminKey, protobufBody(spans), { headers: { 'x-lookout-project': projectId } });
    expect(res.status).toBe(200);
  };
  const settledWith = (traceId: string, spans: number) =>
    waitFor(async () => {
      const res = await svc.call('GET', `/projects/${projectId}/traces?limit=10`);
      return res.body.traces?.some((t: { id: string; span_count: number }) => t.id === traceId && t.span_count === spans) ? true : undefined;
    }, 30_000, `trace settled with ${spans} spans`);

  it('keeps one generation row, at the framework span', async () => {
    const run = chainRun();
    const traceId = lookoutTraceId(projectId, run.root.spanContext().traceId);
    await send([run.root, run.client]);
    await settledWith(traceId, 2);
    await send([run.framework]);
    await settledWith(traceId, 3);
    const { ch } = svc.service.deps;
    const rows = async () =>
      (
        await ch.client.query({
          query: `SELECT lower(leftPad(hex(span_id), 16, '0')) AS span, cached_input_tokens AS cached FROM ${ch.table('event_generation_completed')} FINAL WHERE trace_id = {t:String} ORDER BY span`,
          query_params: { t: traceId },
          format: 'JSONEachRow',
        })
      ).json<{ span: string; cached: number }>();
    // The client span's row goes by a lightweight delete, which the engine may apply a moment after the settle.
    await expect.poll(rows, { timeout: 15_000, interval: 200 }).toEqual([{ span: run.framework.spanContext().spanId, cached: 64 }]);
  });
});
