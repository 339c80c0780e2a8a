/**
 * An analytics event's rows for a window, one stored row each instead of aggregated: what the
 * export downloads (src/lifecycle/export-routes.ts, docs/data-lifecycle.md "Getting your data
 * out"). Every field the catalog lists for the event, preceded by its `timestamp`. The statement
 * is an AST of this compiler printed by its one printer, so it reads the table the way every
 * analytics read does: identifiers only from the catalog, values bound, the tenant and project
 * guard injected by the printer, FINAL (trace.processed through the SQL layer's one read of it),
 * and the window rule of the query language with its detail strings.
 */
import { findEvent, LIMITS, type EventDef } from '../catalog.js';
import { and, column, select, selectItem, table } from './ast.js';
import { DEFAULT_MAX_MEMORY_BYTES, eventWindowWhere, fieldExpr } from './build.js';
import { Printer } from './print.js';
import { eventNames } from './validate.js';
import { parseWindow, type QueryWindow } from './window.js';
import type { ClickHouseStore } from '../../platform/clickhouse/clickhouse.js';
import type { StatementSettings } from '../../platform/clickhouse/sql/compile.js';
import type { Fragment } from '../../platform/clickhouse/sql/fragment.js';
import { ValidationError } from '../../platform/http/errors.js';

export type { QueryWindow };

export interface EventExport {
  event: EventDef;
  window: QueryWindow;
}

/** A window of at most max_window_days, checked as the query language checks its own. */
export function exportWindow(start: unknown, endExclusive: unknown): QueryWindow {
  return parseWindow(start, endExclusive, LIMITS.max_window_days);
}

/** Resolves the event against the catalog and checks the window; 400 with the query language's details. */
export function eventExport(from: string | undefined, start: unknown, endExclusive: unknown): EventExport {
  if (from === undefined || from === '') throw new ValidationError(`from: required; events are ${eventNames()}`);
  const event = findEvent(from);
  if (!event) throw new ValidationError(`from: unknown event ${from}; events are ${eventNames()}`);
  return { event, window: exportWindow(start, endExclusive) };
}

/** The columns of an event's rows, in order: `timestamp`, then the catalog's dimensions and measures. */
export function exportColumns(event: EventDef): string[] {
  return ['timestamp', ...event.dimensions.map((d) => d.field), ...event.measures.map((m) => m.field)];
}

/**
 * The statement and its settings. `output` are the caller's output-format settings; the memory
 * ceiling is the query language's, and FINAL skips merging across partitions where the event allows it.
 */
export function eventExportStatement(
  ch: Pick<ClickHouseStore, 'table'>,
  scope: { tenantId: string; projectId: string },
  request: EventExport,
  output: StatementSettings = {},
): { statement: Fragment; settings: StatementSettings } {
  const { event, window } = request;
  const fields = [...event.dimensions, ...event.measures];
  const node = select({
    items: [selectItem(column('timestamp'), 'timestamp'), ...fields.map((field) => selectItem(fieldExpr(field), field.field))],
    from: table(event.table),
    where: and(eventWindowWhere(window, event)),
    groupBy: [],
    // Storage order: a sort would hold the whole window in the engine before the first row left.
    orderBy: [],
    limit: null,
    settings: [],
  });
  const printed = Printer.query(node, { tenantId: scope.tenantId, projectId: scope.projectId, qualify: (t) => ch.table(t) });
  return {
    statement: printed.statement,
    settings: {
      ...printed.settings,
      max_memory_usage: DEFAULT_MAX_MEMORY_BYTES,
      ...(event.finalWithinPartitions ? { do_not_merge_across_partitions_select_final: 1 } : {}),
      ...output,
    },
  };
}
