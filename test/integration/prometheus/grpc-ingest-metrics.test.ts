import grpc from '@grpc/grpc-js';
import { ROOT_CONTEXT, SpanKind, trace } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-grpc';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { ProtobufLogsSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { InMemoryLogRecordExporter, LoggerProvider, SimpleLogRecordProcessor } from '@opentelemetry/sdk-logs';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOGS_EXPORT_PATH, TRACE_EXPORT_PATH, UNSUPPORTED_EXPORT_PATHS } from '../../../src/ingest/otlp/otlp-grpc-server.js';
import { otlpSchema } from '../../../src/ingest/otlp/otlp-schema.js';
import { parseExposition, sampleSum } from '../../helpers/prometheus-text.js';
import { startTestService, type TestService } from '../../helpers/service.js';
import { runGenAiSupportAgent } from '../../unit/ingest/fixtures/gen-ai-agent-run.js';
import { postOtlp, protobufBody } from '../ingest/otlp-client.js';

/**
 * OTLP/gRPC counts in the same Prometheus ingest counters as OTLP/HTTP: the same exports (a clean
 * run, a run with an invalid span, GenAI log events with a record outside any span, a bad key, an
 * unsupported signal) sent over each transport move every ingest counter by the same amounts.
 */
let svc: TestService;
let project: { id: string };

beforeAll(async () => {
  svc = await startTestService({}, undefined, { otlpGrpc: true });
  project = await svc.newProject('grpc metrics');
});
afterAll(async () => {
  await svc?.stop();
});

const COUNTERS: [family: string, labels: Record<string, string>, sample?: string][] = [
  ['lookout_ingest_requests_total', { code: 'ok' }],
  ['lookout_ingest_requests_total', { code: 'unauthorized' }],
  ['lookout_ingest_requests_total', { code: 'not_found' }],
  ['lookout_ingest_spans_accepted_total', {}],
  ['lookout_ingest_spans_duplicate_total', {}],
  ['lookout_ingest_spans_rejected_total', { reason: 'invalid' }],
  ['lookout_ingest_spans_rejected_total', { reason: 'trace_span_limit' }],
  ['lookout_ingest_log_records_accepted_total', {}],
  ['lookout_ingest_log_records_rejected_total', { reason: 'invalid' }],
  ['lookout_ingest_request_body_bytes', {}, 'lookout_ingest_request_body_bytes_count'],
  ['lookout_ingest_request_body_bytes', {}, 'lookout_ingest_request_body_bytes_sum'],
];

async function counters(): Promise<Record<string, number>> {
  const families = parseExposition((await svc.service.deps.metrics.exposition()).text);
  return Object.fromEntries(COUNTERS.map(([family, labels, sample]) => [`${sample ?? family}${JSON.stringify(labels)}`, sampleSum(families, family, labels, sample ?? family)]));
}

function delta(before: Record<string, number>, after: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.keys(after).map((k) => [k, after[k] - before[k]]));
}

/** What one transport sends: the export bodies, fresh ids each time. */
function exports() {
  const spanExporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ resource: resourceFromAttributes({ 'service.name': 'support-svc' }), spanProcessors: [new SimpleSpanProcessor(spanExporter)] });
  runGenAiSupportAgent(provider.getTracer('metrics'));
  const clean = spanExporter.getFinishedSpans();
  spanExporter.reset();
  runGenAiSupportAgent(provider.getTracer('metrics'));
  // The same run with one span's trace id cut short: rejected through partial_success, the others kept.
  const proto = otlpSchema().ExportTraceServiceRequest;
  const message = proto.decode(protobufBody(spanExporter.getFinishedSpans())) as unknown as { resourceSpans: { scopeSpans: { spans: { traceId: Uint8Array }[] }[] }[] };
  message.resourceSpans[0].scopeSpans[0].spans[0].traceId = new Uint8Array(3);
  const partial = proto.encode(message).finish();
  const spans = clean.length + spanExporter.getFinishedSpans().length;

  // A model call's GenAI events, and a record outside any span (rejected: no span context).
  const tracer = provider.getTracer('metrics-logs');
  const span = tracer.startSpan('chat gpt-4o-mini', { kind: SpanKind.CLIENT, attributes: { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'gpt-4o-mini' } });
  const logExporter = new InMemoryLogRecordExporter();
  const logger = new LoggerProvider({ processors: [new SimpleLogRecordProcessor({ exporter: logExporter })] }).getLogger('metrics-logs');
  logger.emit({ eventName: 'gen_ai.user.message', context: trace.setSpan(ROOT_CONTEXT, span), body: { content: 'Where is my parcel?' } });
  logger.emit({ eventName: 'gen_ai.choice', context: trace.setSpan(ROOT_CONTEXT, span), body: { index: 0, message: { content: 'On its way.' } } });
  logger.emit({ body: 'outside any span', context: ROOT_CONTEXT });
  span.end();
  const logs = ProtobufLogsSerializer.serializeRequest(logExporter.getFinishedLogRecords())!;
  return { clean, partial, logs, spans };
}

const passBytes = (b: Buffer) => b;
/** A grpc-js client sending raw bytes (what the exporter's own client does), for exact bodies. */
function rawCall(path: string, body: Uint8Array, key: string): Promise<grpc.ServiceError | null> {
  const Client = grpc.makeGenericClientConstructor(
    { Export: { path, requestStream: false, responseStream: false, requestSerialize: passBytes, requestDeserialize: passBytes, responseSerialize: passBytes, responseDeserialize: passBytes } },
    'OtlpService',
  );
  const client = new Client(svc.grpcAddress(), grpc.credentials.createInsecure()) as unknown as grpc.Client & {
    Export(body: Buffer, md: grpc.Metadata, cb: (error: grpc.ServiceError | null) => void): void;
  };
  const md = new grpc.Metadata();
  md.set('authorization', `Bearer ${key}`);
  md.set('x-lookout-project', project.id);
  return new Promise((resolve) => {
    client.Export(Buffer.from(body), md, (error) => {
      client.close();
      resolve(error);
    });
  });
}

/** The stock OpenTelemetry gRPC trace exporter. */
async function exportOverGrpc(spans: ReadableSpan[]): Promise<ExportResult> {
  const md = new grpc.Metadata();
  md.set('authorization', `Bearer ${svc.adminKey}`);
  md.set('x-lookout-project', project.id);
  const exporter = new OTLPTraceExporter({ url: `http://${svc.grpcAddress()}`, metadata: md, timeoutMillis: 30_000 });
  try {
    return await new Promise<ExportResult>((resolve) => exporter.export(spans, resolve));
  } finally {
    await exporter.shutdown();
  }
}

const BAD_KEY = 'lk_not_a_real_key_0123456789';

describe('Prometheus ingest counters over OTLP/gRPC', () => {
  it('move by what an export did, exactly as the same exports over OTLP/HTTP move them', async () => {
    const headers = { 'x-lookout-project': project.id };

    const http = exports();
    const beforeHttp = await counters();
    expect((await postOtlp(svc.url, svc.adminKey, protobufBody(http.clean), { headers })).status).toBe(200);
    expect((await postOtlp(svc.url, svc.adminKey, http.partial, { headers })).status).toBe(200);
    expect((await postOtlp(svc.url, svc.adminKey, http.logs, { headers, path: '/v1/logs' })).status).toBe(200);
    expect((await postOtlp(svc.url, BAD_KEY, protobufBody(http.clean), { headers })).status).toBe(401);
    expect((await postOtlp(svc.url, svc.adminKey, new Uint8Array(0), { headers, path: '/v1/metrics' })).status).toBe(404);
    const overHttp = delta(beforeHttp, await counters());

    const rpc = exports();
    const beforeGrpc = await counters();
    expect((await exportOverGrpc(rpc.clean)).code).toBe(ExportResultCode.SUCCESS);
    expect(await rawCall(TRACE_EXPORT_PATH, rpc.partial, svc.adminKey)).toBeNull();
    expect(await rawCall(LOGS_EXPORT_PATH, rpc.logs, svc.adminKey)).toBeNull();
    expect(grpc.status[(await rawCall(TRACE_EXPORT_PATH, protobufBody(rpc.clean), BAD_KEY))!.code]).toBe('UNAUTHENTICATED');
    expect(grpc.status[(await rawCall(UNSUPPORTED_EXPORT_PATHS.metrics, new Uint8Array(0), svc.adminKey))!.code]).toBe('UNIMPLEMENTED');
    const overGrpc = delta(beforeGrpc, await counters());

    // What happened, counted: two trace exports and one logs export answered, one refused for its
    // key, one for its signal; every span but the invalid one, both events but the stray record.
    const bodyBytes = (d: Record<string, number>) => d['lookout_ingest_request_body_bytes_sum{}'];
    const expected = {
      'lookout_ingest_requests_total{"code":"ok"}': 3,
      'lookout_ingest_requests_total{"code":"unauthorized"}': 1,
      'lookout_ingest_requests_total{"code":"not_found"}': 1,
      'lookout_ingest_spans_accepted_total{}': http.spans - 1,
      'lookout_ingest_spans_duplicate_total{}': 0,
      'lookout_ingest_spans_rejected_total{"reason":"invalid"}': 1,
      'lookout_ingest_spans_rejected_total{"reason":"trace_span_limit"}': 0,
      'lookout_ingest_log_records_accepted_total{}': 2,
      'lookout_ingest_log_records_rejected_total{"reason":"invalid"}': 1,
      'lookout_ingest_request_body_bytes_count{}': 3,
    };
    expect(overHttp).toEqual({ ...expected, 'lookout_ingest_request_body_bytes_sum{}': bodyBytes(overHttp) });
    expect(overGrpc).toEqual({ ...expected, 'lookout_ingest_request_body_bytes_sum{}': bodyBytes(overGrpc) });
    expect(bodyBytes(overHttp)).toBe(protobufBody(http.clean).length + http.partial.length + http.logs.length);
    // The exporter's message is the clean run's protobuf request, as the HTTP body was.
    expect(bodyBytes(overGrpc)).toBe(protobufBody(rpc.clean).length + rpc.partial.length + rpc.logs.length);
  });
});
