/**
 * What settling stores for search (trace-content.ts): each kind of content in its field, JSON by its
 * string leaves, equal texts once, every field written (empty ones too), and the field cap.
 */
import { describe, expect, it } from 'vitest';
import { normalizeExport } from '../../../src/spans/normalized-span.js';
import type { Attributes, DecodedSpan } from '../../../src/spans/otlp-types.js';
import { CONTENT_FIELDS, MAX_FIELD_CHARS, traceContentRows } from '../../../src/spans/trace-content.js';

const TRACE = '0af7651916cd43dd8448eb211c80319c';

function span(spanId: string, attributes: Attributes, over: Partial<DecodedSpan> = {}): DecodedSpan {
  return {
    traceId: TRACE, spanId, parentSpanId: spanId === '0000000000000001' ? '' : '0000000000000001', traceState: '', name: `span ${spanId.slice(-1)}`,
    kind: 1, startNs: `17000000000000000${spanId.slice(-2)}`, endNs: '1700000001000000000', attributes, events: [], links: [], statusCode: 0, statusMessage: '', ...over,
  };
}

function contentOf(spans: DecodedSpan[]) {
  const normalized = normalizeExport({ resourceSpans: [{ resource: { 'service.name': 'svc' }, scopes: [{ scopeName: 's', scopeVersion: '', spans }] }] }, { tenantId: 't1', projectId: 'p1' });
  const rows = traceContentRows(normalized, { timestamp: '2026-11-20 10:00:00.000', processedAt: '2026-11-20 10:01:00.000' });
  return Object.fromEntries(rows.map((r) => [r.field, r.text]));
}

describe('traceContentRows', () => {
  it('sorts a trace\'s text into its fields', () => {
    const messages = JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: 'Where is my REFUND?' }] }]);
    const content = contentOf([
      span('0000000000000001', { 'gen_ai.input.messages': messages, 'gen_ai.output.messages': JSON.stringify([{ role: 'assistant', parts: [{ type: 'text', content: 'On its way' }], finish_reason: 'stop' }]), 'customer.tier': 'Gold', 'retries': 3 }),
      span('0000000000000002', { 'gen_ai.tool.name': 'lookup_order', 'gen_ai.tool.call.arguments': '{"order_id": "A-42"}', 'gen_ai.tool.call.result': 'not json {' }, {
        statusCode: 2, statusMessage: 'lookup failed',
        events: [{ timeNs: '1', name: 'exception', attributes: { 'exception.type': 'KeyError', 'exception.message': 'A-42', 'exception.escaped': 'false' } }, { timeNs: '2', name: 'log', attributes: { 'log.body': 'checkpoint\n\n reached' } }],
      }),
    ]);
    expect(content).toEqual({
      input: 'Where is my REFUND?',
      output: 'On its way',
      tool: 'lookup_order\nA-42\nnot json {',
      error: 'lookup failed\nKeyError\nA-42',
      name: 'span 1\nspan 2',
      attribute: 'Gold\nfalse\ncheckpoint reached',
    });
  });

  it('keeps equal texts once per field and writes every field', () => {
    const history = JSON.stringify([{ role: 'user', content: 'same question' }]);
    const normalized = normalizeExport({ resourceSpans: [{ resource: {}, scopes: [{ scopeName: 's', scopeVersion: '', spans: [span('0000000000000001', { 'gen_ai.input.messages': history }), span('0000000000000002', { 'gen_ai.input.messages': history })] }] }] }, { tenantId: 't1', projectId: 'p1' });
    const rows = traceContentRows(normalized, { timestamp: '2026-11-20 10:00:00.000', processedAt: '2026-11-20 10:01:00.000' });
    expect(rows.map((r) => r.field)).toEqual([...CONTENT_FIELDS]);
    expect(rows.find((r) => r.field === 'input')).toMatchObject({ text: 'same question', text_norm: 'same question', tenant_id: 't1', project_id: 'p1', timestamp: '2026-11-20 10:00:00.000' });
    expect(rows.find((r) => r.field === 'tool')?.text).toBe('');
  });

  it('cuts a field at its cap, never inside a surrogate pair', () => {
    const big = `${'x'.repeat(MAX_FIELD_CHARS - 1)}😀 tail`;
    const content = contentOf([span('0000000000000001', { 'note': big, 'later': 'never stored' })]);
    expect(content.attribute).toBe('x'.repeat(MAX_FIELD_CHARS - 1));
  });

  it('keeps lower-casing aligned with the display text', () => {
    const content = traceContentRows(
      normalizeExport({ resourceSpans: [{ resource: {}, scopes: [{ scopeName: 's', scopeVersion: '', spans: [span('0000000000000001', { 'lookout.agent_input': 'İSTANBUL ＡＢＣ ΟΔΟΣ' })] }] }] }, { tenantId: 't', projectId: 'p' }),
      { timestamp: '2026-11-20 10:00:00.000', processedAt: '2026-11-20 10:01:00.000' },
    ).find((r) => r.field === 'input')!;
    expect(content).toMatchObject({ text: 'İSTANBUL ABC ΟΔΟΣ', text_norm: 'İstanbul abc οδοσ' });
  });
});

describe('the fields a match names', () => {
  it('are the content fields, as the list item declares them', async () => {
    const { TraceListItem } = await import('../../../src/traces/trace-schemas.js');
    const match = TraceListItem.properties.match as unknown as { properties: { field: { enum: string[] } } };
    expect(match.properties.field.enum).toEqual([...CONTENT_FIELDS]);
  });
});
