import { describe, expect, it } from 'vitest';
import { genAiContentAttributes, logEventName } from '../../../src/spans/genai-log-events.js';
import { applyLogRecords, logRecordsBySpan, type StoredLogRow } from '../../../src/spans/span-log-records.js';

/** GenAI log events as span content, and other records as span events (span-log-records.ts, genai-log-events.ts). */

function row(over: Partial<StoredLogRow> & { time_ns: string }): StoredLogRow {
  return {
    tenant_id: 't',
    project_id: 'p',
    trace_id: 'tr',
    span_id: 'eee19b7ec3c1b174',
    record_id: `r${over.time_ns}${over.seq ?? 0}`,
    seq: 0,
    event_name: '',
    severity_number: 0,
    severity_text: '',
    body: 'null',
    attributes: '{}',
    ...over,
  };
}

const bytes = (rows: StoredLogRow[]) => new Uint8Array(Buffer.from(rows.map((r) => JSON.stringify(r)).join('\n') + '\n'));

describe('GenAI log events as span content', () => {
  it('takes the event name from event_name, else the event.name attribute', () => {
    expect(logEventName('gen_ai.choice', { 'event.name': 'other' })).toBe('gen_ai.choice');
    expect(logEventName('', { 'event.name': 'gen_ai.user.message' })).toBe('gen_ai.user.message');
    expect(logEventName('', {})).toBe('');
  });

  it('orders choices by index and keeps every finish reason; a body role overrides the event name', () => {
    const attrs = genAiContentAttributes([
      { name: 'gen_ai.user.message', body: { content: 'hi', role: 'developer' }, attributes: {} },
      { name: 'gen_ai.choice', body: { index: 1, finish_reason: 'length', message: { content: 'second' } }, attributes: {} },
      { name: 'gen_ai.choice', body: { index: 0, message: { role: 'assistant', content: 'first' } }, attributes: {} },
    ]);
    expect(JSON.parse(attrs['gen_ai.input.messages'] as string)).toEqual([{ role: 'developer', parts: [{ type: 'text', content: 'hi' }] }]);
    expect(JSON.parse(attrs['gen_ai.output.messages'] as string)).toEqual([
      { role: 'assistant', parts: [{ type: 'text', content: 'first' }], finish_reason: 'error' },
      { role: 'assistant', parts: [{ type: 'text', content: 'second' }], finish_reason: 'length' },
    ]);
  });

  it('gives no content attribute when content capture was off (bodies without text or arguments), as such a span carries none', () => {
    expect(
      genAiContentAttributes([
        { name: 'gen_ai.user.message', body: null, attributes: {} },
        { name: 'gen_ai.assistant.message', body: { tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_weather' } }] }, attributes: {} },
        { name: 'gen_ai.tool.message', body: { id: 'c1' }, attributes: {} },
        { name: 'gen_ai.choice', body: { index: 0, finish_reason: 'stop', message: { role: 'assistant' } }, attributes: {} },
      ]),
    ).toEqual({});
  });

  it('lets the operation-details record win over per-message events, and keeps its text form', () => {
    const attrs = genAiContentAttributes([
      { name: 'gen_ai.user.message', body: { content: 'old form' }, attributes: {} },
      {
        name: 'gen_ai.client.inference.operation.details',
        body: null,
        attributes: { 'gen_ai.input.messages': [{ role: 'user', parts: [{ type: 'text', content: 'new form' }] }], 'gen_ai.system_instructions': '[{"type":"text","content":"be brief"}]' },
      },
    ]);
    expect(JSON.parse(attrs['gen_ai.input.messages'] as string)).toEqual([{ role: 'user', parts: [{ type: 'text', content: 'new form' }] }]);
    expect(attrs['gen_ai.system_instructions']).toBe('[{"type":"text","content":"be brief"}]');
  });
});

describe('joining records to their span', () => {
  it('applies records in emission order (time, then position in the request), once per record id, under the content the span has itself', () => {
    const records = logRecordsBySpan(
      bytes([
        row({ time_ns: '2000', seq: 0, event_name: 'gen_ai.choice', body: JSON.stringify({ index: 0, finish_reason: 'stop', message: { content: 'answer' } }) }),
        row({ time_ns: '1000', seq: 1, event_name: 'gen_ai.user.message', body: JSON.stringify({ content: 'second question' }) }),
        row({ time_ns: '1000', seq: 0, event_name: 'gen_ai.system.message', body: JSON.stringify({ content: 'system' }) }),
        row({ time_ns: '1000', seq: 0, event_name: 'gen_ai.system.message', body: JSON.stringify({ content: 'system' }) }),
      ]),
    );
    const list = records.get('t\u0000p\u0000tr\u0000eee19b7ec3c1b174')!;
    expect(list.map((r) => [r.time_ns, r.seq])).toEqual([
      ['1000', 0],
      ['1000', 1],
      ['2000', 0],
    ]);
    const joined = applyLogRecords({ 'gen_ai.output.messages': 'own output' }, [], list);
    expect(joined.attributes['gen_ai.output.messages']).toBe('own output');
    expect(JSON.parse(joined.attributes['gen_ai.input.messages'] as string).map((m: { role: string }) => m.role)).toEqual(['system', 'user']);
    expect(joined.events).toEqual([]);
  });

  it('keeps other records as span events in time order with the span’s own', () => {
    const joined = applyLogRecords({}, [{ timeNs: '1500', name: 'exception', attributes: {} }], [
      row({ time_ns: '1000', body: '"starting"', severity_text: 'INFO', severity_number: 9 }),
      row({ time_ns: '2000', event_name: 'app.cache_miss', attributes: '{"key":"paris"}' }),
    ]);
    expect(joined.events).toEqual([
      { timeNs: '1000', name: 'log', attributes: { 'log.body': 'starting', 'log.severity_text': 'INFO', 'log.severity_number': 9 } },
      { timeNs: '1500', name: 'exception', attributes: {} },
      { timeNs: '2000', name: 'app.cache_miss', attributes: { key: 'paris' } },
    ]);
    expect(joined.attributes).toEqual({});
  });
});
