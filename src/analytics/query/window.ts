/**
 * The query window (start inclusive, end_exclusive exclusive, ISO 8601, UTC, whole second; at
 * most max_window_days). The documented detail strings are returned verbatim.
 */
import { ValidationError } from '../../platform/http/errors.js';

export const SECOND_ALIGNED_DETAIL = 'start and endExclusive must be second-aligned UTC';

const ISO = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?([Zz]|[+-]\d{2}:?\d{2})?$/;

/**
 * Parses one bound of the window. Text that is not an ISO 8601 date-time is a plain validation
 * error naming the field; a real date-time that carries a non-zero fraction, another offset than
 * UTC, or no offset at all gets the "second-aligned UTC" detail. A zero fraction (`.000Z`, what
 * `Date.toISOString()` writes) is second-aligned and accepted.
 */
export function parseWindowBound(raw: unknown, field: string): Date {
  if (typeof raw !== 'string') throw new ValidationError(`${field}: must be a string (ISO 8601 UTC date-time, e.g. 2026-01-01T00:00:00Z)`);
  const match = ISO.exec(raw);
  if (!match) throw new ValidationError(`${field}: must be an ISO 8601 UTC date-time, e.g. 2026-01-01T00:00:00Z`);
  const [, y, mo, d, h, mi, s, fraction, offset] = match;
  const ms = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s));
  const date = new Date(ms);
  // Date.UTC rolls 2026-02-30 over into March; a date that does not round-trip is not a date.
  if (
    Number.isNaN(ms) ||
    date.getUTCFullYear() !== Number(y) ||
    date.getUTCMonth() !== Number(mo) - 1 ||
    date.getUTCDate() !== Number(d) ||
    date.getUTCHours() !== Number(h) ||
    date.getUTCMinutes() !== Number(mi) ||
    date.getUTCSeconds() !== Number(s)
  ) {
    throw new ValidationError(`${field}: not a valid date-time`);
  }
  const utc = offset !== undefined && /^(?:[Zz]|[+-]00:?00)$/.test(offset);
  const aligned = fraction === undefined || /^0+$/.test(fraction);
  if (!utc || !aligned) throw new ValidationError(SECOND_ALIGNED_DETAIL);
  return date;
}

export interface QueryWindow {
  start: Date;
  endExclusive: Date;
}

export function parseWindow(start: unknown, endExclusive: unknown, maxWindowDays: number, endField = 'end_exclusive'): QueryWindow {
  const s = parseWindowBound(start, 'start');
  const e = parseWindowBound(endExclusive, endField);
  if (e.getTime() <= s.getTime()) throw new ValidationError(`${endField}: must be after start`);
  if (e.getTime() - s.getTime() > maxWindowDays * 86_400_000) throw new ValidationError(`Window exceeds ${maxWindowDays} days`);
  return { start: s, endExclusive: e };
}

/** 2026-01-01T00:00:00Z: how the window is echoed back and how bucket text is written. */
export function formatUtcSecond(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** The resolved window as every view and query answer echoes it. */
export function windowEcho(window: { start: Date; endExclusive: Date }): { start: string; end_exclusive: string } {
  return { start: formatUtcSecond(window.start), end_exclusive: formatUtcSecond(window.endExclusive) };
}
