/**
 * Time buckets of the preset views (granularity day,
 * week, month; weeks start on Sunday, `toStartOfWeek(ts, 0)`).
 *
 * A bucket is named by the UTC date of its first day ('YYYY-MM-DD'): a day by itself, a week by its
 * Sunday, a month by its 1st. Series are complete: every bucket that overlaps the window appears,
 * the first and last possibly partial (docs/analytics.md "Time series").
 */
import { call, column, literal, minus, value, type Expr } from '../query/ast.js';
import { GRANULARITIES } from './view-schemas.js';

export { GRANULARITIES };
export type Granularity = (typeof GRANULARITIES)[number];

export interface ViewWindow {
  start: Date;
  endExclusive: Date;
}

const DAY_MS = 86_400_000;

/** The start (00:00 UTC) of the bucket that holds `at`. */
export function bucketStart(at: Date, granularity: Granularity): Date {
  const day = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate()));
  switch (granularity) {
    case 'day':
      return day;
    case 'week':
      // getUTCDay(): 0 = Sunday, so subtracting it lands on the week's Sunday.
      return new Date(day.getTime() - day.getUTCDay() * DAY_MS);
    case 'month':
      return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1));
    default: {
      const never: never = granularity;
      throw new Error(`unknown granularity ${String(never)}`);
    }
  }
}

/** The start of the bucket after the one starting at `start`. */
export function nextBucket(start: Date, granularity: Granularity): Date {
  switch (granularity) {
    case 'day':
      return new Date(start.getTime() + DAY_MS);
    case 'week':
      return new Date(start.getTime() + 7 * DAY_MS);
    case 'month':
      return new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + 1, 1));
    default: {
      const never: never = granularity;
      throw new Error(`unknown granularity ${String(never)}`);
    }
  }
}

export function dateText(date: Date): string {
  return date.toISOString().slice(0, 10);
}

/** Every bucket that overlaps [start, endExclusive), oldest first, as 'YYYY-MM-DD'. */
export function bucketDates(window: ViewWindow, granularity: Granularity): string[] {
  const dates: string[] = [];
  for (let at = bucketStart(window.start, granularity); at < window.endExclusive; at = nextBucket(at, granularity)) {
    dates.push(dateText(at));
  }
  return dates;
}

/**
 * The ClickHouse expression of a row's bucket: a Date, which JSON output writes as 'YYYY-MM-DD'
 * — the same text bucketDates produces. It reads the row's `timestamp` (DateTime64(3, 'UTC')).
 */
export function bucketExpr(granularity: Granularity): Expr {
  const timestamp = column('timestamp');
  switch (granularity) {
    case 'day':
      return call('toDate', timestamp);
    case 'week':
      return call('toStartOfWeek', timestamp, literal(0));
    case 'month':
      return call('toStartOfMonth', timestamp);
    default: {
      const never: never = granularity;
      throw new Error(`unknown granularity ${String(never)}`);
    }
  }
}

/**
 * A row's bucket as its position in bucketDates(window, granularity) (0 = the first bucket): the
 * key of -Resample aggregates (`countResample(0, n, 1)(index)`), which count per bucket into one
 * array per group instead of building a map per row (tool_aggregates).
 */
export function bucketIndexExpr(window: ViewWindow, granularity: Granularity): Expr {
  const timestamp = column('timestamp');
  const first = value('Date', dateText(bucketStart(window.start, granularity)));
  switch (granularity) {
    case 'day':
      return minus(call('toRelativeDayNum', timestamp), call('toRelativeDayNum', first));
    case 'week':
      return call('intDiv', minus(call('toRelativeDayNum', call('toStartOfWeek', timestamp, literal(0))), call('toRelativeDayNum', first)), literal(7));
    case 'month':
      return minus(call('toRelativeMonthNum', timestamp), call('toRelativeMonthNum', first));
    default: {
      const never: never = granularity;
      throw new Error(`unknown granularity ${String(never)}`);
    }
  }
}

/** One entry per bucket of `dates`: the row ClickHouse returned for it, or `empty(date)`. */
export function completeSeries<Row, Out>(dates: readonly string[], rows: ReadonlyMap<string, Row>, present: (row: Row, date: string) => Out, empty: (date: string) => Out): Out[] {
  return dates.map((date) => {
    const row = rows.get(date);
    return row === undefined ? empty(date) : present(row, date);
  });
}
