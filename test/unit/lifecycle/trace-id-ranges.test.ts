import { describe, expect, it } from 'vitest';
import { cutTraceIdRanges, type PrefixCount, type TraceIdRange } from '../../../src/lifecycle/trace-id-ranges.js';

/** The cut of the trace export into ranges of trace ids (src/lifecycle/trace-id-ranges.ts). */
const prefix = (p: string, rows: number): PrefixCount => ({ prefix: p, rows });

/** Which range an id falls in, compared byte by byte as the engine compares strings. */
function rangesOf(id: string, ranges: readonly TraceIdRange[]): number[] {
  const cmp = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));
  return ranges.flatMap((r, i) => ((r.from === null || cmp(id, r.from) >= 0) && (r.to === null || cmp(id, r.to) < 0) ? [i] : []));
}

describe('cutTraceIdRanges', () => {
  it('packs prefixes up to the bound, each cut at the prefix that would pass it', () => {
    const ranges = cutTraceIdRanges([prefix('00a', 600), prefix('3f1', 300), prefix('7b2', 200), prefix('c00', 900)], 1000);
    expect(ranges).toEqual([
      { from: null, to: '7b2' },
      { from: '7b2', to: 'c00' },
      { from: 'c00', to: null },
    ]);
  });

  it('keeps a prefix larger than the bound whole, in a range of its own', () => {
    expect(cutTraceIdRanges([prefix('111', 10), prefix('222', 5000), prefix('333', 10)], 1000)).toEqual([
      { from: null, to: '222' },
      { from: '222', to: '333' },
      { from: '333', to: null },
    ]);
  });

  it('is one range of every id for an empty window or one under the bound', () => {
    expect(cutTraceIdRanges([], 1000)).toEqual([{ from: null, to: null }]);
    expect(cutTraceIdRanges([prefix('abc', 999)], 1000)).toEqual([{ from: null, to: null }]);
  });

  it('puts every trace id in exactly one range, whatever its form', () => {
    const ranges = cutTraceIdRanges([prefix('0a1', 2), prefix('5e5', 2), prefix('9ff', 2), prefix('a00', 2), prefix('f3c', 2)], 3);
    expect(ranges.length).toBeGreaterThan(2);
    const ids = ['', '0', '0a0ffff', '0a1', '0a1c0ffee', '5e4f', '5e5-', '9ff', 'a00', 'a0', 'f3c0', 'fff', 'zzz', 'Ä'];
    for (const id of ids) expect(rangesOf(id, ranges)).toHaveLength(1);
  });
});
