import http from 'node:http';
import grpc from '@grpc/grpc-js';
import { diag, DiagLogLevel, ROOT_CONTEXT, SpanKind, trace } from '@opentelemetry/api';
import { OTLPLogExporter } from '@opentelemetry/exporter-logs-otlp-grpc';
import { ProtobufLogsSerializer } from '@opentelemetry/otlp-transformer';
import { InMemoryLogRecordExporter, LoggerProvider, SimpleLogRecordProcessor, type ReadableLogRecord } from '@opentelemetry/sdk-logs';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { CompressionAlgorithm } from '@opentelemetry/otlp-exporter-base';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-grpc';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IngestService } from '../../../src/ingest/ingest-service.js';
import { LOGS_EXPORT_PATH, TRACE_EXPORT_PATH, UNSUPPORTED_EXPORT_PATHS } from '../../../src/ingest/otlp/otlp-grpc-server.js';
import { retryDelayMs, STATUS_DETAILS_KEY } from '../../../src/ingest/otlp/otlp-grpc-status.js';
import { decodeExportResponse, decodeLogsExportResponse } from '../../../src/ingest/otlp/otlp-response.js';
import { otlpSchema } from '../../../src/ingest/otlp/otlp-schema.js';
import { lookoutTraceId } from '../../../src/spans/trace-id.js';
import { startTestService, type TestService } from '../../helpers/service.js';
import { pauseNextFlush } from '../../helpers/writer-pause.js';
import { GEN_AI_RUN, runGenAiSupportAgent } from '../../unit/ingest/fixtures/gen-ai-agent-run.js';
import { postOtlp, protobufBody, waitFor } from './otlp-client.js';

/**
 * OTLP/gRPC through the OpenTelemetry JS gRPC exporter (and, where exact bytes or answers are
 * needed, a plain grpc-js client, the one the exporter is built on) against the running service:
 * the same spans, figures, refusals, budget and partial_success as OTLP/HTTP.
 */

const KiB = 1024;
let svc: TestService;
let project: { id: string; name: string };

beforeAll(async () => {
  // A small budget and body limit, so overload and the size bound can be reached with a few spans.
  svc = await startTestService({ OTLP_MAX_BYTES: String(256 * KiB), INGEST_MAX_INFLIGHT_BYTES: String(256 * KiB) }, undefined, { otlpGrpc: true });
  project = await svc.newProject('otlp grpc');
});
afterAll(async () => {
  await svc?.stop();
});

function agentRun(resource: Record<string, string> = {}): { spans: ReadableSpan[]; otelTraceId: string } {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'support-svc', 'service.version': '3.1.0', ...resource }),
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  const otelTraceId = runGenAiSupportAgent(provider.getTracer('grpc-test'));
  return { spans: exporter.getFinishedSpans(), otelTraceId };
}

/** A copy of `span` with other fields: the exporter serializes it like any finished span. */
function withFields(span: ReadableSpan, fields: Partial<Record<keyof ReadableSpan, unknown>>): ReadableSpan {
  return Object.assign(Object.create(Object.getPrototypeOf(span)), span, fields);
}

function metadata(key: string | null, projectId?: string): grpc.Metadata {
  const m = new grpc.Metadata();
  if (key) m.set('authorization', `Bearer ${key}`);
  if (projectId) m.set('x-lookout-project', projectId);
  return m;
}

/** Exports `spans` once through a fresh OTLPTraceExporter and shuts it down. */
async function exportSpans(spans: ReadableSpan[], key: string | null, options: { projectId?: string; gzip?: boolean } = {}): Promise<ExportResult> {
  const exporter = new OTLPTraceExporter({
    url: `http://${svc.grpcAddress()}`,
    metadata: metadata(key, options.projectId),
    compression: options.gzip ? CompressionAlgorithm.GZIP : CompressionAlgorithm.NONE,
    timeoutMillis: 30_000,
  });
  try {
    return await new Promise<ExportResult>((resolve) => exporter.export(spans, resolve));
  } finally {
    await exporter.shutdown();
  }
}

function grpcError(result: ExportResult): grpc.ServiceError {
  expect(result.code).toBe(ExportResultCode.FAILED);
  return result.error as grpc.ServiceError;
}

const passBytes = (b: Buffer) => b;
/** A grpc-js client that sends and returns raw bytes, as the exporter's own client does. */
function rawCall(path: string, body: Uint8Array, md: grpc.Metadata): Promise<{ error: grpc.ServiceError | null; response: Buffer | null }> {
  const Client = grpc.makeGenericClientConstructor(
    { Export: { path, requestStream: false, responseStream: false, requestSerialize: passBytes, requestDeserialize: passBytes, responseSerialize: passBytes, responseDeserialize: passBytes } },
    'OtlpService',
  );
  const client = new Client(svc.grpcAddress(), grpc.credentials.createInsecure()) as unknown as grpc.Client & {
    Export(body: Buffer, md: grpc.Metadata, cb: (error: grpc.ServiceError | null, response?: Buffer) => void): void;
  };
  return new Promise((resolve) => {
    client.Export(Buffer.from(body), md, (error, response) => {
      client.close();
      resolve({ error, response: response ?? null });
    });
  });
}

async function spanCount(traceId: string): Promise<number> {
  const { ch } = svc.service.deps;
  const res = await ch.client.query({
    query: `SELECT count() AS n FROM ${ch.table('spans')} WHERE trace_id = {t:String}`,
    query_params: { t: traceId },
    format: 'JSONEachRow',
  });
  return Number((await res.json<{ n: string }>())[0].n);
}

async function settledTrace(traceId: string) {
  await waitFor(async () => {
    const res = await svc.call('GET', `/projects/${project.id}/traces?limit=200`);
    return res.body.traces?.find((t: { id: string }) => t.id === traceId);
  }, 30_000, `trace ${traceId} settled`);
  const res = await svc.call('GET', `/traces/${traceId}`);
  expect(res.status).toBe(200);
  return res.body;
}

describe('OTLP/gRPC TraceService/Export', () => {
  it('stores what the gRPC exporter sends with the same trace, tokens and cost as the same run over HTTP', async () => {
    const overGrpc = agentRun();
    expect((await exportSpans(overGrpc.spans, svc.adminKey, { projectId: project.id })).code).toBe(ExportResultCode.SUCCESS);
    // Durable on OK, as on HTTP 200: the spans are readable at once.
    expect(await spanCount(lookoutTraceId(project.id, overGrpc.otelTraceId))).toBe(5);

    const overHttp = agentRun();
    expect((await postOtlp(svc.url, svc.adminKey, protobufBody(overHttp.spans), { headers: { 'x-lookout-project': project.id } })).status).toBe(200);

    const [g, h] = [await settledTrace(lookoutTraceId(project.id, overGrpc.otelTraceId)), await settledTrace(lookoutTraceId(project.id, overHttp.otelTraceId))];
    const gptCost = ((900 - 512) * 2.5 + 512 * 1.25 + 40 * 10) / 1e6;
    const haikuCost = (1100 * 0.8 + 60 * 4) / 1e6;
    for (const t of [g, h]) {
      expect(t).toMatchObject({
        project_id: project.id,
        service_name: 'support-svc',
        agent_name: GEN_AI_RUN.agentName,
        thread_id: GEN_AI_RUN.threadId,
        agent_input_display: GEN_AI_RUN.userRequest,
        has_error: true,
        stats: { span_count: 5, total_tokens: 2100, error_count: 1, models_used: ['claude-3-5-haiku-20241022', 'gpt-4o-2024-08-06'] },
      });
      expect(t.estimated_cost_usd).toBeCloseTo(gptCost + haikuCost, 10);
      expect(t.agent_output[0].parts[0].content).toBe(GEN_AI_RUN.reply);
    }
    // Everything but the ids, which differ between two runs.
    const shape = (t: any) => ({
      stats: { ...t.stats, tool_calls: t.stats.tool_calls.map((c: any) => [c.name, c.status]) },
      cost: t.estimated_cost_usd,
      input: t.agent_input,
      output: t.agent_output,
      tools: t.tool_calls.map((c: any) => [c.name, c.is_error, c.user_facing_message]),
      spans: t.spans.map((s: any) => [s.name, s.kind, s.span_class, s.input_tokens, s.output_tokens, s.model_name, s.status_code, s.attributes]),
    });
    expect(shape(g)).toEqual(shape(h));
  });

  it('takes the project from the key when the key is limited to one', async () => {
    const limited = await svc.newKey('ingest', { projectId: project.id });
    const run = agentRun();
    expect((await exportSpans(run.spans, limited)).code).toBe(ExportResultCode.SUCCESS);
    expect(await spanCount(lookoutTraceId(project.id, run.otelTraceId))).toBe(5);
  });

  it('refuses with the OTLP status codes: UNAUTHENTICATED, PERMISSION_DENIED, NOT_FOUND, INVALID_ARGUMENT; none retryable', async () => {
    const run = agentRun();
    const refusals: [string | null, string | undefined, grpc.status, RegExp][] = [
      [null, project.id, grpc.status.UNAUTHENTICATED, /Missing bearer API key/],
      ['lk_not_a_real_key_0123456789', project.id, grpc.status.UNAUTHENTICATED, /Unknown or revoked API key/],
      [await svc.newKey('read'), project.id, grpc.status.PERMISSION_DENIED, /ingest or admin scope/],
      [(await svc.newTenant('grpc other')).adminKey, project.id, grpc.status.NOT_FOUND, /Project not found/],
      [svc.adminKey, undefined, grpc.status.INVALID_ARGUMENT, /No project for the spans: send the x-lookout-project header/],
    ];
    for (const [key, projectId, code, message] of refusals) {
      const error = grpcError(await exportSpans(run.spans, key, { projectId }));
      expect([grpc.status[error.code], error.details]).toEqual([grpc.status[code], expect.stringMatching(message)]);
      expect(error.metadata.get(STATUS_DETAILS_KEY)).toEqual([]);
    }
    expect(await spanCount(lookoutTraceId(project.id, run.otelTraceId))).toBe(0);

    // An undecodable message is INVALID_ARGUMENT too.
    const garbage = await rawCall(TRACE_EXPORT_PATH, Buffer.from([0x0a, 0xff, 0xff, 0xff, 0x0f]), metadata(svc.adminKey, project.id));
    expect(grpc.status[garbage.error!.code]).toBe('INVALID_ARGUMENT');
  });

  it('takes grpc-encoding gzip, and bounds the message by OTLP_MAX_BYTES before and after inflation (RESOURCE_EXHAUSTED, not retryable)', async () => {
    const run = agentRun();
    expect((await exportSpans(run.spans, svc.adminKey, { projectId: project.id, gzip: true })).code).toBe(ExportResultCode.SUCCESS);
    expect(await spanCount(lookoutTraceId(project.id, run.otelTraceId))).toBe(5);

    // 300 KiB of one letter: a few hundred bytes gzipped, past the 256 KiB limit either way.
    const big = agentRun();
    const spans = big.spans.map((s, i) => (i === 0 ? withFields(s, { attributes: { ...s.attributes, padding: 'a'.repeat(300 * KiB) } }) : s));
    for (const gzip of [true, false]) {
      const error = grpcError(await exportSpans(spans, svc.adminKey, { projectId: project.id, gzip }));
      expect(grpc.status[error.code]).toBe('RESOURCE_EXHAUSTED');
      expect(error.details).toMatch(gzip ? /decompresses to a size larger than 262144/ : /larger than max \(\d+ vs 262144\)/);
      expect(error.metadata.get(STATUS_DETAILS_KEY)).toEqual([]);
    }
    expect(await spanCount(lookoutTraceId(project.id, big.otelTraceId))).toBe(0);
  });

  it('answers partial_success for rejected spans, as HTTP does, and the exporter reports it', async () => {
    const run = agentRun();
    const warnings: string[] = [];
    const log = (...args: unknown[]) => warnings.push(args.map(String).join(' '));
    diag.setLogger({ error: log, warn: log, info: () => {}, debug: () => {}, verbose: () => {} }, DiagLogLevel.WARN);
    try {
      // A span that ends before it starts is rejected; the other four are kept.
      const spans = run.spans.map((s, i) => (i === 1 ? withFields(s, { endTime: [s.startTime[0] - 1, 0] }) : s));
      expect((await exportSpans(spans, svc.adminKey, { projectId: project.id })).code).toBe(ExportResultCode.SUCCESS);
    } finally {
      diag.disable();
    }
    const partial = warnings.find((w) => w.includes('Partial Success'));
    expect(partial).toBeDefined();
    expect(JSON.parse(partial!.slice(partial!.indexOf('{')))).toMatchObject({ rejectedSpans: 1, errorMessage: expect.stringContaining('end_time_unix_nano is before start_time_unix_nano') });
    expect(await spanCount(lookoutTraceId(project.id, run.otelTraceId))).toBe(4);

    // The exact answer, read by a plain client: ExportTraceServiceResponse with partial_success.
    const bad = agentRun();
    const proto = otlpSchema().ExportTraceServiceRequest;
    const message = proto.decode(protobufBody(bad.spans)) as unknown as { resourceSpans: { scopeSpans: { spans: { traceId: Uint8Array }[] }[] }[] };
    message.resourceSpans[0].scopeSpans[0].spans[0].traceId = new Uint8Array(3);
    const answer = await rawCall(TRACE_EXPORT_PATH, proto.encode(message).finish(), metadata(svc.adminKey, project.id));
    expect(answer.error).toBeNull();
    expect(decodeExportResponse(answer.response!)).toEqual({ rejectedSpans: 1, errorMessage: expect.stringContaining('rejected 1 of 5 spans') });
    // A full success leaves partial_success unset: an empty message.
    const clean = await rawCall(TRACE_EXPORT_PATH, protobufBody(agentRun().spans), metadata(svc.adminKey, project.id));
    expect([clean.error, clean.response!.length]).toEqual([null, 0]);
  });

  it('refuses over the memory budget with UNAVAILABLE and a RetryInfo, and takes the same export once the budget frees', async () => {
    const budget = (svc.service.deps.services.ingest as IngestService).writer.budget;
    // A request holding part of the budget: an HTTP export whose body has not been sent in full.
    const held = http.request(new URL('/v1/traces', svc.url), {
      method: 'POST',
      headers: { authorization: `Bearer ${svc.adminKey}`, 'content-type': 'application/json', 'content-length': '1024', 'x-lookout-project': project.id },
    });
    const heldAnswer = new Promise<number | undefined>((resolve, reject) => {
      held.on('response', (r) => (r.resume(), resolve(r.statusCode)));
      held.on('error', reject);
    });
    held.write('{"resourceSpans":[');
    await waitFor(async () => (budget.inflightBytes > 0 ? true : undefined), 20_000, 'the held request to be charged');

    // ~40 KiB of spans, charged with what they decode into: more than the budget has left.
    const run = agentRun();
    const spans = run.spans.map((s, i) => (i === 0 ? withFields(s, { attributes: { ...s.attributes, note: 'lorem ipsum '.repeat(3500) } }) : s));
    const error = grpcError(await exportSpans(spans, svc.adminKey, { projectId: project.id }));
    expect(grpc.status[error.code]).toBe('UNAVAILABLE');
    expect(error.details).toMatch(/Ingest memory budget full \(INGEST_MAX_INFLIGHT_BYTES=262144\)/);
    const details = error.metadata.get(STATUS_DETAILS_KEY);
    expect(details).toHaveLength(1);
    expect(retryDelayMs(details[0] as Buffer)).toBe(1000);
    expect(await spanCount(lookoutTraceId(project.id, run.otelTraceId))).toBe(0);

    held.end(`${' '.repeat(1024 - '{"resourceSpans":['.length - 2)}]}`);
    expect(await heldAnswer).toBe(200);
    expect(budget.inflightBytes).toBe(0);
    // Alone in flight it is served (as on HTTP), and the budget returns to zero.
    expect((await exportSpans(spans, svc.adminKey, { projectId: project.id })).code).toBe(ExportResultCode.SUCCESS);
    expect(await spanCount(lookoutTraceId(project.id, run.otelTraceId))).toBe(5);
    expect(budget.inflightBytes).toBe(0);
  });

  it('says plainly that metrics are not accepted (UNIMPLEMENTED)', async () => {
    const answer = await rawCall(UNSUPPORTED_EXPORT_PATHS.metrics, Buffer.alloc(0), metadata(svc.adminKey, project.id));
    expect(grpc.status[answer.error!.code]).toBe('UNIMPLEMENTED');
    expect(answer.error!.details).toMatch(/metrics are not supported/);
  });
});

describe('OTLP/gRPC LogsService/Export', () => {
  const QUESTION = 'What is the weather in Paris?';
  const ANSWER = 'It is 18°C and sunny in Paris.';

  /** A model call without content on its span, its content as the GenAI log events, and one record outside any span. */
  function callWithEvents() {
    const spanExporter = new InMemorySpanExporter();
    const tracer = new BasicTracerProvider({ resource: resourceFromAttributes({ 'service.name': 'weather' }), spanProcessors: [new SimpleSpanProcessor(spanExporter)] }).getTracer('grpc-logs');
    const start = Date.now() - 3000;
    const span = tracer.startSpan('chat gpt-4o-mini', {
      kind: SpanKind.CLIENT,
      startTime: start,
      attributes: { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'gpt-4o-mini', 'gen_ai.usage.input_tokens': 20, 'gen_ai.usage.output_tokens': 9 },
    });
    const inSpan = trace.setSpan(ROOT_CONTEXT, span);
    const logExporter = new InMemoryLogRecordExporter();
    const logger = new LoggerProvider({ resource: resourceFromAttributes({ 'service.name': 'weather' }), processors: [new SimpleLogRecordProcessor({ exporter: logExporter })] }).getLogger('grpc-logs');
    logger.emit({ eventName: 'gen_ai.user.message', context: inSpan, body: { content: QUESTION }, attributes: { 'gen_ai.system': 'openai' } });
    logger.emit({ eventName: 'gen_ai.choice', context: inSpan, body: { index: 0, finish_reason: 'stop', message: { role: 'assistant', content: ANSWER } }, attributes: { 'gen_ai.system': 'openai' } });
    logger.emit({ body: 'a log line outside any span', context: ROOT_CONTEXT });
    span.end(start + 800);
    return { spans: spanExporter.getFinishedSpans(), records: logExporter.getFinishedLogRecords(), otelTraceId: span.spanContext().traceId };
  }

  async function exportRecords(records: ReadableLogRecord[], key: string | null, gzip = false): Promise<ExportResult> {
    const exporter = new OTLPLogExporter({
      url: `http://${svc.grpcAddress()}`,
      metadata: metadata(key, project.id),
      compression: gzip ? CompressionAlgorithm.GZIP : CompressionAlgorithm.NONE,
      timeoutMillis: 30_000,
    });
    try {
      return await new Promise<ExportResult>((resolve) => exporter.export(records, resolve));
    } finally {
      await exporter.shutdown();
    }
  }

  it('joins GenAI events sent by the gRPC logs exporter to their span, as the same records over HTTP, and rejects records without a span context', async () => {
    const overGrpc = callWithEvents();
    expect(overGrpc.records).toHaveLength(3);
    // The exact answer first, from a plain client: one record refused, the two events kept.
    const answer = await rawCall(LOGS_EXPORT_PATH, ProtobufLogsSerializer.serializeRequest(overGrpc.records)!, metadata(svc.adminKey, project.id));
    expect(answer.error).toBeNull();
    expect(decodeLogsExportResponse(answer.response!)).toEqual({ rejectedLogRecords: 1, errorMessage: expect.stringContaining('no span context') });
    // The stock exporter (gzip) with the same records: a retried export, stored once.
    expect((await exportRecords(overGrpc.records, svc.adminKey, true)).code).toBe(ExportResultCode.SUCCESS);
    expect((await exportSpans(overGrpc.spans, svc.adminKey, { projectId: project.id })).code).toBe(ExportResultCode.SUCCESS);

    const overHttp = callWithEvents();
    expect((await postOtlp(svc.url, svc.adminKey, ProtobufLogsSerializer.serializeRequest(overHttp.records)!, { path: '/v1/logs', headers: { 'x-lookout-project': project.id } })).status).toBe(200);
    expect((await postOtlp(svc.url, svc.adminKey, protobufBody(overHttp.spans), { headers: { 'x-lookout-project': project.id } })).status).toBe(200);

    const g = await settledTrace(lookoutTraceId(project.id, overGrpc.otelTraceId));
    const h = await settledTrace(lookoutTraceId(project.id, overHttp.otelTraceId));
    expect(g.agent_input_display).toBe(QUESTION);
    expect(JSON.stringify(g.agent_output)).toContain(ANSWER);
    for (const field of ['agent_input', 'agent_output', 'agent_input_display', 'interaction', 'stats'] as const) {
      expect([field, g[field]]).toEqual([field, h[field]]);
    }
  });

  it('refuses a bad key with UNAUTHENTICATED, as traces', async () => {
    const error = grpcError(await exportRecords(callWithEvents().records, 'lk_not_a_real_key_0123456789'));
    expect([grpc.status[error.code], error.details]).toEqual(['UNAUTHENTICATED', 'Unknown or revoked API key']);
  });
});

describe('OTLP/gRPC shutdown', () => {
  // Last: it stops the service.
  it('closes with the service: a call in flight is answered once durable, new calls are refused', async () => {
    const { writer } = svc.service.deps.services.ingest as IngestService;
    const run = agentRun();
    const address = svc.grpcAddress();
    const hold = pauseNextFlush(writer);
    const inFlight = exportSpans(run.spans, svc.adminKey, { projectId: project.id });
    await hold.paused;
    const stopped = svc.stop();
    // The listener stopped taking calls at once; the one in flight is still waiting for its write.
    const refused = new OTLPTraceExporter({ url: `http://${address}`, metadata: metadata(svc.adminKey, project.id), timeoutMillis: 30_000 });
    const late = await new Promise<ExportResult>((resolve) => refused.export(agentRun().spans, resolve));
    await refused.shutdown();
    expect(grpc.status[grpcError(late).code]).toBe('UNAVAILABLE');
    hold.resume();
    expect((await inFlight).code).toBe(ExportResultCode.SUCCESS);
    await stopped;
  });
});
