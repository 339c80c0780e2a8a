/**
 * The window picker's state, kept in the page's query string (range, from, to, granularity), and
 * its translation into each analytics view's parameters (SPEC.md "Project analytics: preset views").
 */
export type RangeName = '24h' | '7d' | '30d' | 'custom';
export type Granularity = 'day' | 'week' | 'month';

export const RANGES: { name: RangeName; label: string; hours: number | null }[] = [
  { name: '24h', label: '24 h', hours: 24 },
  { name: '7d', label: '7 d', hours: 24 * 7 },
  { name: '30d', label: '30 d', hours: 24 * 30 },
  { name: 'custom', label: 'Custom', hours: null },
];

export const GRANULARITIES: Granularity[] = ['day', 'week', 'month'];

export interface WindowSelection {
  range: RangeName;
  granularity: Granularity;
  /** Inclusive start and exclusive end, whole seconds, ISO 8601 UTC. */
  start: string;
  endExclusive: string;
  hours: number | null;
}

/** ISO 8601 UTC at whole seconds: the analytics routes reject milliseconds. */
export function isoSecond(date: Date): string {
  return new Date(Math.floor(date.getTime() / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

/**
 * Preset windows end at the next whole minute, so every panel of one page (and a reload within the
 * same minute) asks about the same window.
 */
export function readWindow(query: URLSearchParams, now: Date = new Date()): WindowSelection {
  const rangeParam = query.get('range');
  const range = (RANGES.some((r) => r.name === rangeParam) ? rangeParam : '24h') as RangeName;
  const granularityParam = query.get('granularity');
  const granularity = (GRANULARITIES.includes(granularityParam as Granularity) ? granularityParam : 'day') as Granularity;
  if (range === 'custom') {
    const from = query.get('from');
    const to = query.get('to');
    const start = from ? new Date(from) : null;
    const end = to ? new Date(to) : null;
    if (start && end && !Number.isNaN(start.getTime()) && !Number.isNaN(end.getTime()) && end > start) {
      return { range, granularity, start: isoSecond(start), endExclusive: isoSecond(end), hours: null };
    }
  }
  const preset = RANGES.find((r) => r.name === (range === 'custom' ? '24h' : range))!;
  const end = new Date(Math.ceil(now.getTime() / 60_000) * 60_000);
  const start = new Date(end.getTime() - preset.hours! * 3600_000);
  return {
    range: range === 'custom' ? '24h' : range,
    granularity,
    start: isoSecond(start),
    endExclusive: isoSecond(end),
    hours: preset.hours,
  };
}
