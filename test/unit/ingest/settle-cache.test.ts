import { describe, expect, it } from 'vitest';
import type { TraceNote } from '../../../src/ingest/write/ingest-writer.js';
import { SettleCache, type CachedTrace } from '../../../src/ingest/settle/settle-cache.js';
import type { PackedToolRow } from '../../../src/ingest/write/packed-tool-rows.js';
import type { Claim, RecordedRow } from '../../../src/ingest/settle/settle-queue.js';

/**
 * The memory path of settling is used only when this process provably holds every span of the
 * trace (src/ingest/settle/settle-cache.ts); every other case must send the settler to ClickHouse.
 */

const key = { tenantId: 't', projectId: 'p', traceId: 'tr' };
const origin = { actor: 'sdk', surface: 'otlp', user_id: '', api_key_id: 'k' };
// The writer's note: the spans it stored as `spans` rows (JSON lines), and how many the trace had before.
const note = (ids: string[], storedBefore: string[] = []): TraceNote => ({
  ...key, otelTraceId: 'o', hasRoot: true, origin, spanRange: [0, ids.length], toolRows: [],
  spanIds: ids, spanLines: ids.map((id) => Buffer.from(`${JSON.stringify({ span_id: id })}\n`)), storedBeforeCount: storedBefore.length,
});
const row = (rowId: string, seq: number): RecordedRow => ({ ...key, rowId, seq: String(seq) });
const claim = (rowId: string, seq: number): Claim => ({ ...row(rowId, seq), hasRoot: true, origin, storedSinceMs: null });
/** The lines of chunks of whole lines (what the cache holds a trace's rows in). */
const linesOf = (chunks: Uint8Array[]) => chunks.flatMap((chunk) => Buffer.from(chunk).toString().split('\n').filter(Boolean));
/** The trace held whole (a read-back reason fails the test). */
const whole = (cache: SettleCache, c: Claim): CachedTrace => {
  const trace = cache.take(c);
  if ('readBack' in trace) throw new Error(`not held: ${trace.readBack}`);
  return trace;
};
/** The held trace's span ids, sorted, or why it is read back. */
const held = (cache: SettleCache, c: Claim) => {
  const trace = cache.take(c);
  if ('readBack' in trace) return trace;
  const ids = linesOf(trace.rows).map((line) => (JSON.parse(line) as { span_id: string }).span_id);
  expect(trace.spans).toBe(ids.length);
  return ids.sort();
};

/** With the stored-trace registry: the flush's registration count, and the registry's count when the flush recorded. */
const registered = (n: TraceNote, seq: number): TraceNote => ({ ...n, registeredSeq: seq });
const rowAt = (rowId: string, seq: number, registrations: number): RecordedRow => ({ ...row(rowId, seq), registrations });

describe('settle cache', () => {
  it('with the registry: holds a trace while every registration was its own', () => {
    const cache = new SettleCache(1000);
    cache.add([registered(note(['a']), 1)], [rowAt('1', 1, 1)]);
    cache.add([registered(note(['b'], ['a']), 2), registered(note(['c'], ['a']), 2)], [rowAt('1', 2, 2)]);
    expect(held(cache, claim('1', 2))).toEqual(['a', 'b', 'c']);
  });

  it('with the registry: not when another process registered the trace between this flush\'s upsert and its record', () => {
    // Its spans may still be on their way, or settled in a queue row of their own already.
    const cache = new SettleCache(1000);
    cache.add([registered(note(['a']), 1)], [rowAt('1', 1, 2)]);
    expect(held(cache, claim('1', 1))).toEqual({ readBack: 'other_registrations' });
  });

  it('with the registry: not when another process registered the trace between two of this process\'s flushes', () => {
    const cache = new SettleCache(1000);
    cache.add([registered(note(['a']), 1)], [rowAt('1', 1, 1)]);
    // Registration 2 was another process's (its spans not yet visible: the count read 1).
    cache.add([registered(note(['b'], ['a']), 3)], [rowAt('1', 2, 3)]);
    expect(held(cache, claim('1', 2))).toEqual({ readBack: 'other_registrations' });
  });

  it('with the registry: not when the entry\'s earlier flushes carried no registration count', () => {
    // The first flush's registration went uncounted: whatever came between is unknown.
    const cache = new SettleCache(1000);
    cache.add([note(['a'])], [row('1', 1)]);
    cache.add([registered(note(['b'], ['a']), 5)], [rowAt('1', 2, 5)]);
    expect(held(cache, claim('1', 2))).toEqual({ readBack: 'other_registrations' });
    // The entry's first flush may start the chain with its count, and two notes of it share it.
    const fresh = new SettleCache(1000);
    fresh.add([registered(note(['a']), 1), registered(note(['b']), 1)], [rowAt('1', 1, 1)]);
    expect(held(fresh, claim('1', 1))).toEqual(['a', 'b']);
  });

  it('holds a trace whose every upsert was its own', () => {
    const cache = new SettleCache(1000);
    cache.add([note(['a', 'b'])], [row('1', 1)]);
    cache.add([note(['c'], ['a', 'b'])], [row('1', 2)]);
    expect(held(cache, claim('1', 2))).toEqual(['a', 'b', 'c']);
    // Two requests of one flush share one upsert.
    cache.add([note(['d'], ['a', 'b', 'c']), note(['e'], ['a', 'b', 'c'])], [row('1', 3)]);
    expect(held(cache, claim('1', 3))).toEqual(['a', 'b', 'c', 'd', 'e']);
  });

  it('keeps the copy it wrote of a span re-sent with other content: the re-sent copy is a duplicate, never stored', () => {
    const cache = new SettleCache(1000);
    const saying = (n: TraceNote, content: string): TraceNote => ({ ...n, spanLines: n.spanIds!.map((id) => Buffer.from(`${JSON.stringify({ span_id: id, content })}\n`)) });
    cache.add([saying(note(['a']), 'first')], [row('1', 1)]);
    cache.add([saying(note(['a', 'b'], ['a']), 'second')], [row('1', 2)]);
    const contents = linesOf(whole(cache, claim('1', 2)).rows).map((line) => JSON.parse(line) as { span_id: string; content: string });
    expect(contents?.sort((x, y) => x.span_id.localeCompare(y.span_id))).toEqual([{ span_id: 'a', content: 'first' }, { span_id: 'b', content: 'second' }]);
  });

  it('keeps the tool.called row it wrote of a span re-sent in another tree context: the re-sent row was never written', () => {
    const cache = new SettleCache(1000);
    const tool = (agent: string): PackedToolRow => ['t', 'p', '2026-11-24 00:00:00.000', 'sdk', 'otlp', '', 'k', 'tr', 'a', 'search', agent, 5, 0, 0];
    cache.add([{ ...note(['a']), toolRows: [tool('svc')] }], [row('1', 1)]);
    cache.add([{ ...note(['a', 'b'], ['a']), toolRows: [tool('planner')] }], [row('1', 2)]);
    expect(whole(cache, claim('1', 2)).toolRows.get('a')?.[10]).toBe('svc');
  });

  it('holds the generation.completed lines it wrote, the first of each call, and charges their bytes', () => {
    const cache = new SettleCache(1000);
    const gen = (n: TraceNote, ids: string[], v: number): TraceNote => ({ ...n, generationIds: ids, generationLines: ids.map((id) => Buffer.from(`["${id}",${v}]\n`)) });
    cache.add([gen(note(['a', 'b']), ['a'], 1)], [row('1', 1)]);
    const bytesOfSpans = new SettleCache(1000);
    bytesOfSpans.add([note(['a', 'b'])], [row('1', 1)]);
    expect(cache.bytes).toBeGreaterThan(bytesOfSpans.bytes);
    cache.add([gen(note(['c'], ['a', 'b']), ['a', 'c'], 2)], [row('1', 2)]);
    const lines = linesOf(whole(cache, claim('1', 2)).generationRows);
    expect(lines?.sort()).toEqual(['["a",1]', '["c",2]']);
    // Given up with the trace: nothing of it is charged any more.
    cache.add([{ ...note(['d'], ['a', 'b', 'c', 'x']) }], [row('1', 3)]);
    expect(cache.take(claim('1', 3))).toEqual({ readBack: 'stored_before' });
    expect(cache.bytes).toBe(0);
  });

  it('holds copies of the lines, never views that would keep a whole request body alive', () => {
    const cache = new SettleCache(1000);
    // The note's lines are views into one large body, as the writer's are into a request's insert body.
    const body = new Uint8Array(1 << 20);
    const lines = ['a', 'b'].map((id, i) => {
      const text = Buffer.from(`${JSON.stringify({ span_id: id })}\n`);
      body.set(text, i * 100);
      return body.subarray(i * 100, i * 100 + text.byteLength);
    });
    cache.add([{ ...note(['a', 'b']), spanLines: lines }], [row('1', 1)]);
    const rows = whole(cache, claim('1', 1)).rows;
    expect(linesOf(rows)).toEqual(lines.map((line) => Buffer.from(line).toString().trim()));
    for (const chunk of rows) {
      expect(chunk.buffer).not.toBe(body.buffer);
      expect(chunk.buffer.byteLength).toBe(lines[0].byteLength + lines[1].byteLength);
    }
    // Lines back to back in the body (as the writer encodes a note's spans) are copied at once, still into a buffer of their own.
    const adjacent = new SettleCache(1000);
    const texts = ['c', 'd'].map((id) => Buffer.from(`${JSON.stringify({ span_id: id })}\n`));
    body.set(texts[0], 500);
    body.set(texts[1], 500 + texts[0].byteLength);
    const views = [body.subarray(500, 500 + texts[0].byteLength), body.subarray(500 + texts[0].byteLength, 500 + texts[0].byteLength + texts[1].byteLength)];
    adjacent.add([{ ...note(['c', 'd']), spanLines: views }], [row('1', 1)]);
    const chunks = whole(adjacent, claim('1', 1)).rows;
    expect(linesOf(chunks)).toEqual(['{"span_id":"c"}', '{"span_id":"d"}']);
    expect(chunks[0].buffer).not.toBe(body.buffer);
    expect(chunks[0].buffer.byteLength).toBe(texts[0].byteLength + texts[1].byteLength);
  });

  it('does not when another process recorded spans of the trace', () => {
    const cache = new SettleCache(1000);
    cache.add([note(['a'])], [row('1', 1)]);
    // seq 2 was another process's upsert.
    cache.add([note(['c'], ['a', 'b'])], [row('1', 3)]);
    expect(held(cache, claim('1', 3))).toEqual({ readBack: 'stored_before' });
  });

  it('does not when the claim is of a later upsert than it saw', () => {
    const cache = new SettleCache(1000);
    cache.add([note(['a'])], [row('1', 1)]);
    expect(held(cache, claim('1', 2))).toEqual({ readBack: 'other_upserts' });
  });

  it('does not when spans were stored before its first write (a late span after a settle)', () => {
    const cache = new SettleCache(1000);
    cache.add([note(['late'], ['a', 'b'])], [row('7', 1)]);
    expect(held(cache, claim('7', 1))).toEqual({ readBack: 'stored_before' });
  });

  it('starts over for a new queue row, and forgets a finished one', () => {
    const cache = new SettleCache(1000);
    cache.add([note(['a'])], [row('1', 1)]);
    cache.finished([key]);
    expect(held(cache, claim('1', 1))).toEqual({ readBack: 'not_held' });
    expect(cache.keys()).toEqual([]);
    cache.add([note(['b'])], [row('2', 1)]);
    expect(held(cache, claim('2', 1))).toEqual(['b']);
    expect(cache.keys()).toEqual([key]);
  });

  it('gives up a trace past its span budget', () => {
    const cache = new SettleCache(3);
    cache.add([note(['a', 'b'])], [row('1', 1)]);
    cache.add([note(['c', 'd'], ['a', 'b'])], [row('1', 2)]);
    expect(held(cache, claim('1', 2))).toEqual({ readBack: 'span_bound' });
  });

  it('gives up a trace past its per-trace span bound (one copy to a worker stays short)', () => {
    const cache = new SettleCache(1000, 3);
    cache.add([note(['a', 'b'])], [row('1', 1)]);
    expect(held(cache, claim('1', 1))).toEqual(['a', 'b']);
    cache.add([note(['c', 'd'], ['a', 'b'])], [row('1', 2)]);
    expect(held(cache, claim('1', 2))).toEqual({ readBack: 'trace_span_bound' });
  });
});

describe('settle cache byte bound (SETTLE_CACHE_MAX_BYTES)', () => {
  it('gives up a trace whose spans would take it past its bytes, and counts what it holds', () => {
    const line = (id: string) => Buffer.from(`${JSON.stringify({ span_id: id, attributes: 'x'.repeat(1000) })}\n`);
    const big = (ids: string[], storedBefore: string[] = []): TraceNote => ({ ...note(ids, storedBefore), spanLines: ids.map(line) });
    const cache = new SettleCache(1000, 2000, Date.now, 3000);
    cache.add([big(['a', 'b'])], [row('1', 1)]);
    expect(held(cache, claim('1', 1))).toEqual(['a', 'b']);
    expect(cache.bytes).toBeGreaterThan(2000);
    expect(cache.bytes).toBeLessThanOrEqual(3000);
    cache.add([big(['c'], ['a', 'b'])], [row('1', 2)]);
    expect(held(cache, claim('1', 2))).toEqual({ readBack: 'byte_bound' });
    // Forgetting the trace gave its bytes back: another trace fits again.
    expect(cache.bytes).toBe(0);
    cache.add([{ ...big(['z']), traceId: 'other' }], [{ ...row('2', 1), traceId: 'other' }]);
    expect(whole(cache, { ...claim('2', 1), traceId: 'other' }).spans).toBe(1);
  });
});
