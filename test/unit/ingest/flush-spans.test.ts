import { describe, expect, it } from 'vitest';
import { emptyEncodedRows, spanKeyIn, type EncodedRows } from '../../../src/ingest/write/encoded-rows.js';
import { admitRequest, newFlushSpans, type FlushTrace } from '../../../src/ingest/write/flush-spans.js';
import { traceKeyString } from '../../../src/spans/stored-spans.js';

/**
 * The spans a flush holds for the settler must be the copies it writes: a summary from memory and
 * one from a read-back of ClickHouse agree only then.
 */

const trace = { tenantId: 't', projectId: 'p', traceId: 'tr' };
const traceKey = traceKeyString(trace);

/** `spans` rows of one trace: [span id, line text] in request order. */
function spanRows(lines: [string, string][]): EncodedRows {
  const body = Buffer.from(lines.map(([, text]) => `${text}\n`).join(''));
  const ends = new Uint32Array(lines.length);
  let at = 0;
  lines.forEach(([, text], i) => (ends[i] = at += Buffer.byteLength(text) + 1));
  return { keys: lines.map(([id]) => spanKeyIn(traceKey, id)), body: new Uint8Array(body), ends };
}

const request = (lines: [string, string][]) => {
  const t: FlushTrace = { ...trace, otelTraceId: 'o', spanRange: [0, lines.length], toolRows: [] };
  return { rows: { ...emptyEncodedRows(), spans: spanRows(lines) }, traces: [t] };
};
const text = (lines?: Uint8Array[]) => (lines ?? []).map((l) => Buffer.from(l).toString().trim());

describe('admitRequest', () => {
  it('holds the first copy of a span sent twice in a flush (the one written), not the repeat', () => {
    const flush = newFlushSpans(new Set(), new Map(), Infinity);
    const first = request([
      ['a', '{"span_id":"a","v":1}'],
      ['b', '{"span_id":"b"}'],
      ['a', '{"span_id":"a","v":2}'],
    ]);
    const admitted = admitRequest(flush, first);
    expect(admitted.result).toMatchObject({ written: 2, duplicates: 1 });
    expect(admitted.skipped).toEqual([2]);
    expect(first.traces[0].spanIds).toEqual(['a', 'b']);
    expect(text(first.traces[0].spanLines)).toEqual(['{"span_id":"a","v":1}', '{"span_id":"b"}']);
    // A second request of the same flush repeating it: nothing of it is held or written.
    const second = request([['a', '{"span_id":"a","v":3}']]);
    expect(admitRequest(flush, second)).toMatchObject({ result: { written: 0, duplicates: 1 }, skipped: [0] });
    expect(second.traces[0].spanIds).toEqual([]);
  });

  it('holds a copy of a span stored before the flush (the settle cache counts it toward what it holds)', () => {
    const flush = newFlushSpans(new Set([spanKeyIn(traceKey, 'a')]), new Map([[traceKey, 1]]), Infinity);
    const resent = request([['a', '{"span_id":"a"}']]);
    expect(admitRequest(flush, resent)).toMatchObject({ result: { written: 0, duplicates: 1 }, skipped: [0] });
    expect(resent.traces[0].spanIds).toEqual(['a']);
  });

  it('holds the generation.completed lines of the spans the request stores, the first of each, never those of a duplicate', () => {
    const stored = spanKeyIn(traceKey, 'c');
    const flush = newFlushSpans(new Set([stored]), new Map([[traceKey, 1]]), Infinity);
    const sent = request([
      ['a', '{"span_id":"a"}'],
      ['b', '{"span_id":"b"}'],
      ['c', '{"span_id":"c"}'],
    ]);
    // Rows for a, a again (a second row of one call is never written), and c (stored before: its row not written now).
    sent.rows.generations = spanRows([
      ['a', '["gen a",1]'],
      ['a', '["gen a",2]'],
      ['c', '["gen c"]'],
    ]);
    sent.traces[0].generationRange = [0, 3];
    admitRequest(flush, sent);
    expect(sent.traces[0].generationIds).toEqual(['a']);
    expect(text(sent.traces[0].generationLines)).toEqual(['["gen a",1]']);
  });
});
