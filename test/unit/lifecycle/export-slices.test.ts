import { describe, expect, it } from 'vitest';
import { cutSlices, type MinuteCount } from '../../../src/analytics/query/export-slices.js';

/** The cut of an export's window into slices (src/analytics/query/export-slices.ts). */
const window = { start: new Date('2026-11-01T00:00:00Z'), endExclusive: new Date('2026-11-04T00:00:00Z') };
const iso = (date: Date) => date.toISOString();
const bounds = (slices: { start: Date; endExclusive: Date }[]) => slices.map((s) => [iso(s.start), iso(s.endExclusive)]);
const minute = (at: string, rows: number): MinuteCount => ({ minute: at, rows });

describe('cutSlices', () => {
  it('covers the window exactly with consecutive slices', () => {
    const minutes = [minute('2026-11-01T01:00:00Z', 600), minute('2026-11-01T02:00:00Z', 600), minute('2026-11-01T03:00:00Z', 600)];
    const slices = cutSlices(window, minutes, 1000);
    expect(iso(slices[0].start)).toBe(iso(window.start));
    expect(iso(slices.at(-1)!.endExclusive)).toBe(iso(window.endExclusive));
    for (let i = 1; i < slices.length; i++) expect(slices[i].start.getTime()).toBe(slices[i - 1].endExclusive.getTime());
    expect(bounds(slices)).toEqual([
      ['2026-11-01T00:00:00.000Z', '2026-11-01T02:00:00.000Z'],
      ['2026-11-01T02:00:00.000Z', '2026-11-01T03:00:00.000Z'],
      ['2026-11-01T03:00:00.000Z', '2026-11-04T00:00:00.000Z'],
    ]);
  });

  it('packs minutes up to the bound, and keeps a minute larger than the bound whole', () => {
    const minutes = [minute('2026-11-01T01:00:00Z', 300), minute('2026-11-01T01:01:00Z', 300), minute('2026-11-01T01:02:00Z', 5000), minute('2026-11-01T01:03:00Z', 1)];
    expect(bounds(cutSlices(window, minutes, 1000))).toEqual([
      ['2026-11-01T00:00:00.000Z', '2026-11-01T01:02:00.000Z'],
      ['2026-11-01T01:02:00.000Z', '2026-11-01T01:03:00.000Z'],
      ['2026-11-01T01:03:00.000Z', '2026-11-04T00:00:00.000Z'],
    ]);
  });

  it('never lets a slice with rows cross a UTC midnight, cutting at the midnight', () => {
    const minutes = [minute('2026-11-01T23:59:00Z', 1), minute('2026-11-03T00:05:00Z', 1)];
    expect(bounds(cutSlices(window, minutes, 1000))).toEqual([
      ['2026-11-01T00:00:00.000Z', '2026-11-03T00:00:00.000Z'],
      ['2026-11-03T00:00:00.000Z', '2026-11-04T00:00:00.000Z'],
    ]);
  });

  it('answers an empty window, or one whose rows fit, as the one window', () => {
    expect(bounds(cutSlices(window, [], 1000))).toEqual([[iso(window.start), iso(window.endExclusive)]]);
    expect(bounds(cutSlices(window, [minute('2026-11-01T00:00:00Z', 999)], 1000))).toEqual([[iso(window.start), iso(window.endExclusive)]]);
  });

  it('starts the first slice at the window even when the window starts mid-day', () => {
    const midDay = { start: new Date('2026-11-01T12:00:00Z'), endExclusive: new Date('2026-11-02T12:00:00Z') };
    const minutes = [minute('2026-11-01T12:00:00Z', 10), minute('2026-11-02T00:00:00Z', 10)];
    expect(bounds(cutSlices(midDay, minutes, 1000))).toEqual([
      ['2026-11-01T12:00:00.000Z', '2026-11-02T00:00:00.000Z'],
      ['2026-11-02T00:00:00.000Z', '2026-11-02T12:00:00.000Z'],
    ]);
  });
});
