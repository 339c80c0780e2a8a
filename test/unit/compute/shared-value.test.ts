import { describe, expect, it } from 'vitest';
import { fromSharedValue, shareValue } from '../../../src/platform/compute/shared-value.js';
import { youngGenerationMb } from '../../../src/platform/compute/compute-pool.js';

describe('shared values for the compute pool', () => {
  it('gives one reference per object and a new one per new object', () => {
    const a = { prices: [1, 2] };
    const b = { prices: [1, 2] };
    expect(shareValue(a)).toBe(shareValue(a));
    expect(shareValue(b).id).not.toBe(shareValue(a).id);
  });

  it('derives once per version, again when the version changes back and forth', () => {
    const a = { n: 1 };
    const b = { n: 2 };
    const seen: number[] = [];
    const derive = (value: unknown) => {
      seen.push((value as { n: number }).n);
      return (value as { n: number }).n * 10;
    };
    expect(fromSharedValue(shareValue(a), derive)).toBe(10);
    expect(fromSharedValue(shareValue(a), derive)).toBe(10);
    expect(fromSharedValue(shareValue(b), derive)).toBe(20);
    expect(fromSharedValue(shareValue(a), derive)).toBe(10);
    expect(seen).toEqual([1, 2, 1]);
  });

  it('hands a worker an exact structured copy, not the object itself', () => {
    const value = { model: 'gpt-4o', tiers: [{ upTo: 128_000, usd: 2.5 }], note: 'line\u2028sep \ud800' };
    const copy = fromSharedValue(shareValue(value), (v) => v);
    expect(copy).toEqual(value);
    expect(copy).not.toBe(value);
  });
});

describe('worker young generation', () => {
  it('is 96 MB uncapped for a worker taking both lines, V8\'s 48 MB for workers keeping to one, and stays within a quarter of a heap cap (at least 48 MB)', () => {
    expect(youngGenerationMb(0)).toBe(96);
    expect(youngGenerationMb(48)).toBe(48);
    expect(youngGenerationMb(320)).toBe(80);
    expect(youngGenerationMb(4096)).toBe(96);
    // Workers that keep to one line take V8's default, capped or not.
    expect(youngGenerationMb(0, 2)).toBe(48);
    expect(youngGenerationMb(4096, 3)).toBe(48);
  });
});
