import { isoSecond } from '../time-window.js';

/**
 * Chart geometry from the API's points (layout only; no figure is derived or shown from it).
 */

/** Below this many values there is no telling an outlier from the trend. */
const MIN_VALUES_FOR_OUTLIERS = 5;
/** A value more than this many times the 90th percentile of the chart's values is an outlier. */
const OUTLIER_FACTOR = 4;

/**
 * The value axis: from 0 to a little above the highest value. Series marked offScale (a p99 beside
 * its p50 and p95) do not set it. With `trimOutliers` (percentile charts; never counts, where a
 * spike is the news), a value more than four times the 90th percentile of the chart's values (one
 * near-zero-duration call can reach 27,000 tokens/s in an hour with two calls) does not stretch it
 * either, so the rest does not lie flat on 0. What stands above the axis is reported per series
 * (its highest value).
 */
export function yRange(
  series: { label: string; values: (number | null)[]; offScale?: boolean }[],
  options: { trimOutliers?: boolean } = {},
): { max: number; clipped: { label: string; max: number }[] } {
  const finite = (values: (number | null)[]) => values.filter((v): v is number => typeof v === 'number' && Number.isFinite(v));
  const scaling = series.filter((s) => !s.offScale).flatMap((s) => finite(s.values));
  const candidates = scaling.length > 0 ? scaling : series.flatMap((s) => finite(s.values));
  const sorted = [...candidates].sort((a, b) => a - b);
  const q90 = options.trimOutliers && sorted.length >= MIN_VALUES_FOR_OUTLIERS ? sorted[Math.floor(0.9 * (sorted.length - 1))] : Infinity;
  const limit = q90 > 0 ? OUTLIER_FACTOR * q90 : Infinity;
  const top = Math.max(0, ...sorted.filter((v) => v <= limit));
  const max = top > 0 ? top * 1.08 : 1;
  const clipped = series
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
