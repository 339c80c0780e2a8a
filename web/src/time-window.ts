/**
 * The window picker's state, kept in the page's query string (range, from, to, granularity), and
 * its translation into each analytics view's parameters.
 */
export type RangeName = '24h' | '7d' | '30d' | 'custom';
export type Granularity = 'hour' | 'day' | 'week' | 'month';
/** What the preset views accept; hour series come from the query DSL instead (overview.tsx). */
export type ViewGranularity = Exclude<Granularity, 'hour'>;

export const RANGES: { name: RangeName; label: string; hours: number | null }[] = [
  { name: '24h', label: '24 h', hours: 24 },
  { name: '7d', label: '7 d', hours: 24 * 7 },
  { name: '30d', label: '30 d', hours: 24 * 30 },
  { name: 'custom', label: 'Custom', hours: null },
];

export const GRANULARITIES: Granularity[] = ['hour', 'day', 'week', 'month'];

/** Hour buckets for windows up to 48 h (at most 48 points); a day is the finest beyond that. */
export const HOUR_GRANULARITY_MAX_HOURS = 48;

export function windowHours(start: string, endExclusive: string): number {
  return (Date.parse(endExclusive) - Date.parse(start)) / 3_600_000;
}

/** The granularities the picker offers for a window. */
export function granularitiesFor(start: string, endExclusive: string): Granularity[] {
  return windowHours(start, endExclusive) <= HOUR_GRANULARITY_MAX_HOURS ? GRANULARITIES : GRANULARITIES.filter((g) => g !== 'hour');
}

/** The granularity sent to a preset view: hour is not one of theirs, so their series stay daily. */
export function viewGranularity(window: WindowSelection): ViewGranularity {
  return window.granularity === 'hour' ? 'day' : window.granularity;
}

/** Unset or not offered for the window: hour on short windows (a 24 h chart by day has two points), else day. */
function pickGranularity(asked: string | null, start: string, endExclusive: string): Granularity {
  const offered = granularitiesFor(start, endExclusive);
  if (offered.includes(asked as Granularity)) return asked as Granularity;
  return offered.includes('hour') && asked === null ? 'hour' : 'day';
}

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
  const asked = query.get('granularity');
  if (range === 'custom') {
    const from = query.get('from');
    const to = query.get('to');
    const start = from ? new Date(from) : null;
    const end = to ? new Date(to) : null;
    if (start && end && !Number.isNaN(start.getTime()) && !Number.isNaN(end.getTime()) && end > start) {
      const window = { start: isoSecond(start), endExclusive: isoSecond(end) };
      return { range, granularity: pickGranularity(asked, window.start, window.endExclusive), ...window, hours: null };
    }
  }
  const preset = RANGES.find((r) => r.name === (range === 'custom' ? '24h' : range))!;
  const end = new Date(Math.ceil(now.getTime() / 60_000) * 60_000);
  const start = new Date(end.getTime() - preset.hours! * 3600_000);
  return {
    range: range === 'custom' ? '24h' : range,
    granularity: pickGranularity(asked, isoSecond(start), isoSecond(end)),
    start: isoSecond(start),
    endExclusive: isoSecond(end),
    hours: preset.hours,
  };
}
