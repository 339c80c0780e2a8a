import { describe, expect, it } from 'vitest';
import { prepareLogs } from '../../../src/ingest/write/logs-prepare.js';
import { otlpSchema } from '../../../src/ingest/otlp/otlp-schema.js';
import { lookoutTraceId } from '../../../src/spans/trace-id.js';

/** One POST /v1/logs body turned into span_logs rows, records checked one by one (logs-prepare.ts). */

const NOW = Date.UTC(2026, 10, 28, 12, 0, 0);
const NOW_NS = `${BigInt(NOW) * 1_000_000n}`;
const TRACE = '5b8efff798038103d269b633813fc60c';
const SPAN = 'eee19b7ec3c1b174';
const PROJECT = '0f6a1c2e-3b4d-4e5f-8a9b-0c1d2e3f4a5b';

const json = (records: unknown[], resource: unknown[] = []) =>
  new Uint8Array(Buffer.from(JSON.stringify({ resource_logs: [{ resource: { attributes: resource }, scope_logs: [{ scope: { name: 'genai' }, log_records: records }] }] })));

const run = (body: Uint8Array, encoding: 'json' | 'protobuf' = 'json', fixedProject: string | null = PROJECT) =>
  prepareLogs({ body, encoding, tenantId: 't1', fixedProject, nowMs: NOW });

describe('prepareLogs', () => {
  it('takes snake_case OTLP/JSON, severity names and base64 ids; time falls back to the observed time, then to now', () => {
    const result = run(
      json([
        { time_unix_nano: NOW_NS, trace_id: TRACE, span_id: SPAN, event_name: 'gen_ai.user.message', severity_number: 'SEVERITY_NUMBER_INFO', body: { kvlist_value: { values: [{ key: 'content', value: { string_value: 'hi' } }] } } },
        { observedTimeUnixNano: NOW_NS, traceId: Buffer.from(TRACE, 'hex').toString('base64'), spanId: SPAN, body: { stringValue: 'plain' } },
        { traceId: TRACE, spanId: SPAN, attributes: [{ key: 'event.name', value: { stringValue: 'gen_ai.choice' } }] },
      ]),
    );
    if (result.kind !== 'prepared') throw new Error(result.kind);
    expect([result.acceptedRecords, result.rejectedRecords, result.errorMessage]).toEqual([3, 0, '']);
    const rows = result.lines.map((l) => JSON.parse(l));
    expect(rows.map((r) => [r.trace_id, r.otel_trace_id, r.span_id, r.time_ns, r.seq, r.event_name, r.severity_number, r.body, r.scope_name])).toEqual([
      [lookoutTraceId(PROJECT, TRACE), TRACE, SPAN, NOW_NS, 0, 'gen_ai.user.message', 9, '{"content":"hi"}', 'genai'],
      [lookoutTraceId(PROJECT, TRACE), TRACE, SPAN, NOW_NS, 1, '', 0, '"plain"', 'genai'],
      [lookoutTraceId(PROJECT, TRACE), TRACE, SPAN, NOW_NS, 2, '', 0, 'null', 'genai'],
    ]);
    expect(new Set(rows.map((r) => r.record_id)).size).toBe(3);
    expect(rows[0].timestamp).toBe('2026-11-28 12:00:00.000');
    expect(result.traces).toEqual([{ tenantId: 't1', projectId: PROJECT, traceId: lookoutTraceId(PROJECT, TRACE) }]);
  });

  it('rejects bad records one by one with the reason and keeps the rest', () => {
    const old = `${BigInt(NOW - 91 * 86_400_000) * 1_000_000n}`;
    const result = run(
      json([
        { timeUnixNano: NOW_NS, traceId: TRACE, spanId: SPAN, attributes: [null] },
        { timeUnixNano: NOW_NS, traceId: '00000000000000000000000000000000', spanId: SPAN },
        { timeUnixNano: NOW_NS, traceId: 'abc', spanId: SPAN },
        { timeUnixNano: old, traceId: TRACE, spanId: SPAN },
        { timeUnixNano: NOW_NS, traceId: TRACE, spanId: SPAN, body: { stringValue: 'kept' } },
      ]),
    );
    if (result.kind !== 'prepared') throw new Error(result.kind);
    expect([result.acceptedRecords, result.rejectedRecords]).toEqual([1, 4]);
    expect(result.errorMessage).toBe(
      'rejected 4 of 5 log records: record of span eee19b7ec3c1b174: attributes[0] must be a KeyValue object, got null; ' +
        'record of span eee19b7ec3c1b174: no span context (trace_id and span_id): Lookout keeps log records only as part of the span they were emitted in; ' +
        'record of span eee19b7ec3c1b174: invalid trace_id "abc" (must be 16 bytes, 32 hex characters); ' +
        'record of span eee19b7ec3c1b174: time 2026-08-29T12:00:00.000Z is before the 90-day retention window',
    );
    expect(result.lines).toHaveLength(1);
  });

  it('decodes protobuf with the vendored schema; names the project by the resource when the request does not', () => {
    const type = otlpSchema().ExportLogsServiceRequest;
    const body = type
      .encode(
        type.fromObject({
          resourceLogs: [
            {
              resource: { attributes: [{ key: 'lookout.project_id', value: { stringValue: PROJECT.toUpperCase() } }] },
              scopeLogs: [{ logRecords: [{ timeUnixNano: NOW_NS, traceId: Buffer.from(TRACE, 'hex'), spanId: Buffer.from(SPAN, 'hex'), eventName: 'gen_ai.choice', body: { stringValue: 'x' } }] }],
            },
          ],
        }),
      )
      .finish();
    const result = run(body, 'protobuf', null);
    if (result.kind !== 'prepared') throw new Error(result.kind);
    expect(result.projects).toEqual([PROJECT]);
    expect(JSON.parse(result.lines[0])).toMatchObject({ project_id: PROJECT, event_name: 'gen_ai.choice', body: '"x"', time_ns: NOW_NS });
    expect(run(json([{ traceId: TRACE, spanId: SPAN }]), 'json', null)).toEqual({ kind: 'no_project' });
    expect(run(new Uint8Array([0x0a, 0xff, 0xff]), 'protobuf')).toMatchObject({ kind: 'undecodable', message: expect.stringContaining('ExportLogsServiceRequest') });
  });
});
