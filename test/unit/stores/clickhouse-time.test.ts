import { describe, expect, it } from 'vitest';
import { dateTime64, msToDateTime64, nsToDateTime64 } from '../../../src/platform/clickhouse/clickhouse-time.js';

/**
 * msToDateTime64 builds the time of day by arithmetic (ingestion converts every span's start); it
 * must give exactly the text of the toISOString-based dateTime64, across days and at the edges.
 */
const viaIso = (ms: number) => dateTime64(new Date(ms));

describe('msToDateTime64', () => {
  it('matches toISOString at day, leap-day, year and range edges, and alternating days', () => {
    const edges = [
      0, 1, 999, 1000, 59_999, 3_599_999, 86_399_999, 86_400_000, 86_400_001,
      Date.UTC(2024, 1, 29, 23, 59, 59, 999), Date.UTC(2024, 2, 1), Date.UTC(2026, 11, 31, 23, 59, 59, 999), Date.UTC(2027, 0, 1),
      253_402_300_799_999, // the last millisecond of year 9999
      253_402_300_800_000, // year 10000: toISOString's own text
      -1, -86_400_001, 1.5, // before 1970 or fractional: toISOString's own text
    ];
    for (const ms of edges) expect(msToDateTime64(ms), String(ms)).toBe(viaIso(ms));
    // Alternating between two days, so the cached day text is replaced each time.
    for (let i = 0; i < 50; i++) {
      const ms = Date.UTC(2026, 10, 24, 12) + (i % 2) * 86_400_000 + i * 7919;
      expect(msToDateTime64(ms)).toBe(viaIso(ms));
    }
    // Reproducible spread over 1970..9999 (a 32-bit LCG, scaled).
    let seed = 12345;
    for (let i = 0; i < 20_000; i++) {
      seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
      const ms = Math.floor((seed / 2 ** 32) * 253_402_300_800_000);
      expect(msToDateTime64(ms), String(ms)).toBe(viaIso(ms));
    }
  });

  it('converts epoch nanoseconds by their millisecond part', () => {
    expect(nsToDateTime64('1795511999568123456')).toBe('2026-11-24 09:19:59.568');
    expect(nsToDateTime64('999999')).toBe('1970-01-01 00:00:00.000');
  });
});
