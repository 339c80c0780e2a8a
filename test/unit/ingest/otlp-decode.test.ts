import { describe, expect, it } from 'vitest';
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { decodeProtobufExport, unsignedToDecimal } from '../../../src/ingest/otlp/otlp-decode-protobuf.js';
import { decodeJsonExport } from '../../../src/ingest/otlp/otlp-decode-json.js';
import { OtlpDecodeError, countSpans } from '../../../src/spans/otlp-types.js';

/** Real spans from the OpenTelemetry SDK, serialized by the exporters' own serializers. */
function sdkSpans(): ReadableSpan[] {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'support-bot', 'service.version': '1.4.2' }),
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  const tracer = provider.getTracer('decode-test', '0.1.0');
  {
    // No context manager in a bare provider: the parent goes in explicitly.
    const agent = tracer.startSpan('invoke_agent support', { kind: SpanKind.INTERNAL, attributes: { 'gen_ai.agent.name': 'support' } });
    const parent = trace.setSpan(ROOT_CONTEXT, agent);
    const llm = tracer.startSpan('chat gpt-4o', {
      kind: SpanKind.CLIENT,
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.request.model': 'gpt-4o',
        'gen_ai.usage.input_tokens': 1200,
        'gen_ai.usage.output_tokens': 80,
        'gen_ai.request.temperature': 0.2,
        'gen_ai.response.finish_reasons': ['stop'],
        'app.flag': true,
      },
    }, parent);
    llm.addEvent('gen_ai.choice', { index: 0 });
    llm.end();
    const tool = tracer.startSpan('execute_tool lookup_order', { attributes: { 'gen_ai.tool.name': 'lookup_order' } }, parent);
    tool.recordException(new Error('order service timed out'));
    tool.setStatus({ code: SpanStatusCode.ERROR, message: 'order service timed out' });
    tool.end();
    agent.end();
  }
  return exporter.getFinishedSpans();
}

describe('OTLP decoding', () => {
  const spans = sdkSpans();

  it('decodes the protobuf bytes of the real exporter serializer', () => {
    const body = ProtobufTraceSerializer.serializeRequest(spans)!;
    const decoded = decodeProtobufExport(body);
    expect(countSpans(decoded)).toBe(3);
    expect(decoded.resourceSpans[0].resource).toMatchObject({ 'service.name': 'support-bot', 'service.version': '1.4.2' });
    const scope = decoded.resourceSpans[0].scopes[0];
    expect(scope).toMatchObject({ scopeName: 'decode-test', scopeVersion: '0.1.0' });
    const byName = Object.fromEntries(scope.spans.map((s) => [s.name, s]));
    const llm = byName['chat gpt-4o'];
    const sdkLlm = spans.find((s) => s.name === 'chat gpt-4o')!;
    expect(llm.traceId).toBe(sdkLlm.spanContext().traceId);
    expect(llm.spanId).toBe(sdkLlm.spanContext().spanId);
    expect(llm.parentSpanId).toBe(sdkLlm.parentSpanContext!.spanId);
    expect(llm.kind).toBe(3);
    const [sec, nanos] = sdkLlm.startTime;
    expect(llm.startNs).toBe((BigInt(sec) * 1_000_000_000n + BigInt(nanos)).toString());
    expect(llm.startNs).toMatch(/^\d{19}$/);
    expect(llm.attributes).toEqual({
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.model': 'gpt-4o',
      'gen_ai.usage.input_tokens': 1200,
      'gen_ai.usage.output_tokens': 80,
      'gen_ai.request.temperature': 0.2,
      'gen_ai.response.finish_reasons': ['stop'],
      'app.flag': true,
    });
    expect(llm.events[0]).toMatchObject({ name: 'gen_ai.choice', attributes: { index: 0 } });
    const tool = byName['execute_tool lookup_order'];
    expect(tool.statusCode).toBe(2);
    expect(tool.statusMessage).toBe('order service timed out');
    expect(tool.events[0].name).toBe('exception');
    expect(tool.events[0].attributes['exception.message']).toBe('order service timed out');
    expect(byName['invoke_agent support'].parentSpanId).toBe('');
  });

  it('decodes the OTLP/JSON of the real exporter serializer to the same result', () => {
    const proto = decodeProtobufExport(ProtobufTraceSerializer.serializeRequest(spans)!);
    const json = decodeJsonExport(new TextDecoder().decode(JsonTraceSerializer.serializeRequest(spans)));
    expect(json).toEqual(proto);
  });

  it('accepts snake_case keys, numeric int64, enum names and base64 ids in JSON', () => {
    const traceHex = '5b8efff798038103d269b633813fc60c';
    const body = JSON.stringify({
      resource_spans: [
        {
          resource: { attributes: [{ key: 'service.name', value: { string_value: 'svc' } }] },
          scope_spans: [
            {
              scope: { name: 's' },
              spans: [
                {
                  trace_id: Buffer.from(traceHex, 'hex').toString('base64'),
                  span_id: 'EEE19B7EC3C1B174',
                  name: 'op',
                  kind: 'SPAN_KIND_SERVER',
                  start_time_unix_nano: 1544712660000000000,
                  end_time_unix_nano: '1544712661000000000',
                  attributes: [
                    { key: 'n', value: { int_value: 42 } },
                    { key: 'big', value: { intValue: '9007199254740993' } },
                    { key: 'kv', value: { kvlistValue: { values: [{ key: 'a', value: { doubleValue: 1.5 } }] } } },
                  ],
                  status: { code: 'STATUS_CODE_ERROR', message: 'boom' },
                },
              ],
            },
          ],
        },
      ],
    });
    const decoded = decodeJsonExport(body);
    const span = decoded.resourceSpans[0].scopes[0].spans[0];
    expect(span.traceId).toBe(traceHex);
    expect(span.spanId).toBe('eee19b7ec3c1b174');
    expect(span.kind).toBe(2);
    expect(span.statusCode).toBe(2);
    expect(span.endNs).toBe('1544712661000000000');
    expect(span.attributes).toEqual({ n: 42, big: '9007199254740993', kv: { a: 1.5 } });
  });

  it('keeps every digit of 19-digit nanosecond times sent as bare JSON numbers', () => {
    const body = `{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"5b8efff798038103d269b633813fc60c","spanId":"eee19b7ec3c1b174","name":"x","startTimeUnixNano":1700000000123456789,"endTimeUnixNano":1700000000987654321,"attributes":[{"key":"note","value":{"stringValue":"{\\"startTimeUnixNano\\":1234567890123456789}"}}]}]}]}]}`;
    const span = decodeJsonExport(body).resourceSpans[0].scopes[0].spans[0];
    expect(span.startNs).toBe('1700000000123456789');
    expect(span.endNs).toBe('1700000000987654321');
    // Key-like text inside a string value is left alone.
    expect(span.attributes.note).toBe('{"startTimeUnixNano":1234567890123456789}');
  });

  it('converts 64-bit values exactly', () => {
    expect(unsignedToDecimal({ low: -1, high: -1, unsigned: true })).toBe('18446744073709551615');
    expect(unsignedToDecimal({ low: 1032178965, high: 395812094, unsigned: true })).toBe('1700000000123456789');
    expect(unsignedToDecimal({ low: 5, high: 0 })).toBe('5');
  });

  it('rejects bodies that are not an export request', () => {
    expect(() => decodeJsonExport('{not json')).toThrow(OtlpDecodeError);
    expect(() => decodeJsonExport('[1,2]')).toThrow(/ExportTraceServiceRequest/);
    expect(() => decodeJsonExport('{"resourceSpans": 5}')).toThrow(/resourceSpans must be an array/);
    expect(() => decodeProtobufExport(Buffer.from([0x0a, 0xff, 0xff, 0xff]))).toThrow(OtlpDecodeError);
  });
});
