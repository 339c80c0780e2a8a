/**
 * An event export read in time slices (docs/data-lifecycle.md "Getting your data out"): the
 * window cut into consecutive sub-windows of at most SLICE_ROWS stored rows each, every one read by
 * a statement of its own, so the engine never holds more than one slice's reading state however
 * many rows the window holds (on the embedded engine that state is the service's own memory).
 *
 * The cut comes from a count per minute of the stored rows (every stored version of a row, so an
 * upper bound of what FINAL returns; the window's `timestamp` alone, the table's sort key after
 * tenant and project). A minute is never split: rows of one minute share a slice, so a minute
 * holding more than SLICE_ROWS rows is a slice of its own. A slice never spans two UTC days either:
 * the per-span event tables are partitioned by day, so each statement reads one partition's parts.
 */
import { aggregate, and, orderItem, ref, select, selectItem, table } from './ast.js';
import { bucketExpr, DEFAULT_MAX_MEMORY_BYTES, eventWindowWhere } from './build.js';
import type { EventExport } from './event-export.js';
import { Printer } from './print.js';
import type { QueryWindow } from './window.js';
import type { ClickHouseStore } from '../../platform/clickhouse/clickhouse.js';
import type { Fragment } from '../../platform/clickhouse/sql/fragment.js';

/** Stored rows a slice holds at most (unless one minute holds more). */
export const SLICE_ROWS = 1_000_000;

/** The settings of the counts slices are cut from (per minute for events, per trace id prefix for traces): bounded like a DSL query. */
export const SLICE_COUNT_SETTINGS = { max_memory_usage: DEFAULT_MAX_MEMORY_BYTES };

const DAY_MS = 86_400_000;

/** One minute of the window that holds rows: its start (ISO 8601 UTC, seconds) and its stored rows. */
export interface MinuteCount {
  minute: string;
  rows: number;
}

/** The stored rows per minute of the window, oldest first, under the tenant and project guard. */
export function minuteCountStatement(ch: Pick<ClickHouseStore, 'table'>, scope: { tenantId: string; projectId: string }, request: EventExport): Fragment {
  const node = select({
    items: [selectItem(bucketExpr('minute'), 'minute'), selectItem(aggregate('count', null, null), 'rows')],
    // Every stored version: a count to cut by needs no merge, and FINAL would cost a second read of the rows.
    from: table(request.event.table, { final: false }),
    where: and(eventWindowWhere(request.window, request.event)),
    groupBy: [ref('minute')],
    orderBy: [orderItem(ref('minute'), 'ASC')],
    limit: null,
    settings: [],
  });
  return Printer.query(node, { tenantId: scope.tenantId, projectId: scope.projectId, qualify: (t) => ch.table(t) }).statement;
}

/**
 * The window cut into consecutive slices that together cover it exactly: each holds at most
 * `maxRows` of the counted rows (or one minute), none crosses a UTC midnight, and stretches without
 * rows join the slice before them. An empty window is one slice (the statement still answers: a
 * CSV header, an empty Parquet file).
 */
export function cutSlices(window: QueryWindow, minutes: readonly MinuteCount[], maxRows = SLICE_ROWS): QueryWindow[] {
  const cuts: number[] = [];
  let rows = 0;
  let day = Math.floor(window.start.getTime() / DAY_MS);
  for (const { minute, rows: n } of minutes) {
    const at = Date.parse(minute);
    const minuteDay = Math.floor(at / DAY_MS);
    const startsNewDay = minuteDay !== day;
    if ((startsNewDay || rows + n > maxRows) && rows > 0 && at > window.start.getTime()) {
      // The slice ends at midnight when the day changed (so no statement reads two partitions), else at this minute.
      cuts.push(startsNewDay ? minuteDay * DAY_MS : at);
      rows = 0;
    }
    day = minuteDay;
    rows += n;
  }
  const bounds = [window.start.getTime(), ...cuts, window.endExclusive.getTime()];
  return bounds.slice(1).map((end, i) => ({ start: new Date(bounds[i]), endExclusive: new Date(end) }));
}
