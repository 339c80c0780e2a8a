import { afterEach, describe, expect, it } from 'vitest';
import { generalParams, modelScorecardParams, windowParams } from '../../../web/src/api/endpoints.js';
import { formatCount, formatDateTime, formatMs, formatRate, formatUsd, formatUsdColumn, parseApiDate } from '../../../web/src/format.js';
import { fromDateInput, setZoneMode, toDateInput, zonedTick } from '../../../web/src/time-zone.js';
import { bucketRange, yRange } from '../../../web/src/components/chart-scale.js';
import { readSort, sortTraces } from '../../../web/src/trace-sort.js';
import { granularitiesFor, readWindow } from '../../../web/src/time-window.js';
import { hourlyQueries, hoursOf } from '../../../web/src/api/hourly-series.js';

// The browser app's pure parts: how the window picker's URL state becomes each view's parameters,
// and how API figures are written (formatting only, never a new figure).

const now = new Date('2026-03-10T12:34:56.789Z');

describe('window picker → view parameters', () => {
  it('ends a preset at the next whole minute and looks back its hours', () => {
    const w = readWindow(new URLSearchParams('range=7d&granularity=week'), now);
    expect(w).toEqual({ range: '7d', granularity: 'week', start: '2026-03-03T12:35:00Z', endExclusive: '2026-03-10T12:35:00Z', hours: 168 });
    expect(generalParams(w)).toEqual({ view: 'general', hours: '168', endExclusive: '2026-03-10T12:35:00Z', granularity: 'week' });
    expect(windowParams('agent_scorecard', w)).toEqual({ view: 'agent_scorecard', start: '2026-03-03T12:35:00Z', endExclusive: '2026-03-10T12:35:00Z', granularity: 'week' });
    // model_scorecard's end is inclusive: the last second of the window.
    expect(modelScorecardParams(w)).toEqual({ view: 'model_scorecard', start: '2026-03-03T12:35:00Z', end: '2026-03-10T12:34:59Z' });
  });

  it('defaults to 24 h by hour, and ignores unknown values', () => {
    const w = readWindow(new URLSearchParams('range=1y&granularity=fortnight'), now);
    expect(w.range).toBe('24h');
    expect(w.granularity).toBe('day');
    expect(w.hours).toBe(24);
    expect(readWindow(new URLSearchParams(''), now).granularity).toBe('hour');
    expect(readWindow(new URLSearchParams('range=24h&granularity=day'), now).granularity).toBe('day');
  });

  it('offers hour buckets up to 48 h only, and never sends them to a preset view', () => {
    expect(granularitiesFor('2026-03-01T00:00:00Z', '2026-03-03T00:00:00Z')).toEqual(['hour', 'day', 'week', 'month']);
    expect(granularitiesFor('2026-03-01T00:00:00Z', '2026-03-03T00:00:01Z')).toEqual(['day', 'week', 'month']);
    expect(readWindow(new URLSearchParams('range=7d&granularity=hour'), now).granularity).toBe('day');
    expect(readWindow(new URLSearchParams('range=7d'), now).granularity).toBe('day');
    const custom = readWindow(new URLSearchParams('range=custom&from=2026-03-01T00:00:00Z&to=2026-03-02T12:00:00Z'), now);
    expect(custom.granularity).toBe('hour');
    expect(generalParams(custom).granularity).toBe('day');
    expect(windowParams('window', custom).granularity).toBe('day');
  });

  it('lists every hour of a window for the hourly charts, the first one partial', () => {
    const w = readWindow(new URLSearchParams('range=24h'), now);
    const hours = hoursOf(w);
    expect(hours[0]).toBe('2026-03-09T12:00:00Z');
    expect(hours[hours.length - 1]).toBe('2026-03-10T12:00:00Z');
    expect(hours).toHaveLength(25);
    const { generations, runs } = hourlyQueries(w);
    expect(generations).toMatchObject({ from: 'generation.completed', start: w.start, end_exclusive: w.endExclusive, group_by: [{ bucket: 'hour' }] });
    expect(runs).toMatchObject({ from: 'trace.processed', group_by: [{ bucket: 'hour' }] });
  });

  it('takes a custom window at whole seconds and sends the general view its length in hours, rounded up', () => {
    const w = readWindow(new URLSearchParams('range=custom&from=2026-03-01T00:00:00.500Z&to=2026-03-02T06:30:00Z'), now);
    expect(w).toMatchObject({ range: 'custom', start: '2026-03-01T00:00:00Z', endExclusive: '2026-03-02T06:30:00Z', hours: null });
    expect(generalParams(w)).toMatchObject({ hours: '31', endExclusive: '2026-03-02T06:30:00Z' });
  });

  it('falls back to 24 h when a custom window is missing or backwards', () => {
    expect(readWindow(new URLSearchParams('range=custom&from=2026-03-02T00:00:00Z&to=2026-03-01T00:00:00Z'), now).hours).toBe(24);
    expect(readWindow(new URLSearchParams('range=custom'), now).hours).toBe(24);
  });
});

describe('formatting API figures', () => {
  it('writes counts, durations, rates and dollars without changing them', () => {
    expect(formatCount(1234567)).toBe('1,234,567');
    expect(formatCount('12345')).toBe('12,345'); // large integers may arrive as numeric strings
    expect(formatCount(null)).toBe('—');
    // Durations in the unit a person reads: ms below a second, seconds (3 significant digits) below a minute.
    expect(formatMs(1425.456)).toBe('1.43 s');
    expect(formatMs(10897)).toBe('10.9 s');
    expect(formatMs(532.4)).toBe('532 ms');
    expect(formatMs(0.8123)).toBe('0.812 ms');
    expect(formatMs(999.7)).toBe('1 s');
    expect(formatMs(0)).toBe('0 ms');
    expect(formatMs(125_000)).toBe('2 min 5 s');
    expect(formatMs(3_840_000)).toBe('1 h 4 min');
    expect(formatMs(null)).toBe('—');
    expect(formatRate(0.2667)).toBe('26.67%');
    expect(formatRate(null)).toBe('—');
    // One cost format: 4 significant digits under $1, cents from $1 up.
    expect(formatUsd(0.0100303)).toBe('$0.01003');
    expect(formatUsd(0.008315)).toBe('$0.008315');
    expect(formatUsd(0.2636)).toBe('$0.2636');
    expect(formatUsd(0.5)).toBe('$0.5000');
    expect(formatUsd(0.0000687)).toBe('$0.00006870');
    expect(formatUsd(0.99996)).toBe('$1.000');
    expect(formatUsd(1.5)).toBe('$1.50');
    expect(formatUsd(1234.5)).toBe('$1,234.50');
    expect(formatUsd(0)).toBe('$0.00');
    expect(formatUsd(null)).toBe('—');
    // In a table column: fixed four decimals so the digits line up.
    expect(formatUsdColumn(0.7253)).toBe('$0.7253');
    expect(formatUsdColumn(0.0002061)).toBe('$0.0002');
    expect(formatUsdColumn(12.5)).toBe('$12.5000');
    expect(formatUsdColumn(0.00001)).toBe('<$0.0001');
    expect(formatUsdColumn(0)).toBe('$0.0000');
    expect(formatUsdColumn(null)).toBe('—');
  });

  it('reads the date forms the API uses', () => {
    expect(parseApiDate('2026-03-01')?.toISOString()).toBe('2026-03-01T00:00:00.000Z');
    expect(parseApiDate('2026-03-01 10:11:12.345')?.toISOString()).toBe('2026-03-01T10:11:12.345Z');
    expect(parseApiDate('2026-03-01T10:11:12Z')?.toISOString()).toBe('2026-03-01T10:11:12.000Z');
    expect(parseApiDate('not a date')).toBeNull();
  });
});

describe('one time zone rule', () => {
  const savedTz = process.env.TZ;
  afterEach(() => {
    setZoneMode('utc');
    process.env.TZ = savedTz;
  });

  it('writes and reads dates in UTC by default, in the browser zone when switched (America/Los_Angeles)', () => {
    process.env.TZ = 'America/Los_Angeles';
    expect(formatDateTime('2026-11-28 08:05:09.123')).toBe('2026-11-28 08:05:09 UTC');
    expect(toDateInput('2026-11-28T08:05:00Z')).toBe('2026-11-28T08:05');
    expect(fromDateInput('2026-11-28T08:05')?.toISOString()).toBe('2026-11-28T08:05:00.000Z');
    expect(zonedTick(new Date('2026-11-28T15:00:00Z'), 3600)).toBe('15:00');
    setZoneMode('local');
    expect(formatDateTime('2026-11-28 08:05:09.123')).toBe('2026-11-28 00:05:09 PST');
    expect(formatDateTime('2026-07-01T12:00:00Z')).toBe('2026-07-01 05:00:00 PDT');
    expect(toDateInput('2026-11-28T08:05:00Z')).toBe('2026-11-28T00:05');
    expect(fromDateInput('2026-11-28T00:05')?.toISOString()).toBe('2026-11-28T08:05:00.000Z');
    expect(zonedTick(new Date('2026-11-28T15:00:00Z'), 3600)).toBe('07:00');
    expect(zonedTick(new Date('2026-11-28T08:00:00Z'), 3600)).toBe('11-28');
    expect(zonedTick(new Date('2026-11-28T08:00:00Z'), 86400)).toBe('11-28');
    expect(fromDateInput('not a date')).toBeNull();
  });
});

describe('chart scales', () => {
  it('starts at 0 and keeps an off-scale p99 from flattening p50 and p95', () => {
    const r = yRange([
      { label: 'p50', values: [40, 55, null] },
      { label: 'p95', values: [90, 100, null] },
      { label: 'p99', values: [120, 27025, null], offScale: true },
    ]);
    expect(r.max).toBeCloseTo(108);
    expect(r.clipped).toEqual([{ label: 'p99', max: 27025 }]);
    expect(yRange([{ label: 'a', values: [null, null] }]).max).toBe(1);
    expect(yRange([{ label: 'a', values: [0, 0] }]).max).toBe(1);
    // Only offScale series: they set the scale themselves rather than leave it empty.
    expect(yRange([{ label: 'p99', values: [10], offScale: true }]).max).toBeCloseTo(10.8);
    // An hour whose p95 is one near-zero-duration call: an outlier (over 4x the 90th percentile) stays above the axis.
    const percentiles = [
      { label: 'p50', values: [40, 45, 50, 55, 60, 28000] },
      { label: 'p95', values: [90, 95, 100, 105, 110, 30000] },
    ];
    const hourly = yRange(percentiles, { trimOutliers: true });
    expect(hourly.max).toBeCloseTo(110 * 1.08);
    expect(hourly.clipped).toEqual([
      { label: 'p50', max: 28000 },
      { label: 'p95', max: 30000 },
    ]);
    // Counts keep their spikes on the axis; a steady rise is no outlier either.
    expect(yRange(percentiles).max).toBeCloseTo(30000 * 1.08);
    expect(yRange([{ label: 'calls', values: [1, 1, 1, 1, 1, 1, 1, 1, 1, 50] }]).max).toBeCloseTo(54);
    expect(yRange([{ label: 'runs', values: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10] }], { trimOutliers: true }).max).toBeCloseTo(10.8);
  });

  it('turns a bucket into the traces window it covers, cut to the page window', () => {
    const xs = ['2026-03-09T12:00:00Z', '2026-03-09T13:00:00Z', '2026-03-09T14:00:00Z'].map((d) => Date.parse(d) / 1000);
    const window = { start: '2026-03-09T12:35:00Z', endExclusive: '2026-03-09T14:35:00Z' };
    expect(bucketRange(xs, 0, window)).toEqual({ start: '2026-03-09T12:35:00Z', endExclusive: '2026-03-09T13:00:00Z' });
    expect(bucketRange(xs, 1, window)).toEqual({ start: '2026-03-09T13:00:00Z', endExclusive: '2026-03-09T14:00:00Z' });
    expect(bucketRange(xs, 2, window)).toEqual({ start: '2026-03-09T14:00:00Z', endExclusive: '2026-03-09T14:35:00Z' });
    expect(bucketRange(xs, 3, window)).toBeNull();
  });
});

describe('trace list sort', () => {
  it('orders the page by a column, missing values last, ties in the API order', () => {
    const rows = [
      { id: 'a', total_duration_ms: 30, estimated_cost_usd: null },
      { id: 'b', total_duration_ms: 10, estimated_cost_usd: 0.5 },
      { id: 'c', total_duration_ms: 30, estimated_cost_usd: 0.1 },
    ];
    expect(sortTraces(rows, readSort(new URLSearchParams('sort=duration&dir=asc'))).map((r) => r.id)).toEqual(['b', 'a', 'c']);
    expect(sortTraces(rows, readSort(new URLSearchParams('sort=duration'))).map((r) => r.id)).toEqual(['a', 'c', 'b']);
    expect(sortTraces(rows, readSort(new URLSearchParams('sort=cost'))).map((r) => r.id)).toEqual(['b', 'c', 'a']);
    expect(sortTraces(rows, readSort(new URLSearchParams('sort=cost&dir=asc'))).map((r) => r.id)).toEqual(['c', 'b', 'a']);
    expect(readSort(new URLSearchParams('sort=bogus'))).toEqual({ key: 'timestamp', direction: 'desc' });
  });
});
