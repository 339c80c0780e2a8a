import { isDeepStrictEqual } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { context, trace, type Span, type Tracer } from '@opentelemetry/api';
import { SeverityNumber, type Logger } from '@opentelemetry/api-logs';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import type { ExportResult } from '@opentelemetry/core';
import { OTLPLogExporter as OTLPJsonLogExporter } from '@opentelemetry/exporter-logs-otlp-http';
import { OTLPLogExporter as OTLPProtoLogExporter } from '@opentelemetry/exporter-logs-otlp-proto';
import { OTLPTraceExporter as OTLPProtoTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { JsonLogsSerializer, ProtobufLogsSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchLogRecordProcessor, InMemoryLogRecordExporter, LoggerProvider, SimpleLogRecordProcessor, type LogRecordExporter, type ReadableLogRecord } from '@opentelemetry/sdk-logs';
import { BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { decodeLogsExportResponse } from '../../../src/ingest/otlp/otlp-response.js';
import { lookoutTraceId } from '../../../src/spans/trace-id.js';
import { startTestService, type TestService } from '../../helpers/service.js';
import { postOtlp, waitFor } from './otlp-client.js';

/**
 * POST /v1/logs with the real OpenTelemetry JS logs SDK and its stock exporters (protobuf with gzip,
 * and JSON), beside spans from the real trace SDK: GenAI content sent as log events — before the
 * span, after the span was settled, in other requests — gives the trace exactly what the same
 * content on the span gives (agent input and output, the conversation, tool-call messages, the
 * context bundle), at read time and once settled again; other records show as span events; records
 * without a span context are rejected through partial_success; tenants stay apart; bad bodies 400.
 */

let svc: TestService;
let project: { id: string };
let ingestKey: string;
const manager = new AsyncLocalStorageContextManager();

beforeAll(async () => {
  // A trace re-opened by a record (no root in that write) settles after TRACE_MAX_WAIT_MS, as after a late span.
  // TRACE_MAX_SPANS also bounds the log records of a trace; the runs here carry at most 8.
  svc = await startTestService({ TRACE_MAX_WAIT_MS: '1500', TRACE_MAX_SPANS: '10' });
  project = await svc.newProject('logs');
  ingestKey = await svc.newKey('ingest', { projectId: project.id });
  context.setGlobalContextManager(manager.enable());
});
afterAll(async () => {
  context.disable();
  await svc?.stop();
});

const SYSTEM = 'You are a weather assistant.';
const QUESTION = 'What is the weather in Paris?';
const ANSWER = 'It is 18°C and sunny in Paris.';
const TOOL_RESULT = '{"temperature_c": 18, "conditions": "sunny"}';
const CALL = { id: 'call_weather_1', name: 'get_weather', arguments: '{"city": "Paris"}' };

/** The content as the official OpenAI instrumentation writes it on the span in its newest mode (parts form, JSON text). */
const SPAN_CONTENT = {
  chat1: {
    'gen_ai.input.messages': JSON.stringify([
      { role: 'system', parts: [{ type: 'text', content: SYSTEM }] },
      { role: 'user', parts: [{ type: 'text', content: QUESTION }] },
    ]),
    'gen_ai.output.messages': JSON.stringify([
      { role: 'assistant', parts: [{ type: 'tool_call', id: CALL.id, name: CALL.name, arguments: { city: 'Paris' } }], finish_reason: 'tool_calls' },
    ]),
  },
  chat2: {
    'gen_ai.input.messages': JSON.stringify([
      { role: 'system', parts: [{ type: 'text', content: SYSTEM }] },
      { role: 'user', parts: [{ type: 'text', content: QUESTION }] },
      { role: 'assistant', parts: [{ type: 'tool_call', id: CALL.id, name: CALL.name, arguments: { city: 'Paris' } }] },
      { role: 'tool', parts: [{ type: 'tool_call_response', id: CALL.id, response: TOOL_RESULT }] },
    ]),
    'gen_ai.output.messages': JSON.stringify([{ role: 'assistant', parts: [{ type: 'text', content: ANSWER }], finish_reason: 'stop' }]),
  },
};

/** The per-message events the official OpenAI instrumentation emits by default (event name, body), one list per model call. */
const MESSAGE_EVENTS = {
  chat1: [
    ['gen_ai.system.message', { content: SYSTEM }],
    ['gen_ai.user.message', { content: QUESTION }],
    ['gen_ai.choice', { index: 0, finish_reason: 'tool_calls', message: { role: 'assistant', tool_calls: [{ id: CALL.id, type: 'function', function: { name: CALL.name, arguments: CALL.arguments } }] } }],
  ],
  chat2: [
    ['gen_ai.system.message', { content: SYSTEM }],
    ['gen_ai.user.message', { content: QUESTION }],
    ['gen_ai.assistant.message', { tool_calls: [{ id: CALL.id, type: 'function', function: { name: CALL.name, arguments: CALL.arguments } }] }],
    ['gen_ai.tool.message', { content: TOOL_RESULT, id: CALL.id }],
    ['gen_ai.choice', { index: 0, finish_reason: 'stop', message: { role: 'assistant', content: ANSWER } }],
  ],
} as const;

interface Exporters {
  tracer: Tracer;
  logger: Logger;
  flushSpans: () => Promise<void>;
  flushLogs: () => Promise<void>;
  logResults: number[];
  shutdown: () => Promise<void>;
}

function recording(inner: LogRecordExporter, results: number[]): LogRecordExporter {
  return {
    export: (records, done) =>
      inner.export(records, (result: ExportResult) => {
        results.push(result.code);
        done(result);
      }),
    shutdown: () => inner.shutdown(),
    forceFlush: () => inner.forceFlush?.() ?? Promise.resolve(),
  };
}

/** The real SDKs with exporters that send only when flushed, so a test decides what reaches Lookout first. */
function exporters(logEncoding: 'protobuf' | 'json', key = ingestKey): Exporters {
  const headers = { authorization: `Bearer ${key}` };
  const resource = resourceFromAttributes({ 'service.name': 'weather-service' });
  const tracerProvider = new NodeTracerProvider({
    resource,
    spanProcessors: [new BatchSpanProcessor(new OTLPProtoTraceExporter({ url: `${svc.url}/v1/traces`, headers }), { scheduledDelayMillis: 600_000 })],
  });
  const logResults: number[] = [];
  const logExporter =
    logEncoding === 'protobuf'
      ? new OTLPProtoLogExporter({ url: `${svc.url}/v1/logs`, headers, compression: 'gzip' as never })
      : new OTLPJsonLogExporter({ url: `${svc.url}/v1/logs`, headers });
  const loggerProvider = new LoggerProvider({
    resource,
    processors: [new BatchLogRecordProcessor({ exporter: recording(logExporter, logResults), scheduledDelayMillis: 600_000 })],
  });
  return {
    tracer: tracerProvider.getTracer('weather-agent'),
    logger: loggerProvider.getLogger('opentelemetry.instrumentation.openai_v2'),
    flushSpans: () => tracerProvider.forceFlush(),
    flushLogs: () => loggerProvider.forceFlush(),
    logResults,
    shutdown: async () => {
      await tracerProvider.shutdown();
      await loggerProvider.shutdown();
    },
  };
}

type ContentMode = 'span' | 'none';

interface Run {
  otelTraceId: string;
  chat1: Span;
  chat2: Span;
  tool: Span;
}

/**
 * One agent run: invoke_agent → chat (asks for a tool) → execute_tool → chat (answers), a few
 * milliseconds apart as a real run is (the trace's input is the first call's, its output the last
 * call's). `during` runs inside each span.
 */
function agentRun(tracer: Tracer, mode: ContentMode, during: { chat1?: () => void; tool?: () => void; chat2?: () => void } = {}): Run {
  const chatAttributes = (usage: [number, number]) => ({
    'gen_ai.operation.name': 'chat',
    'gen_ai.system': 'openai',
    'gen_ai.request.model': 'gpt-4o-mini',
    'gen_ai.response.model': 'gpt-4o-mini-2024-07-18',
    'gen_ai.usage.input_tokens': usage[0],
    'gen_ai.usage.output_tokens': usage[1],
  });
  const t0 = Date.now() - 1000;
  const at = (ms: number) => new Date(t0 + ms);
  return tracer.startActiveSpan('invoke_agent weather-agent', { startTime: at(0), attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'weather-agent' } }, (root) => {
    const inSpan = (name: string, [start, end]: [number, number], attributes: Record<string, string | number>, fn?: () => void): Span =>
      tracer.startActiveSpan(name, { startTime: at(start), attributes }, (span) => {
        fn?.();
        span.end(at(end));
        return span;
      });
    const chat1 = inSpan('chat gpt-4o-mini', [10, 200], { ...chatAttributes([120, 14]), ...(mode === 'span' ? SPAN_CONTENT.chat1 : {}) }, during.chat1);
    const tool = inSpan(
      'execute_tool get_weather',
      [210, 260],
      { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': CALL.name, 'gen_ai.tool.call.arguments': CALL.arguments, 'gen_ai.tool.call.result': TOOL_RESULT },
      during.tool,
    );
    const chat2 = inSpan('chat gpt-4o-mini', [270, 480], { ...chatAttributes([170, 12]), ...(mode === 'span' ? SPAN_CONTENT.chat2 : {}) }, during.chat2);
    root.end(at(500));
    return { otelTraceId: root.spanContext().traceId, chat1, chat2, tool };
  });
}

function emitMessageEvents(logger: Logger, events: readonly (readonly [string, unknown])[]) {
  for (const [eventName, body] of events) {
    logger.emit({ eventName, body: body as never, attributes: { 'gen_ai.system': 'openai' } });
  }
}

/** The newest conventions: one record per call, its content as structured attributes. */
function emitOperationDetails(logger: Logger, which: 'chat1' | 'chat2', spanOf: Span) {
  const content = SPAN_CONTENT[which];
  logger.emit({
    eventName: 'gen_ai.client.inference.operation.details',
    context: trace.setSpan(context.active(), spanOf),
    attributes: {
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.model': 'gpt-4o-mini',
      'gen_ai.input.messages': JSON.parse(content['gen_ai.input.messages']),
      'gen_ai.output.messages': JSON.parse(content['gen_ai.output.messages']),
    },
  });
}

async function settledRow(traceId: string, processedAfter = '') {
  const { ch } = svc.service.deps;
  return waitFor(
    async () => {
      const res = await ch.client.query({
        query: `SELECT agent_input, agent_output, agent_input_display, interaction, span_count, total_tokens, toString(processed_at) AS processed FROM ${ch.table('traces')} FINAL WHERE trace_id = {t:String} AND preview = 0`,
        query_params: { t: traceId },
        format: 'JSONEachRow',
      });
      const [row] = await res.json<Record<string, string | number | null>>();
      return row && String(row.processed) > processedAfter ? row : undefined;
    },
    20_000,
    `trace ${traceId} settled`,
  );
}

async function detail(traceId: string, key?: string) {
  const res = await svc.call('GET', `/traces/${traceId}`, key ? { key } : {});
  return res;
}

async function contextSpans(traceId: string) {
  const res = await svc.call('GET', `/traces/${traceId}?expand=context&project_id=${project.id}`);
  expect(res.status).toBe(200);
  return res.body.spans as { name: string; attributes: Record<string, unknown>; events: { name: string; attributes: Record<string, unknown> }[] }[];
}

async function storedLogRows(): Promise<number> {
  const { ch } = svc.service.deps;
  const res = await ch.client.query({ query: `SELECT count() AS n FROM ${ch.table('span_logs')} FINAL`, format: 'JSONEachRow' });
  const [row] = await res.json<{ n: string }>();
  return Number(row.n);
}

const chatContent = (spans: Awaited<ReturnType<typeof contextSpans>>) =>
  spans.filter((s) => s.name === 'chat gpt-4o-mini').map((s) => ({ input: JSON.parse(String(s.attributes['gen_ai.input.messages'])), output: JSON.parse(String(s.attributes['gen_ai.output.messages'])) }));

describe('OTLP logs: GenAI content sent as log events', () => {
  let baseline: { detail: any; settled: Record<string, unknown>; chats: ReturnType<typeof chatContent> };

  beforeAll(async () => {
    // The reference: the same run with its content on the spans.
    const sdk = exporters('protobuf');
    const run = agentRun(sdk.tracer, 'span');
    await sdk.flushSpans();
    await sdk.shutdown();
    const id = lookoutTraceId(project.id, run.otelTraceId);
    const settled = await settledRow(id);
    const res = await detail(id);
    expect(res.status).toBe(200);
    baseline = { detail: res.body, settled, chats: chatContent(await contextSpans(id)) };
    expect(baseline.detail.agent_input_display).toBe(QUESTION);
    expect(baseline.detail.agent_output).toEqual(JSON.parse(SPAN_CONTENT.chat2['gen_ai.output.messages']));
    expect(baseline.detail.interaction).toMatchObject({ has_input: true, has_output: true, input_kind: 'messages' });
  });

  function expectSameAsBaseline(got: any, settled: Record<string, unknown>) {
    for (const field of ['agent_input', 'agent_output', 'agent_input_display', 'interaction', 'agent_name', 'total_duration_ms'] as const) {
      expect([field, got[field]]).toEqual([field, baseline.detail[field]]);
    }
    const stats = (t: any) => ({ ...t.stats, tool_calls: t.stats.tool_calls.map((c: { name: string; status: string }) => [c.name, c.status]) });
    expect(stats(got)).toEqual(stats(baseline.detail));
    expect(JSON.parse(String(settled.agent_input))).toEqual(JSON.parse(String(baseline.settled.agent_input)));
    expect(JSON.parse(String(settled.agent_output))).toEqual(JSON.parse(String(baseline.settled.agent_output)));
    expect(settled.agent_input_display).toBe(baseline.settled.agent_input_display);
    expect(JSON.parse(String(settled.interaction))).toEqual(JSON.parse(String(baseline.settled.interaction)));
    expect(Number(settled.total_tokens)).toBe(316);
  }

  it('per-message events, some sent before the spans and some after, in other requests, count as the same content on the span', async () => {
    const sdk = exporters('protobuf');
    const run = agentRun(sdk.tracer, 'none', {
      chat1: () => emitMessageEvents(sdk.logger, MESSAGE_EVENTS.chat1),
      chat2: () => emitMessageEvents(sdk.logger, MESSAGE_EVENTS.chat2.slice(0, 2)),
    });
    // First request: chat 1's records and chat 2's first two, before any span is stored.
    await sdk.flushLogs();
    await sdk.flushSpans();
    // Second request, after the spans: chat 2's remaining records (emitted in chat 2's span context).
    await context.with(trace.setSpan(context.active(), run.chat2), async () => emitMessageEvents(sdk.logger, MESSAGE_EVENTS.chat2.slice(2)));
    await sdk.flushLogs();
    await sdk.shutdown();
    expect(sdk.logResults).toEqual([0, 0]);
    const id = lookoutTraceId(project.id, run.otelTraceId);
    // Read time: the detail joins every record now, settled or not.
    const now = await detail(id);
    expect(now.status).toBe(200);
    expect(now.body.agent_output).toEqual(baseline.detail.agent_output);
    // Settle time: the records came in two requests around the spans; a summary settled after the
    // second has them all (one settled in between has only the first request's).
    const settled = await waitFor(async () => {
      const row = await settledRow(id);
      return row.agent_output !== null && isDeepStrictEqual(JSON.parse(String(row.agent_output)), baseline.detail.agent_output) ? row : undefined;
    }, 20_000, 'settled with its records');
    const read = await detail(id);
    expectSameAsBaseline(read.body, settled);
    expect(chatContent(await contextSpans(id))).toEqual(baseline.chats);
    // The tool-call messages: the assistant's call and the tool's answer in the second call's input.
    const input = read.body.agent_input as { role: string; parts: Record<string, unknown>[] }[];
    expect(input.map((m) => m.role)).toEqual(['system', 'user']);
    const chat2Input = chatContent(await contextSpans(id))[1].input as { role: string; parts: Record<string, unknown>[] }[];
    expect(chat2Input[2].parts).toEqual([{ type: 'tool_call', id: CALL.id, name: CALL.name, arguments: { city: 'Paris' } }]);
    expect(chat2Input[3].parts).toEqual([{ type: 'tool_call_response', id: CALL.id, response: TOOL_RESULT }]);
  });

  it('operation-details records sent after the trace was settled re-open it: read at once, settled again with the same content', async () => {
    const sdk = exporters('json');
    const run = agentRun(sdk.tracer, 'none');
    await sdk.flushSpans();
    const id = lookoutTraceId(project.id, run.otelTraceId);
    const first = await settledRow(id);
    expect(first.agent_input).toBeNull();
    expect(first.agent_output).toBeNull();
    const before = await storedLogRows();
    emitOperationDetails(sdk.logger, 'chat1', run.chat1);
    emitOperationDetails(sdk.logger, 'chat2', run.chat2);
    await sdk.flushLogs();
    await sdk.shutdown();
    expect(sdk.logResults).toEqual([0]);
    expect(await storedLogRows()).toBe(before + 2);
    // Read time, before the trace settles again.
    const now = await detail(id);
    expect(now.body.agent_input).toEqual(baseline.detail.agent_input);
    expect(now.body.agent_output).toEqual(baseline.detail.agent_output);
    // Settled again (a newer summary) with the records joined.
    const again = await settledRow(id, String(first.processed));
    expectSameAsBaseline((await detail(id)).body, again);
    expect(chatContent(await contextSpans(id))).toEqual(baseline.chats);
  });

  it('records that came long before their spans (their queue entry settled with no span yet) still join when the spans settle', async () => {
    const sdk = exporters('protobuf');
    // The spans are made (ids known) but held back; only the records are sent.
    const run: Run = agentRun(sdk.tracer, 'none', {
      chat1: () => emitMessageEvents(sdk.logger, MESSAGE_EVENTS.chat1),
      chat2: () => emitMessageEvents(sdk.logger, MESSAGE_EVENTS.chat2),
    });
    await sdk.flushLogs();
    const id = lookoutTraceId(project.id, run.otelTraceId);
    const { sql } = svc.service.deps;
    const queued = async () => (await sql`select count(*)::int as n from settle_queue where trace_id = ${id}::uuid`)[0].n as number;
    expect(await queued()).toBe(1);
    // The records' queue entry comes due (TRACE_MAX_WAIT_MS) and is settled: nothing to summarize yet, so no trace.
    await waitFor(async () => ((await queued()) === 0 ? true : undefined), 20_000, 'the records-only queue entry settled');
    expect((await detail(id)).status).toBe(404);
    // Now the spans, in a new queue entry this process holds whole: settled from memory, the records read from the store.
    await sdk.flushSpans();
    await sdk.shutdown();
    const settled = await settledRow(id);
    expectSameAsBaseline((await detail(id)).body, settled);
  });

  it('keeps other records with a span context as events of their span', async () => {
    const sdk = exporters('protobuf');
    const run = agentRun(sdk.tracer, 'span', {
      tool: () =>
        sdk.logger.emit({ severityNumber: SeverityNumber.WARN, severityText: 'WARN', body: 'weather cache miss for Paris', attributes: { 'cache.key': 'paris' } }),
    });
    await sdk.flushLogs();
    await sdk.flushSpans();
    await sdk.shutdown();
    const id = lookoutTraceId(project.id, run.otelTraceId);
    const spans = await contextSpans(id);
    const tool = spans.find((s) => s.name === 'execute_tool get_weather')!;
    expect(tool.events.map((e) => [e.name, e.attributes])).toEqual([
      ['log', { 'cache.key': 'paris', 'log.body': 'weather cache miss for Paris', 'log.severity_text': 'WARN', 'log.severity_number': SeverityNumber.WARN }],
    ]);
    // Not GenAI content: the trace's input and output are the span's own.
    const res = await detail(id);
    expect(res.body.agent_output).toEqual(baseline.detail.agent_output);
    expect(spans.filter((s) => s.name !== 'execute_tool get_weather').every((s) => s.events.length === 0)).toBe(true);
  });
});

/** Records the SDK produced, to post by hand with the SDK's own serializers and read the answer. */
function recordsOf(emit: (logger: Logger, tracer: Tracer) => void): ReadableLogRecord[] {
  const memory = new InMemoryLogRecordExporter();
  const provider = new LoggerProvider({ resource: resourceFromAttributes({ 'service.name': 'weather-service' }), processors: [new SimpleLogRecordProcessor({ exporter: memory })] });
  const tracerProvider = new NodeTracerProvider();
  emit(provider.getLogger('test'), tracerProvider.getTracer('test'));
  return memory.getFinishedLogRecords();
}

describe('OTLP logs: what is refused', () => {
  it('rejects records without a span context through partial_success and stores the rest (protobuf and JSON)', async () => {
    const records = recordsOf((logger, tracer) => {
      logger.emit({ eventName: 'gen_ai.user.message', body: { content: 'no span here' } });
      tracer.startActiveSpan('chat', (span) => {
        logger.emit({ eventName: 'gen_ai.user.message', body: { content: 'inside a span' } });
        span.end();
      });
      logger.emit({ body: 'a plain log line, no span' });
    });
    expect(records).toHaveLength(3);
    const before = await storedLogRows();
    const proto = await postOtlp(svc.url, ingestKey, ProtobufLogsSerializer.serializeRequest(records)!, { path: '/v1/logs', gzip: true });
    expect(proto.status).toBe(200);
    expect(proto.contentType).toContain('application/x-protobuf');
    const partial = decodeLogsExportResponse(proto.body);
    expect(partial?.rejectedLogRecords).toBe(2);
    expect(partial?.errorMessage).toMatch(/^rejected 2 of 3 log records: record: no span context \(trace_id and span_id\)/);
    expect(await storedLogRows()).toBe(before + 1);

    const json = await postOtlp(svc.url, ingestKey, new TextDecoder().decode(JsonLogsSerializer.serializeRequest(records)), { path: '/v1/logs', contentType: 'application/json' });
    expect(json.status).toBe(200);
    const body = JSON.parse(json.body.toString());
    expect(body.partialSuccess.rejectedLogRecords).toBe('2');
    expect(body.partialSuccess.errorMessage).toContain('no span context');
    // The same accepted record again (a retried export, here as JSON): the same record id, so readers count it once.
    const { ch } = svc.service.deps;
    const ids = await ch.client.query({
      query: `SELECT uniqExact(record_id) AS ids FROM ${ch.table('span_logs')} WHERE span_id = {s:String}`,
      query_params: { s: records[1].spanContext!.spanId },
      format: 'JSONEachRow',
    });
    expect((await ids.json<{ ids: number | string }>()).map((r) => Number(r.ids))).toEqual([1]);

    const clean = await postOtlp(svc.url, ingestKey, ProtobufLogsSerializer.serializeRequest(records.slice(1, 2))!, { path: '/v1/logs' });
    expect(clean.status).toBe(200);
    expect(decodeLogsExportResponse(clean.body)).toBeNull();
  });

  it('keeps at most TRACE_MAX_SPANS records per trace, rejecting the rest by name', async () => {
    let spanId = '';
    const records = recordsOf((logger, tracer) =>
      tracer.startActiveSpan('chat', (span) => {
        spanId = span.spanContext().spanId;
        for (let i = 0; i < 12; i++) logger.emit({ eventName: 'app.step', body: `step ${i}` });
        span.end();
      }),
    );
    const first = await postOtlp(svc.url, ingestKey, ProtobufLogsSerializer.serializeRequest(records)!, { path: '/v1/logs' });
    expect(first.status).toBe(200);
    const partial = decodeLogsExportResponse(first.body);
    expect(partial?.rejectedLogRecords).toBe(2);
    expect(partial?.errorMessage).toMatch(/^rejected 2 log records: trace [0-9a-f-]{36} reached the limit of 10 log records per trace \(TRACE_MAX_SPANS\)$/);
    const more = recordsOf((logger) =>
      context.with(trace.setSpanContext(context.active(), records[0].spanContext!), () => logger.emit({ eventName: 'app.step', body: 'one more' })),
    );
    const second = decodeLogsExportResponse((await postOtlp(svc.url, ingestKey, ProtobufLogsSerializer.serializeRequest(more)!, { path: '/v1/logs' })).body);
    expect(second?.rejectedLogRecords).toBe(1);
    const { ch } = svc.service.deps;
    const stored = await ch.client.query({
      query: `SELECT count() AS n FROM ${ch.table('span_logs')} FINAL WHERE span_id = {s:String}`,
      query_params: { s: spanId },
      format: 'JSONEachRow',
    });
    expect((await stored.json<{ n: number | string }>()).map((r) => Number(r.n))).toEqual([10]);
  });

  it('answers bad bodies and bad credentials with a clear 4xx and stores nothing', async () => {
    const before = await storedLogRows();
    const junk = await postOtlp(svc.url, ingestKey, Buffer.from([0x0a, 0xff, 0xff, 0xff, 0x0f]), { path: '/v1/logs' });
    expect(junk.status).toBe(400);
    expect(junk.contentType).toContain('application/x-protobuf');
    const notJson = await postOtlp(svc.url, ingestKey, '{"resourceLogs": [', { path: '/v1/logs', contentType: 'application/json' });
    expect(notJson.status).toBe(400);
    expect(JSON.parse(notJson.body.toString())).toMatchObject({ code: 'validation_error', detail: expect.stringContaining('Invalid JSON') });
    const array = await postOtlp(svc.url, ingestKey, '[]', { path: '/v1/logs', contentType: 'application/json' });
    expect(array.status).toBe(400);
    expect(JSON.parse(array.body.toString()).detail).toContain('ExportLogsServiceRequest');
    const notList = await postOtlp(svc.url, ingestKey, '{"resourceLogs": {}}', { path: '/v1/logs', contentType: 'application/json' });
    expect(notList.status).toBe(400);
    const text = await postOtlp(svc.url, ingestKey, 'hello', { path: '/v1/logs', contentType: 'text/plain' });
    expect(text.status).toBe(415);
    expect((await postOtlp(svc.url, null, '{}', { path: '/v1/logs', contentType: 'application/json' })).status).toBe(401);
    const readKey = await svc.newKey('read', { projectId: project.id });
    expect((await postOtlp(svc.url, readKey, '{}', { path: '/v1/logs', contentType: 'application/json' })).status).toBe(403);
    const admin = await postOtlp(svc.url, svc.adminKey, '{"resourceLogs": [{"scopeLogs": [{"logRecords": [{"traceId": "5b8efff798038103d269b633813fc60c", "spanId": "eee19b7ec3c1b174"}]}]}]}', {
      path: '/v1/logs',
      contentType: 'application/json',
    });
    expect(admin.status).toBe(400);
    expect(JSON.parse(admin.body.toString()).detail).toContain('No project for the log records');
    expect(await storedLogRows()).toBe(before);
  });

  it('keeps tenants apart: another tenant can neither write to the project nor change its traces', async () => {
    const sdk = exporters('protobuf');
    const run = agentRun(sdk.tracer, 'span');
    await sdk.flushSpans();
    await sdk.shutdown();
    const id = lookoutTraceId(project.id, run.otelTraceId);
    await settledRow(id);
    const other = await svc.newTenant('logs-other');
    const otherProject = await svc.newProject('theirs', other.adminKey);
    const forged = recordsOf((logger) => {
      const ctx = trace.setSpanContext(context.active(), run.chat2.spanContext());
      logger.emit({ eventName: 'gen_ai.choice', context: ctx, body: { index: 0, finish_reason: 'stop', message: { role: 'assistant', content: 'forged answer' } } });
    });
    const before = await storedLogRows();
    const intoOurs = await postOtlp(svc.url, other.adminKey, ProtobufLogsSerializer.serializeRequest(forged)!, { path: '/v1/logs', headers: { 'x-lookout-project': project.id } });
    expect(intoOurs.status).toBe(404);
    expect(await storedLogRows()).toBe(before);
    // Into their own project with our trace and span ids: stored there, under their trace id, never joined to ours.
    const intoTheirs = await postOtlp(svc.url, other.adminKey, ProtobufLogsSerializer.serializeRequest(forged)!, { path: '/v1/logs', headers: { 'x-lookout-project': otherProject.id } });
    expect(intoTheirs.status).toBe(200);
    expect(await storedLogRows()).toBe(before + 1);
    const ours = await detail(id);
    expect(ours.body.agent_output).toEqual(JSON.parse(SPAN_CONTENT.chat2['gen_ai.output.messages']));
    expect(JSON.stringify((await contextSpans(id)).map((s) => s.attributes))).not.toContain('forged answer');
    expect((await detail(id, other.adminKey)).status).toBe(404);
    expect((await svc.call('GET', `/traces/${run.otelTraceId}`, { key: other.adminKey })).status).toBe(404);
  });
});
