import { beforeAll, describe, expect, it } from 'vitest';
import { createPriceTrace } from '../../../src/analytics/cost/ingest-pricing.js';
import { loadBundledCatalog } from '../../../src/analytics/cost/price-catalog.js';
import { encodeSpanEventRows, lineOf, storedRowsFromSpanLines } from '../../../src/ingest/encoded-rows.js';
import { otlpOrigin } from '../../../src/ingest/event-rows.js';
import { deriveRequestRows } from '../../../src/ingest/ingest-prepare.js';
import { normalizeExport } from '../../../src/ingest/normalized-span.js';
import { decodeJsonExport } from '../../../src/ingest/otlp-decode-json.js';
import { unpackHook } from '../../../src/ingest/packed-hook.js';
import { encodeSettleRecords, settleRecordsFromBytes, settleSpanOf } from '../../../src/ingest/settle-records.js';
import { settleSummaries, type SettledTrace } from '../../../src/ingest/settle-summaries.js';
import { validateExport } from '../../../src/ingest/span-validation.js';
import { spanFromStoredRow, traceKeyString } from '../../../src/ingest/stored-spans.js';
import type { PriceTrace } from '../../../src/trace-pricing.js';

/**
 * The settle task summarizes a trace held in memory from the records prepare wrote (mapped fields,
 * attributes as unparsed text), no longer from the `spans` insert lines parsed and mapped again.
 * Both must give the same rows and the same hook payload as a read-back of the stored spans, for
 * values that need care. The read-back here is the insert lines as ClickHouse answers them (JSON
 * columns as text, as stored: test/integration/ingest/insert-format.test.ts checks that against
 * the engine, and compares the memory path with a real read-back).
 */

const attr = (key: string, value: unknown) => ({ key, value });
const str = (key: string, v: string) => attr(key, { stringValue: v });
const lone = 'lone \ud800 and \udc00, tab \t newline \n nul \u0000 line sep \u2028 工具 🔧 \\ud800';

let start = Date.now() * 1_000_000;
const ns = (offsetMs: number) => String(BigInt(start) + BigInt(offsetMs) * 1_000_000n);

/** One OTLP/JSON trace; spans: [spanId, parentSpanId, name, attributes, extra]. */
function exportOf(traceId: string, spans: [string, string, string, unknown[], object?][]): string {
  return JSON.stringify({
    resourceSpans: [{
      resource: { attributes: [str('service.name', `svc ${lone}`), str('service.version', '2.0')] },
      scopeSpans: [{
        scope: { name: 'test', version: '1' },
        spans: spans.map(([spanId, parentSpanId, name, attributes, extra], i) => ({
          traceId, spanId, parentSpanId, name, kind: 1, startTimeUnixNano: ns(i), endTimeUnixNano: ns(i + 5), attributes, ...extra,
        })),
      }],
    }],
  });
}

/** What a line holds of a value: every lone surrogate of its strings as U+FFFD (jsonLine). */
const wellFormed = <T>(value: T): T =>
  JSON.parse(JSON.stringify(value), (_key, v: unknown) =>
    typeof v === 'string' ? v.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd') : v,
  ) as T;

const origin = otlpOrigin('key\t1', 'user "1"');
const processedAt = '2026-11-24 22:00:00.000';

/** Memory path (records) and read-back path (the insert lines as the engine returns them), both settled. */
function bothPaths(text: string, priceTrace?: PriceTrace): { memory: SettledTrace; readBack: SettledTrace } {
  const { valid } = validateExport(decodeJsonExport(text));
  const derived = deriveRequestRows(normalizeExport(valid, { tenantId: 'tenant-r', projectId: 'project-r' }), origin);
  const encoded = encodeSpanEventRows(derived.rows);
  const rows = storedRowsFromSpanLines(Buffer.concat(derived.rows.spans.map((_, i) => lineOf(encoded.spans, i))));
  const stored = Buffer.from(
    rows
      .map((r) => `${JSON.stringify({ ...r, start_time_ns: String(r.start_time_ns), end_time_ns: String(r.end_time_ns), attributes: JSON.stringify(r.attributes), events: JSON.stringify(r.events), resource: JSON.stringify(r.resource) })}\n`)
      .join(''),
  );
  const key = traceKeyString({ tenantId: 'tenant-r', projectId: 'project-r', traceId: derived.rows.spans[0].trace_id });
  const records = encodeSettleRecords(derived.rowSpans).body;
  const [memory] = settleSummaries({ processedAt, traces: [{ key, origin, records, writtenTools: derived.traces[0].toolRows, firstProcessing: true }] }, priceTrace);
  const [readBack] = settleSummaries({ processedAt, traces: [{ key, origin, firstProcessing: true }], stored }, priceTrace);
  return { memory, readBack };
}

function expectSame({ memory, readBack }: { memory: SettledTrace; readBack: SettledTrace }) {
  expect(memory.processedLine).toBe(readBack.processedLine);
  expect(memory.traceLine).toBe(readBack.traceLine);
  expect(unpackHook(memory.hook)).toEqual(unpackHook(readBack.hook));
  expect(memory.hook.spanAttributes).toBe(readBack.hook.spanAttributes);
}

let priceTrace: PriceTrace;
beforeAll(async () => {
  const catalog = await loadBundledCatalog();
  priceTrace = createPriceTrace({ current: () => catalog });
});

describe('settle records', () => {
  it('summarize a trace as its stored spans do: failures, tokens missing or past 2^53, unpriced models, awkward text', () => {
    const text = exportOf('0af7651916cd43dd8448eb211c80319c', [
      ['a000000000000001', '', `agent ${lone}`, [str('gen_ai.operation.name', 'invoke_agent'), str('gen_ai.agent.name', `agent\t${lone}`), str('lookout.agent_input', lone)]],
      ['a000000000000002', 'a000000000000001', 'chat priced', [
        str('gen_ai.operation.name', 'chat'), str('gen_ai.provider.name', 'openai'), str('gen_ai.response.model', 'gpt-4o-2024-08-06'),
        attr('gen_ai.usage.input_tokens', { intValue: '1200' }), attr('gen_ai.usage.output_tokens', { intValue: '80' }),
        attr('gen_ai.usage.cache_read.input_tokens', { intValue: '1000' }), attr('gen_ai.usage.cache_creation.input_tokens', { intValue: '50' }),
      ]],
      // A model no catalog knows, usage past 2^53 and 1e21 (absent), a missing output count.
      ['a000000000000003', 'a000000000000001', 'chat unpriced', [
        str('gen_ai.operation.name', 'chat'), str('gen_ai.request.model', `no-such-model ${lone}`),
        attr('gen_ai.usage.input_tokens', { doubleValue: 1e21 }), attr('gen_ai.usage.prompt_tokens', { intValue: '9007199254740991' }),
        attr('gen_ai.usage.completion_tokens', { intValue: '9007199254740993' }),
      ]],
      // Failed tool call: exception event type and message; its output below it.
      ['a000000000000004', 'a000000000000001', 'execute_tool lookup', [
        str('gen_ai.operation.name', 'execute_tool'), str('gen_ai.tool.name', `lookup ${lone}`), str('gen_ai.tool.call.arguments', `{"q":"${'x'.repeat(10)}"}`),
        str('gen_ai.tool.call.result', `result ${lone}`),
      ], {
        status: { code: 2, message: '' },
        events: [{ timeUnixNano: ns(3), name: 'exception', attributes: [str('exception.type', `TimeoutError ${lone}`), str('exception.message', `timed out ${lone}`)] }],
      }],
      ['a000000000000005', 'a000000000000004', 'chat below tool', [
        str('gen_ai.operation.name', 'chat'), str('gen_ai.request.model', 'gpt-4o-mini'), attr('gen_ai.usage.output_tokens', { intValue: '7' }),
      ]],
      // Failed with error.type only and a status message holding NUL; no attributes at all on the next.
      ['a000000000000006', 'a000000000000001', 'step', [str('error.type', `BadThing ${lone}`)], { status: { code: 2, message: `bad ${lone}` } }],
      ['a000000000000007', 'a000000000000001', 'no attributes', [], { status: { code: 2 } }],
      // A user-facing tool: its message is in the trace row.
      ['a000000000000008', 'a000000000000001', 'execute_tool reply_to_user', [
        str('gen_ai.operation.name', 'execute_tool'), str('gen_ai.tool.name', 'reply_to_user'), str('gen_ai.tool.call.arguments', JSON.stringify({ message: `Hi ${lone}` })),
      ]],
      ['a000000000000009', 'a000000000000001', 'values', [
        attr('big', { intValue: '9007199254740993' }), attr('nan', { doubleValue: 'NaN' }), attr('tiny', { doubleValue: 5e-324 }), attr('flag', { boolValue: false }),
        attr('list', { arrayValue: { values: [{ stringValue: lone }, { arrayValue: { values: [] } }] } }), attr('map', { kvlistValue: { values: [str('}]"\\', '\t')] } }),
        attr('__proto__', { kvlistValue: { values: [str('gen_ai.agent.name', 'not an agent')] } }),
      ]],
    ]);
    const paths = bothPaths(text, priceTrace);
    expectSame(paths);
    const processed = JSON.parse(paths.memory.processedLine);
    expect(processed).toMatchObject({ error_count: 3, failing_tool_calls: 1, input_tokens: 1200 + 9007199254740991, output_tokens: 80 + 7 });
    expect(processed.models).toEqual(['gpt-4o-2024-08-06', 'gpt-4o-mini', `no-such-model ${lone.replace(/\ud800|\udc00/g, '\ufffd')}`]);
    expect(processed.cost_unpriced_models).toEqual([`no-such-model ${lone.replace(/\ud800|\udc00/g, '\ufffd')}`]);
    expect(processed.estimated_cost_usd).toBeGreaterThan(0);
    const hook = unpackHook(paths.memory.hook);
    expect(hook.failures.map((f) => [f.error_type.slice(0, 12), f.message.slice(0, 9)])).toEqual([
      ['TimeoutError', 'timed out'],
      ['BadThing lon', 'bad lone '],
      ['', ''],
    ]);
    expect(hook.failures.every((f) => !f.message.includes('\u0000'))).toBe(true);
    expect(Object.keys(hook.spanAttributes)).not.toContain('a000000000000007');
    // An own `__proto__` attribute, as the decoders keep it (JSON.parse makes it an own property too).
    const expected = JSON.parse(`${JSON.stringify({ big: '9007199254740993', nan: 'NaN', tiny: 5e-324, flag: false, list: ['lone \ufffd and \ufffd, tab \t newline \n nul \u0000 line sep \u2028 工具 🔧 \\ud800', []], map: { '}]"\\': '\t' } }).slice(0, -1)},"__proto__":{"gen_ai.agent.name":"not an agent"}}`);
    expect(hook.spanAttributes.a000000000000009).toEqual(expected);
    expect(Object.getOwnPropertyNames(hook.spanAttributes.a000000000000009)).toContain('__proto__');
    expect(hook.agentName).not.toBe('not an agent');
  });

  it('hold a long prompt, completion or tool text once: the record names its attribute, read when summarizing needs it', () => {
    const prompt = JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: `${lone} ${'where is my order? '.repeat(40)}` }] }]);
    const completion = JSON.stringify([{ role: 'assistant', parts: [{ type: 'text', content: 'It ships tomorrow. '.repeat(30) }] }]);
    const args = JSON.stringify({ message: `Hello ${lone} ${'x'.repeat(400)}` });
    const result = `ok ${'y'.repeat(300)}`;
    const text = exportOf('5af7651916cd43dd8448eb211c80319c', [
      ['f000000000000001', '', 'invoke_agent', [str('gen_ai.operation.name', 'invoke_agent'), str('gen_ai.agent.name', 'support')]],
      ['f000000000000002', 'f000000000000001', 'chat', [
        str('gen_ai.operation.name', 'chat'), str('gen_ai.request.model', 'gpt-4o'), str('gen_ai.input.messages', prompt), str('gen_ai.output.messages', completion),
      ]],
      ['f000000000000003', 'f000000000000001', 'execute_tool reply_to_user', [
        str('gen_ai.operation.name', 'execute_tool'), str('gen_ai.tool.name', 'reply_to_user'), str('gen_ai.tool.call.arguments', args), str('gen_ai.tool.call.result', result),
      ], { status: { code: 2, message: 'failed' } }],
    ]);
    const paths = bothPaths(text, priceTrace);
    expectSame(paths);
    const trace = JSON.parse(paths.memory.traceLine);
    expect([trace.agent_input, trace.agent_output]).toEqual([wellFormed(prompt), completion]);
    expect(JSON.parse(trace.tool_calls)[0].user_facing_message).toMatch(/^Hello lone .* x{100}/s);
    expect(unpackHook(paths.memory.hook).toolCalls[0]).toMatchObject({ input: wellFormed(args), output: result });
    // Each text once in its record: in the attributes' text, named (not repeated) before it.
    const { valid } = validateExport(decodeJsonExport(text));
    const spans = normalizeExport(valid, { tenantId: 't', projectId: 'p' });
    const lines = Buffer.from(encodeSettleRecords(spans).body).toString().split('\n');
    expect(lines[1].split('\t')[0]).toContain('["gen_ai.input.messages"]');
    expect(lines[1].length).toBeLessThan(JSON.stringify(spans[1].attributes).length + 400);
    expect(lines[2].split('\t')[0]).toContain('["gen_ai.tool.call.arguments"]');
  });

  it('summarize an unrooted part of a trace, without usage, unpriced', () => {
    const paths = bothPaths(exportOf('1af7651916cd43dd8448eb211c80319c', [
      ['b000000000000002', 'b000000000000001', 'orphan chat', [str('gen_ai.operation.name', 'chat'), str('gen_ai.request.model', 'gpt-4o')]],
      ['b000000000000003', 'b000000000000002', 'orphan tool', [str('gen_ai.tool.name', 'search')]],
    ]));
    expectSame(paths);
    expect(JSON.parse(paths.memory.processedLine)).toMatchObject({ has_root: 0, input_tokens: 0, estimated_cost_basis: 'unavailable' });
  });

  it('read back as they were written, the attributes as their JSON text', () => {
    const { valid } = validateExport(decodeJsonExport(exportOf('2af7651916cd43dd8448eb211c80319c', [
      ['c000000000000001', '', `root\t${lone}`, [str('k', `v\n${lone}`)], { status: { code: 2, message: 'm' } }],
      ['c000000000000002', 'c000000000000001', 'bare', []],
    ])));
    const spans = normalizeExport(valid, { tenantId: 't', projectId: 'p' });
    const key = { tenantId: 't', projectId: 'p', traceId: spans[0].traceId };
    const records = settleRecordsFromBytes(key, encodeSettleRecords(spans).body);
    expect(records.map((r) => r.span)).toEqual(spans.map((s) => settleSpanOf(wellFormed(s))));
    expect(records.map((r) => r.attributesJson)).toEqual([JSON.stringify({ k: `v\n${lone.replace(/\ud800|\udc00/g, '\ufffd')}` }), '']);
    // The same record a read-back span gives.
    const b = wellFormed(spans[1]);
    expect(records[1].span).toEqual(settleSpanOf(spanFromStoredRow({
      tenant_id: 't', project_id: 'p', trace_id: b.traceId, otel_trace_id: b.otelTraceId, span_id: b.spanId, parent_span_id: b.parentSpanId,
      name: 'bare', kind: 'internal', start_time_ns: b.startNs, end_time_ns: b.endNs, duration_ms: b.durationMs, status_code: 'UNSET',
      status_description: '', service_name: b.serviceName, attributes: '{}', events: '[]', resource: JSON.stringify(b.resource), scope_name: 'test', scope_version: '1', agent_name: '',
    })));
  });
});

describe('the hook payload from the pool', () => {
  it('parses span attributes only when a listener reads them, and they can be replaced', () => {
    const { memory } = bothPaths(exportOf('3af7651916cd43dd8448eb211c80319c', [['d000000000000001', '', 'root', [str('k', 'v')]]]));
    const hook = unpackHook(structuredClone(memory.hook));
    expect(typeof memory.hook.spanAttributes).toBe('string');
    expect(hook.spanAttributes).toEqual({ d000000000000001: { k: 'v' } });
    expect(hook.spanAttributes).toBe(hook.spanAttributes);
    hook.spanAttributes = {};
    expect(hook.spanAttributes).toEqual({});
    expect(JSON.parse(JSON.stringify(unpackHook(memory.hook))).spanAttributes).toEqual({ d000000000000001: { k: 'v' } });
  });
});
