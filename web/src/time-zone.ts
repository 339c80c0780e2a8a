/**
 * One time-zone rule for every date the dashboard writes, draws or reads from a date field: UTC
 * (the default, the zone the API answers in) or the browser's own zone, switched in the top bar.
 * The choice is kept in localStorage only once the person switches, and every subscriber
 * (the app shell) re-renders when it changes.
 */
export type ZoneMode = 'utc' | 'local';

const STORAGE_KEY = 'lookout.timeZone';
const listeners = new Set<() => void>();

function stored(): ZoneMode {
  try {
    return localStorage.getItem(STORAGE_KEY) === 'local' ? 'local' : 'utc';
  } catch {
    return 'utc';
  }
}

let mode: ZoneMode = typeof window === 'undefined' ? 'utc' : stored();

export function zoneMode(): ZoneMode {
  return mode;
}

export function setZoneMode(next: ZoneMode): void {
  mode = next;
  try {
    localStorage.setItem(STORAGE_KEY, next);
  } catch {
    // Private windows may refuse storage; the switch still holds for this page.
  }
  listeners.forEach((listener) => listener());
}

export function onZoneChange(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

interface Parts {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

function partsOf(date: Date, zone: ZoneMode): Parts {
  return zone === 'utc'
    ? { year: date.getUTCFullYear(), month: date.getUTCMonth() + 1, day: date.getUTCDate(), hour: date.getUTCHours(), minute: date.getUTCMinutes(), second: date.getUTCSeconds() }
    : { year: date.getFullYear(), month: date.getMonth() + 1, day: date.getDate(), hour: date.getHours(), minute: date.getMinutes(), second: date.getSeconds() };
}

const pad = (n: number) => String(n).padStart(2, '0');

/** The zone's short name at that date: "UTC", or the browser's own ("PST", "GMT+1"). */
export function zoneName(date: Date = new Date(), zone: ZoneMode = mode): string {
  if (zone === 'utc') return 'UTC';
  const part = new Intl.DateTimeFormat('en-US', { timeZoneName: 'short' }).formatToParts(date).find((p) => p.type === 'timeZoneName');
  return part?.value ?? 'local';
}

/** "2026-11-28 14:05:09 UTC" (24-hour clock, year first), in the chosen zone. */
export function zonedDateTime(date: Date, zone: ZoneMode = mode): string {
  const p = partsOf(date, zone);
  return `${p.year}-${pad(p.month)}-${pad(p.day)} ${pad(p.hour)}:${pad(p.minute)}:${pad(p.second)} ${zoneName(date, zone)}`;
}

/**
 * A chart tick: "14:00" within a day, "11-28" at midnight or when ticks are a day or more apart,
 * "2026-11" for month ticks.
 */
export function zonedTick(date: Date, stepSeconds: number, zone: ZoneMode = mode): string {
  const p = partsOf(date, zone);
  if (stepSeconds >= 28 * 86400) return `${p.year}-${pad(p.month)}`;
  if (stepSeconds >= 86400 || (p.hour === 0 && p.minute === 0)) return `${pad(p.month)}-${pad(p.day)}`;
  return `${pad(p.hour)}:${pad(p.minute)}`;
}

/** A datetime-local field's value ('YYYY-MM-DDThh:mm') for an instant, in the chosen zone. */
export function toDateInput(iso: string | null, zone: ZoneMode = mode): string {
  if (!iso) return '';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return '';
  const p = partsOf(date, zone);
  return `${p.year}-${pad(p.month)}-${pad(p.day)}T${pad(p.hour)}:${pad(p.minute)}`;
}

/** The instant a datetime-local field's value names in the chosen zone, or null when it names none. */
export function fromDateInput(value: string, zone: ZoneMode = mode): Date | null {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?$/.test(value)) return null;
  const date = zone === 'utc' ? new Date(`${value}${value.length === 16 ? ':00' : ''}Z`) : new Date(value);
  return Number.isNaN(date.getTime()) ? null : date;
}
