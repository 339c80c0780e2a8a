/**
 * Display formatting only: every figure shown is the API's value, written for people. Nothing
 * here derives a new figure (nothing is recomputed in the browser, so the dashboard never disagrees with the API).
 */
import { zonedDateTime } from './time-zone.js';

const integer = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
const decimal = new Intl.NumberFormat('en-US', { maximumFractionDigits: 2 });

/** Large integers may arrive as numeric strings (past 2^53). */
function asNumber(value: unknown): number | null {
  if (value === null || value === undefined || value === '') return null;
  const n = typeof value === 'number' ? value : Number(value);
  return Number.isFinite(n) ? n : null;
}

export function formatCount(value: unknown): string {
  const n = asNumber(value);
  return n === null ? '—' : integer.format(n);
}

export function formatNumber(value: unknown): string {
  const n = asNumber(value);
  return n === null ? '—' : decimal.format(n);
}

const significant3 = new Intl.NumberFormat('en-US', { maximumSignificantDigits: 3 });

/**
 * A duration given in milliseconds, in the unit a person reads it in: "532 ms", "10.9 s",
 * "2 min 5 s", "1 h 4 min" (three significant digits below a minute).
 */
export function formatMs(value: unknown): string {
  const n = asNumber(value);
  if (n === null) return '—';
  const sign = n < 0 ? '-' : '';
  const abs = Math.abs(n);
  if (abs === 0) return '0 ms';
  if (Number(significant3.format(abs).replace(/,/g, '')) < 1000) return `${sign}${significant3.format(abs)} ms`;
  const seconds = abs / 1000;
  if (Number(significant3.format(seconds).replace(/,/g, '')) < 60) return `${sign}${significant3.format(seconds)} s`;
  const wholeSeconds = Math.round(seconds);
  if (wholeSeconds < 3600) return `${sign}${Math.floor(wholeSeconds / 60)} min ${wholeSeconds % 60} s`;
  const minutes = Math.round(seconds / 60);
  return `${sign}${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

/** error_rate is a fraction (0..1) in the views; shown as a percentage with the same precision. */
export function formatRate(value: unknown): string {
  const n = asNumber(value);
  return n === null ? '—' : `${decimal.format(n * 100)}%`;
}

const usdSmall = new Intl.NumberFormat('en-US', { minimumSignificantDigits: 4, maximumSignificantDigits: 4 });
const usdColumn = new Intl.NumberFormat('en-US', { minimumFractionDigits: 4, maximumFractionDigits: 4 });
const usdLarge = new Intl.NumberFormat('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 });

/**
 * One cost format everywhere: 4 significant digits under $1 (list-price estimates of single runs
 * are fractions of a cent; "$0.01" for 0.0100303 would hide three of its digits), cents from $1 up.
 */
export function formatUsd(value: unknown): string {
  const n = asNumber(value);
  if (n === null) return '—';
  if (n === 0) return '$0.00';
  const sign = n < 0 ? '-' : '';
  const abs = Math.abs(n);
  return `${sign}$${abs < 1 ? usdSmall.format(abs) : usdLarge.format(abs)}`;
}

/**
 * A cost in a table column: always four decimals, so the column's digits line up and compare at a
 * glance ("$0.7253" above "$0.0002"); a non-zero cost under $0.0001 reads "<$0.0001". The cell's
 * title carries the full figure (formatUsd).
 */
export function formatUsdColumn(value: unknown): string {
  const n = asNumber(value);
  if (n === null) return '—';
  if (n !== 0 && Math.abs(n) < 0.00005) return n < 0 ? '>-$0.0001' : '<$0.0001';
  const sign = n < 0 ? '-' : '';
  return `${sign}$${usdColumn.format(Math.abs(n))}`;
}

/** An API instant in the dashboard's one time zone (UTC unless switched to local): "2026-11-28 14:05:09 UTC". */
export function formatDateTime(value: unknown): string {
  if (typeof value !== 'string' || !value) return '—';
  const date = parseApiDate(value);
  if (!date) return value;
  return zonedDateTime(date);
}

/** API dates: ISO 8601, ClickHouse 'YYYY-MM-DD hh:mm:ss.sss' (UTC) or a bare day 'YYYY-MM-DD'. */
export function parseApiDate(value: string): Date | null {
  let text = value.trim();
  if (/^\d{4}-\d{2}-\d{2}$/.test(text)) text += 'T00:00:00Z';
  else if (/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}/.test(text)) text = text.replace(' ', 'T') + (/[zZ]|[+-]\d{2}:?\d{2}$/.test(text) ? '' : 'Z');
  const date = new Date(text);
  return Number.isNaN(date.getTime()) ? null : date;
}

export function plural(n: number, one: string, many = `${one}s`): string {
  return `${formatCount(n)} ${n === 1 ? one : many}`;
}

/** "just now", "12 s ago", "3 min ago", "2 h ago". */
export function ago(seconds: number): string {
  if (seconds < 2) return 'just now';
  if (seconds < 90) return `${Math.round(seconds)} s ago`;
  if (seconds < 90 * 60) return `${Math.round(seconds / 60)} min ago`;
  return `${Math.round(seconds / 3600)} h ago`;
}
