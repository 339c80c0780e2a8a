import { describe, expect, it } from 'vitest';
import { bucketDates, bucketStart, completeSeries, nextBucket } from '../../../src/analytics/views/time-buckets.js';

const d = (text: string) => new Date(text);

describe('bucketStart', () => {
  it('puts a week on its Sunday, whatever the weekday', () => {
    // 2026-11-22 is a Sunday.
    expect(bucketStart(d('2026-11-22T00:00:00Z'), 'week').toISOString()).toBe('2026-11-22T00:00:00.000Z');
    expect(bucketStart(d('2026-11-21T23:59:59Z'), 'week').toISOString()).toBe('2026-11-15T00:00:00.000Z');
    expect(bucketStart(d('2026-11-28T12:00:00Z'), 'week').toISOString()).toBe('2026-11-22T00:00:00.000Z');
    // Across a month and a year boundary.
    expect(bucketStart(d('2027-01-01T08:00:00Z'), 'week').toISOString()).toBe('2026-12-27T00:00:00.000Z');
  });

  it('puts a day on its UTC midnight and a month on its 1st', () => {
    expect(bucketStart(d('2026-03-15T23:59:59Z'), 'day').toISOString()).toBe('2026-03-15T00:00:00.000Z');
    expect(bucketStart(d('2026-03-31T23:59:59Z'), 'month').toISOString()).toBe('2026-03-01T00:00:00.000Z');
  });
});

describe('bucketDates', () => {
  it('lists every bucket overlapping the window, the partial first and last included', () => {
    const window = { start: d('2026-11-20T12:00:00Z'), endExclusive: d('2026-11-24T00:00:01Z') };
    expect(bucketDates(window, 'day')).toEqual(['2026-11-20', '2026-11-21', '2026-11-22', '2026-11-23', '2026-11-24']);
    expect(bucketDates(window, 'week')).toEqual(['2026-11-15', '2026-11-22']);
    expect(bucketDates(window, 'month')).toEqual(['2026-11-01']);
  });

  it('excludes a bucket that starts exactly at endExclusive', () => {
    expect(bucketDates({ start: d('2026-01-30T00:00:00Z'), endExclusive: d('2026-02-01T00:00:00Z') }, 'month')).toEqual(['2026-01-01']);
    expect(bucketDates({ start: d('2026-01-30T00:00:00Z'), endExclusive: d('2026-02-01T00:00:00Z') }, 'day')).toEqual(['2026-01-30', '2026-01-31']);
  });

  it('steps months of different lengths', () => {
    expect(nextBucket(d('2026-01-01T00:00:00Z'), 'month').toISOString()).toBe('2026-02-01T00:00:00.000Z');
    expect(bucketDates({ start: d('2026-01-31T00:00:00Z'), endExclusive: d('2026-04-01T00:00:00Z') }, 'month')).toEqual(['2026-01-01', '2026-02-01', '2026-03-01']);
  });
});

describe('completeSeries', () => {
  it('fills a bucket without a row with the empty value', () => {
    const rows = new Map([['2026-01-02', 5]]);
    expect(completeSeries(['2026-01-01', '2026-01-02', '2026-01-03'], rows, (v, date) => ({ date, value: v }), (date) => ({ date, value: 0 }))).toEqual([
      { date: '2026-01-01', value: 0 },
      { date: '2026-01-02', value: 5 },
      { date: '2026-01-03', value: 0 },
    ]);
  });
});
