import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../../src/platform/http/errors.js';
import {
  nowExclusive,
  parseGeneralParams,
  parseModelScorecardParams,
  parseRoiParams,
  parseViewName,
  parseWindowedParams,
} from '../../../src/analytics/views/view-params.js';

const now = new Date('2026-11-22T08:30:15.250Z');

function detailOf(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    return (error as ValidationError).detail;
  }
  throw new Error('expected a ValidationError');
}

describe('view', () => {
  it('defaults to general and names the parameter when unknown', () => {
    expect(parseViewName(undefined)).toBe('general');
    expect(parseViewName('')).toBe('general');
    expect(parseViewName('roi')).toBe('roi');
    expect(detailOf(() => parseViewName('Roi'))).toMatch(/^view: must be one of/);
    expect(detailOf(() => parseViewName(['roi']))).toMatch(/^view: /);
  });
});

describe('windowed views', () => {
  it('take endExclusive or end_exclusive, and the day granularity by default', () => {
    const a = parseWindowedParams({ start: '2026-11-01T00:00:00Z', endExclusive: '2026-11-08T00:00:00Z' });
    const b = parseWindowedParams({ start: '2026-11-01T00:00:00Z', end_exclusive: '2026-11-08T00:00:00Z' });
    expect(a).toEqual(b);
    expect(a.granularity).toBe('day');
    expect(a.window.endExclusive.toISOString()).toBe('2026-11-08T00:00:00.000Z');
  });

  it('accept a zero fraction and a +00:00 offset as UTC whole seconds', () => {
    const p = parseWindowedParams({ start: '2026-11-01T00:00:00.000Z', endExclusive: '2026-11-08T00:00:00+00:00' });
    expect(p.window.start.toISOString()).toBe('2026-11-01T00:00:00.000Z');
  });

  it('allow exactly 90 days and refuse one second more', () => {
    expect(parseWindowedParams({ start: '2026-08-01T00:00:00Z', endExclusive: '2026-10-30T00:00:00Z' }).window).toBeDefined();
    expect(detailOf(() => parseWindowedParams({ start: '2026-08-01T00:00:00Z', endExclusive: '2026-10-30T00:00:01Z' }))).toBe('endExclusive: the window from start exceeds 90 days');
  });
});

describe('general', () => {
  it('looks back `hours` from now (the current second included) or from endExclusive', () => {
    const p = parseGeneralParams({}, now);
    expect(p.hours).toBe(24);
    expect(p.window.endExclusive.toISOString()).toBe('2026-11-22T08:30:16.000Z');
    expect(p.window.start.toISOString()).toBe('2026-11-21T08:30:16.000Z');
    const q = parseGeneralParams({ hours: '48', endExclusive: '2026-11-01T00:00:00Z', granularity: 'week' }, now);
    expect(q.window.start.toISOString()).toBe('2026-10-30T00:00:00.000Z');
    expect(q.granularity).toBe('week');
    expect(parseGeneralParams({ hours: 2160 }, now).hours).toBe(2160);
  });
});

describe('model_scorecard', () => {
  it('turns an inclusive end into end + 1 s, and no end into now', () => {
    expect(parseModelScorecardParams({ start: '2026-11-01T00:00:00Z', end: '2026-11-07T23:59:59Z' }, now).window.endExclusive.toISOString()).toBe('2026-11-08T00:00:00.000Z');
    expect(parseModelScorecardParams({ start: '2026-11-01T00:00:00Z' }, now).window.endExclusive).toEqual(nowExclusive(now));
    expect(detailOf(() => parseModelScorecardParams({ start: '2026-01-01T00:00:00Z' }, now))).toBe('start: must be within the last 90 days when no end is given');
  });
});

describe('roi', () => {
  it('covers the 90 days up to now', () => {
    const p = parseRoiParams({ granularity: 'month' }, now);
    expect(p.window.endExclusive.getTime() - p.window.start.getTime()).toBe(90 * 86_400_000);
    expect(p.granularity).toBe('month');
  });
});
