import { describe, expect, it } from 'vitest';
import { anyValue, lastTraceStart, otlpBatch, type ExportSpanRow } from '../../../src/lifecycle/otlp-export-lines.js';
import { decodeJsonExport } from '../../../src/ingest/otlp/otlp-decode-json.js';

/** Stored spans back to OTLP/JSON lines (src/lifecycle/otlp-export-lines.ts), checked against Lookout's own OTLP/JSON decoder. */
const row = (traceId: string, spanId: string, startNs: string, extra: Partial<ExportSpanRow> = {}): ExportSpanRow => ({
  trace_id: traceId,
  otel_trace_id: traceId.replaceAll('-', ''),
  span_id: spanId,
  parent_span_id: '',
  name: `span ${spanId}`,
  kind: 'client',
  start_time_ns: startNs,
  end_time_ns: String(BigInt(startNs) + 1000n),
  status_code: 'ERROR',
  status_description: 'boom',
  attributes: JSON.stringify({ n: 3, x: 0.5, ok: false, list: ['a', 1], map: { k: null } }),
  events: JSON.stringify([{ timeNs: startNs, name: 'e', attributes: { big: '9007199254740993' } }]),
  resource: JSON.stringify({ 'service.name': 'svc' }),
  scope_name: 'scope',
  scope_version: '1.0',
  ...extra,
});
const T1 = '00000000-0000-5000-8000-000000000001';
const T2 = '00000000-0000-5000-8000-000000000002';
const lines = (rows: ExportSpanRow[]) => new TextEncoder().encode(rows.map((r) => `${JSON.stringify(r)}\n`).join(''));
const range = { startNs: '1000', endNs: '5000' };

describe('OTLP/JSON lines of stored spans', () => {
  it('writes each value type as the AnyValue OTLP/JSON decodes back to the stored value', () => {
    expect(anyValue(null)).toEqual({});
    expect(anyValue('s')).toEqual({ stringValue: 's' });
    expect(anyValue(7)).toEqual({ intValue: '7' });
    expect(anyValue(0.5)).toEqual({ doubleValue: 0.5 });
    expect(anyValue([true, { a: 1 }])).toEqual({ arrayValue: { values: [{ boolValue: true }, { kvlistValue: { values: [{ key: 'a', value: { intValue: '1' } }] } }] } });
  });

  it('writes one request per trace that Lookout decodes into the same spans', () => {
    const out = otlpBatch({ rows: lines([row(T1, '00000000000000a1', '1500'), row(T1, '00000000000000a2', '6000', { parent_span_id: '00000000000000a1', scope_name: 'other' }), row(T2, '00000000000000b1', '2000')]), ...range });
    expect(out.traces).toBe(2);
    const [first] = out.text.split('\n');
    const decoded = decodeJsonExport(first);
    expect(decoded.resourceSpans).toHaveLength(1);
    expect(decoded.resourceSpans[0].resource).toEqual({ 'service.name': 'svc' });
    expect(decoded.resourceSpans[0].scopes.map((s) => s.scopeName)).toEqual(['scope', 'other']);
    const [a1] = decoded.resourceSpans[0].scopes[0].spans;
    expect(a1).toMatchObject({ traceId: T1.replaceAll('-', ''), spanId: '00000000000000a1', parentSpanId: '', kind: 3, startNs: '1500', statusCode: 2, statusMessage: 'boom' });
    expect(a1.attributes).toEqual({ n: 3, x: 0.5, ok: false, list: ['a', 1], map: { k: null } });
    expect(a1.events).toEqual([{ timeNs: '1500', name: 'e', attributes: { big: '9007199254740993' } }]);
    expect(decoded.resourceSpans[0].scopes[1].spans[0].parentSpanId).toBe('00000000000000a1');
  });

  it('keeps only traces whose first span starts in the window, and one copy of a span stored twice', () => {
    const out = otlpBatch({ rows: lines([row(T1, '00000000000000a1', '900'), row(T1, '00000000000000a2', '1500'), row(T2, '00000000000000b1', '2000', { name: 'newest' }), row(T2, '00000000000000b1', '2000', { name: 'older' })]), ...range });
    expect(out.traces).toBe(1);
    const spans = decodeJsonExport(out.text.trim()).resourceSpans[0].scopes[0].spans;
    expect(spans.map((s) => s.name)).toEqual(['newest']);
  });

  it('finds where the last trace of a batch begins without parsing a row', () => {
    const bytes = lines([row(T1, '00000000000000a1', '1500'), row(T2, '00000000000000b1', '2000'), row(T2, '00000000000000b2', '2100')]);
    const text = new TextDecoder().decode(bytes);
    expect(lastTraceStart(bytes)).toBe(Buffer.byteLength(text.slice(0, text.indexOf(`{"trace_id":"${T2}"`))));
    expect(lastTraceStart(lines([row(T2, '00000000000000b1', '2000'), row(T2, '00000000000000b2', '2100')]))).toBe(0);
    // `end` bounds the lines looked at (the caller passes the end of the last whole line).
    expect(lastTraceStart(bytes, text.indexOf('\n') + 1)).toBe(0);
  });
});
