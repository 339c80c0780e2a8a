import { isoSecond } from '../time-window.js';

/**
 * Chart geometry from the API's points (layout only; no figure is derived or shown from it).
 */

/**
 * The value axis: from 0 to a little above the highest value of the series that set the scale.
 * Series marked offScale (a p99 beside its p50 and p95, where one near-zero-duration call can
 * reach 27,000 tokens/s) do not stretch it; their values above the top are reported instead.
 */
export function yRange(series: { label: string; values: (number | null)[]; offScale?: boolean }[]): { max: number; clipped: { label: string; max: number }[] } {
  const finite = (values: (number | null)[]) => values.filter((v): v is number => typeof v === 'number' && Number.isFinite(v));
  const scaling = series.filter((s) => !s.offScale).flatMap((s) => finite(s.values));
  const all = series.flatMap((s) => finite(s.values));
  const top = Math.max(0, ...(scaling.length > 0 ? scaling : all));
  const max = top > 0 ? top * 1.08 : 1;
  const clipped = series
    .filter((s) => s.offScale)
    .map((s) => ({ label: s.label, max: Math.max(-Infinity, ...finite(s.values)) }))
    .filter((c) => c.max > max);
  return { max, clipped };
}

/**
 * The time range of bucket `index` (seconds since the epoch, oldest first), cut to the page's
 * window: a bucket runs to the next bucket's start; the last one is as long as the one before it
 * (an hour when it is alone), and ends no later than the window.
 */
export function bucketRange(xs: number[], index: number, window: { start: string; endExclusive: string }): { start: string; endExclusive: string } | null {
  if (index < 0 || index >= xs.length) return null;
  const from = xs[index];
  const length = index + 1 < xs.length ? xs[index + 1] - from : index > 0 ? from - xs[index - 1] : 3600;
  const start = Math.max(from * 1000, Date.parse(window.start));
  const end = Math.min((from + length) * 1000, Date.parse(window.endExclusive));
  if (!(end > start)) return null;
  return { start: isoSecond(new Date(start)), endExclusive: isoSecond(new Date(end)) };
}
