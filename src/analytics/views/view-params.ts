/**
 * Parameters of the preset views (docs/analytics.md "Parameters"). REST query strings and MCP arguments both
 * arrive here as a plain object, so both get the same 400 details, each naming its parameter.
 */
import { ValidationError } from '../../platform/http/errors.js';
import { LIMITS } from '../catalog.js';
import { parseWindowBound, SECOND_ALIGNED_DETAIL } from '../query/window.js';
import { GRANULARITIES, type Granularity, type ViewWindow } from './time-buckets.js';
import { DEFAULT_HOURS, MAX_HOURS, VIEW_NAMES } from './view-schemas.js';

export { DEFAULT_HOURS, MAX_HOURS, VIEW_NAMES };
export type ViewName = (typeof VIEW_NAMES)[number];

export const MAX_WINDOW_DAYS = LIMITS.max_window_days;

export type RawViewParams = Record<string, unknown>;

export interface GeneralParams {
  window: ViewWindow;
  hours: number;
  granularity: Granularity;
}

export interface WindowedParams {
  window: ViewWindow;
  granularity: Granularity;
}

export interface ModelScorecardParams {
  window: ViewWindow;
}

export interface RoiParams {
  /** The series cover the retention period ending now (docs/analytics.md "roi"). */
  window: ViewWindow;
  granularity: Granularity;
}

const present = (value: unknown) => value !== undefined && value !== null && value !== '';

export function parseViewName(raw: unknown): ViewName {
  if (!present(raw)) return 'general';
  if (typeof raw !== 'string' || !(VIEW_NAMES as readonly string[]).includes(raw)) {
    throw new ValidationError(`view: must be one of ${VIEW_NAMES.join(', ')}`);
  }
  return raw as ViewName;
}

export function parseGranularity(raw: unknown): Granularity {
  if (!present(raw)) return 'day';
  if (typeof raw !== 'string' || !(GRANULARITIES as readonly string[]).includes(raw)) {
    throw new ValidationError(`granularity: must be one of ${GRANULARITIES.join(', ')}`);
  }
  return raw as Granularity;
}

export function parseHours(raw: unknown): number {
  if (!present(raw)) return DEFAULT_HOURS;
  const text = typeof raw === 'number' ? String(raw) : raw;
  if (typeof text !== 'string' || !/^\d+$/.test(text) || Number(text) < 1 || Number(text) > MAX_HOURS) {
    throw new ValidationError(`hours: must be a whole number of hours from 1 to ${MAX_HOURS}`);
  }
  return Number(text);
}

/** One bound: ISO 8601, UTC, whole second. The detail names the parameter as the caller spelled it. */
export function parseInstant(raw: unknown, name: string): Date {
  try {
    return parseWindowBound(typeof raw === 'number' ? String(raw) : raw, name);
  } catch (error) {
    if (error instanceof ValidationError && error.detail === SECOND_ALIGNED_DETAIL) {
      throw new ValidationError(`${name}: must be ISO 8601 UTC at a whole second, e.g. 2026-01-01T00:00:00Z`);
    }
    throw error;
  }
}

/** endExclusive, or its REST spelling end_exclusive; both given must agree. Returns the name used. */
function readEndExclusive(raw: RawViewParams): { value: unknown; name: string } | null {
  const camel = raw.endExclusive;
  const snake = raw.end_exclusive;
  if (present(camel) && present(snake) && camel !== snake) {
    throw new ValidationError('endExclusive: endExclusive and end_exclusive disagree; send one of them');
  }
  if (present(camel)) return { value: camel, name: 'endExclusive' };
  if (present(snake)) return { value: snake, name: 'end_exclusive' };
  return null;
}

function checkWindow(start: Date, endExclusive: Date, endName: string): ViewWindow {
  if (endExclusive.getTime() <= start.getTime()) throw new ValidationError(`${endName}: must be after start`);
  if (endExclusive.getTime() - start.getTime() > MAX_WINDOW_DAYS * 86_400_000) {
    throw new ValidationError(`${endName}: the window from start exceeds ${MAX_WINDOW_DAYS} days`);
  }
  return { start, endExclusive };
}

/** The end of "now" as an exclusive whole-second bound: the current second is included. */
export function nowExclusive(now: Date): Date {
  return new Date(Math.floor(now.getTime() / 1000) * 1000 + 1000);
}

function requireStart(raw: RawViewParams): Date {
  if (!present(raw.start)) throw new ValidationError('start is required');
  return parseInstant(raw.start, 'start');
}

export function parseWindowedParams(raw: RawViewParams): WindowedParams {
  const start = requireStart(raw);
  const end = readEndExclusive(raw);
  if (!end) throw new ValidationError('endExclusive is required (REST also accepts end_exclusive)');
  const window = checkWindow(start, parseInstant(end.value, end.name), end.name);
  return { window, granularity: parseGranularity(raw.granularity) };
}

/**
 * general: the `hours` before an anchor. The anchor is now, or `endExclusive` when given — so
 * a caller (and a test) can look at a fixed past period.
 */
export function parseGeneralParams(raw: RawViewParams, now: Date): GeneralParams {
  const hours = parseHours(raw.hours);
  const end = readEndExclusive(raw);
  const endExclusive = end ? parseInstant(end.value, end.name) : nowExclusive(now);
  const window = { start: new Date(endExclusive.getTime() - hours * 3_600_000), endExclusive };
  return { window, hours, granularity: parseGranularity(raw.granularity) };
}

/**
 * model_scorecard: start, and either `end` (inclusive, so the window runs to end + 1 s) or
 * `endExclusive`; neither means "up to now".
 */
export function parseModelScorecardParams(raw: RawViewParams, now: Date): ModelScorecardParams {
  const start = requireStart(raw);
  const end = readEndExclusive(raw);
  if (end && present(raw.end)) throw new ValidationError(`end: send end or ${end.name}, not both`);
  if (present(raw.end)) {
    const inclusive = parseInstant(raw.end, 'end');
    return { window: checkWindow(start, new Date(inclusive.getTime() + 1000), 'end') };
  }
  if (end) return { window: checkWindow(start, parseInstant(end.value, end.name), end.name) };
  const endExclusive = nowExclusive(now);
  if (start.getTime() >= endExclusive.getTime()) throw new ValidationError('start: must not be in the future when no end is given');
  if (endExclusive.getTime() - start.getTime() > MAX_WINDOW_DAYS * 86_400_000) {
    throw new ValidationError(`start: must be within the last ${MAX_WINDOW_DAYS} days when no end is given`);
  }
  return { window: { start, endExclusive } };
}

/** roi takes no window: its series cover the last max_window_days days up to now. */
export function parseRoiParams(raw: RawViewParams, now: Date): RoiParams {
  const endExclusive = nowExclusive(now);
  const start = new Date(endExclusive.getTime() - MAX_WINDOW_DAYS * 86_400_000);
  return { window: { start, endExclusive }, granularity: parseGranularity(raw.granularity) };
}
