import type { WindowSelection } from '../time-window.js';
import { api } from './client.js';
import type { AnalyticsQueryBody, AnalyticsQueryResponse } from './types.js';

/**
 * Hour-by-hour series for the overview. The preset views bucket by day, week or month only, so for
 * windows up to 48 h the overview asks the analytics query DSL, which has hour buckets, for the
 * same figures the views define (docs/analytics.md): model calls, failed model calls (`error`),
 * prompt/completion tokens and speed percentiles from generation.completed; run latency
 * percentiles (root duration) from trace.processed.
 *
 * The DSL leaves out hours without rows. Every hour of the window is listed here: a count or a sum
 * with no rows is 0, a percentile with no rows is null (a gap), which is what the views answer for
 * an empty bucket too. Nothing else is filled in or derived.
 */
export interface HourlySeries {
  /** The window's hours, ISO 8601 UTC ('2026-11-23T03:00:00Z'), oldest first. */
  dates: string[];
  requests: number[];
  errors: number[];
  promptTokens: number[];
  completionTokens: number[];
  speed: { p50: (number | null)[]; p95: (number | null)[]; p99: (number | null)[] };
  latency: { p50: (number | null)[]; p95: (number | null)[] };
}

type Row = AnalyticsQueryResponse['rows'][number];

const HOUR = 3_600_000;

export function hoursOf(window: WindowSelection): string[] {
  const out: string[] = [];
  const first = Math.floor(Date.parse(window.start) / HOUR) * HOUR;
  for (let t = first; t < Date.parse(window.endExclusive); t += HOUR) out.push(new Date(t).toISOString().replace('.000Z', 'Z'));
  return out;
}

/** The two DSL bodies behind the hourly charts (exported for the tests, which run them too). */
export function hourlyQueries(window: WindowSelection): { generations: AnalyticsQueryBody; runs: AnalyticsQueryBody } {
  const span = { start: window.start, end_exclusive: window.endExclusive, group_by: [{ bucket: 'hour' as const }] };
  return {
    generations: {
      from: 'generation.completed',
      ...span,
      measures: [
        { as: 'requests', agg: 'count' },
        { as: 'errors', agg: 'sum', field: 'error' },
        { as: 'prompt_tokens', agg: 'sum', field: 'input_tokens' },
        { as: 'completion_tokens', agg: 'sum', field: 'output_tokens' },
        { as: 'speed_p50', agg: 'p50', field: 'tps' },
        { as: 'speed_p95', agg: 'p95', field: 'tps' },
        { as: 'speed_p99', agg: 'p99', field: 'tps' },
      ],
    },
    runs: {
      from: 'trace.processed',
      ...span,
      measures: [
        { as: 'latency_p50', agg: 'p50', field: 'root_duration_ms' },
        { as: 'latency_p95', agg: 'p95', field: 'root_duration_ms' },
      ],
    },
  };
}

function num(value: unknown): number | null {
  if (value === null || value === undefined || value === '') return null;
  const n = Number(value);
  return Number.isFinite(n) ? n : null;
}

export async function getHourlySeries(projectId: string, window: WindowSelection): Promise<HourlySeries> {
  const path = `/projects/${encodeURIComponent(projectId)}/analytics/query`;
  const bodies = hourlyQueries(window);
  const [generations, runs] = await Promise.all([
    api.post<AnalyticsQueryResponse>(path, bodies.generations),
    api.post<AnalyticsQueryResponse>(path, bodies.runs),
  ]);
  const dates = hoursOf(window);
  const byHour = (rows: Row[]) => new Map(rows.map((r) => [String(r.bucket), r]));
  const g = byHour(generations.rows);
  const r = byHour(runs.rows);
  const count = (rows: Map<string, Row>, key: string) => dates.map((d) => num(rows.get(d)?.[key]) ?? 0);
  const value = (rows: Map<string, Row>, key: string) => dates.map((d) => num(rows.get(d)?.[key]));
  return {
    dates,
    requests: count(g, 'requests'),
    errors: count(g, 'errors'),
    promptTokens: count(g, 'prompt_tokens'),
    completionTokens: count(g, 'completion_tokens'),
    speed: { p50: value(g, 'speed_p50'), p95: value(g, 'speed_p95'), p99: value(g, 'speed_p99') },
    latency: { p50: value(r, 'latency_p50'), p95: value(r, 'latency_p95') },
  };
}
