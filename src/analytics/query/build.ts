/**
 * Second pass of the compiler: a validated, catalog-resolved query → the SQL AST of ast.ts, plus
 * what the runner needs to shape rows:
 *  - window as `timestamp >= start AND timestamp < end_exclusive`, then the event's discriminator
 *    (issue.*), then the caller's filters; the printer adds the tenant/project guard in front;
 *  - measures: count / uniqExact / sum / avg / min / max / p50-p99 (quantileExact), a measure's own
 *    filter through -If; the OrNull forms so an empty group answers null, not 0;
 *  - buckets: minute and hour as date-time text, day/week/month as dates, weeks starting Sunday
 *    (`toStartOfWeek(ts, 0)`);
 *  - the join: the joined event grouped by `on`, LEFT JOINed on the primary group of that alias,
 *    with `join_use_nulls` so unmatched rows get null joined measures;
 *  - default order by the groups; explicit order_by first, then the groups as tie-breakers so a
 *    truncated answer is deterministic.
 * Internal aliases (`g0`, `m0`, `j0`, `k`) keep caller aliases out of SQL entirely: ClickHouse lets
 * an alias shadow a column anywhere in the query, so `sum(error) AS error` would otherwise change
 * what `WHERE error = 1` means.
 */
import { findField, type Bucket, type FieldDef } from '../catalog.js';
import {
  aggregate,
  and,
  BUCKET_TEXT_FORMAT,
  call,
  column,
  compare,
  idText,
  inList,
  leftJoin,
  literal,
  nullCheck,
  orderItem,
  ref,
  select,
  selectItem,
  setting,
  subquery,
  table,
  value,
  type AggregateFn,
  type CompareOp,
  type Expr,
  type OrderItemNode,
  type SelectItemNode,
  type SelectNode,
  type SettingNode,
  type ValueNode,
} from './ast.js';
import { storedIdValue, type StoredId } from '../../platform/clickhouse/sql/event-ids.js';
import { dateTime64 } from '../../platform/clickhouse/clickhouse-time.js';
import type { AggregateMeasure, ValidFilter, ValidQuery } from './validate.js';

/** How a result column is turned into JSON (see rows.ts and docs/analytics-query.md). */
export type OutputKind = 'string' | 'integer' | 'float';

export interface OutputColumn {
  /** The compiler's alias in SQL. */
  key: string;
  /** The caller's alias: the key in the response row. */
  alias: string;
  kind: OutputKind;
}

export interface CompiledQuery {
  /** The whole statement. */
  statement: SelectNode;
  /** The select that reads the primary event table (its WHERE is what the cost module re-uses). */
  primary: SelectNode;
  /** Group expressions in group order, with the caller's aliases (handed to the cost module). */
  groups: { alias: string; expr: Expr }[];
  columns: OutputColumn[];
  limit: number;
}

export interface BuildOptions {
  /** 15 s by default (config.queryTimeoutSeconds). */
  timeoutSeconds: number;
  /** Per-query memory ceiling in bytes. */
  maxMemoryBytes: number;
}

/** 4 GiB: room for uniqExact/quantileExact over tens of millions of rows, far below the host's memory. */
export const DEFAULT_MAX_MEMORY_BYTES = 4 * 1024 ** 3;

const TIMESTAMP = column('timestamp');

const COMPARE_OPS: Record<'eq' | 'neq' | 'gt' | 'gte' | 'lt' | 'lte', CompareOp> = {
  eq: '=',
  neq: '!=',
  gt: '>',
  gte: '>=',
  lt: '<',
  lte: '<=',
};

function valueNode(v: string | number): ValueNode {
  // Numbers travel as decimal text: exact for both drivers, and 1e300 is still a Float64.
  return typeof v === 'string' ? value('String', v) : value('Float64', String(v));
}

function filterExpr(filter: ValidFilter): Expr {
  const stored = filter.field.type === 'string' ? filter.field.stored : undefined;
  if (stored) return storedIdFilter(filter, stored);
  const target = column(filter.field.column);
  switch (filter.op) {
    case 'is_null':
      return nullCheck(target, false);
    case 'is_not_null':
      return nullCheck(target, true);
    case 'in':
      return inList(target, filter.values.map(valueNode));
    case 'eq':
    case 'neq':
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte':
      return compare(COMPARE_OPS[filter.op], target, valueNode(filter.values[0]));
    default: {
      const never: never = filter.op;
      throw new Error(`unhandled filter op ${String(never)}`);
    }
  }
}

/** Conditions decided without reading a row: 1 (every row) and 0 (none). */
const EVERY_ROW = literal(1);
const NO_ROW = literal(0);

/**
 * A filter on an id stored as an id (catalog `stored`), with the answer the text column gave: each
 * value converted once to the id whose text it is (event-ids.ts), compared with the stored column;
 * a value that is no stored id's text matches no row. Ordering compares the text (an id's order is
 * not its text's), per row — range filters on ids are rare.
 */
function storedIdFilter(filter: ValidFilter, stored: StoredId): Expr {
  const ids = filter.values.map((v) => storedIdValue(stored, String(v)));
  const target = column(filter.field.column);
  switch (filter.op) {
    case 'is_null':
    case 'is_not_null':
      // Id columns are not Nullable: the text column answered the same.
      return filter.op === 'is_null' ? NO_ROW : EVERY_ROW;
    case 'in': {
      const known = ids.filter((id) => id !== null);
      return known.length > 0 ? inList(target, known.map((id) => value(id.type, id.value))) : NO_ROW;
    }
    case 'eq':
    case 'neq': {
      const id = ids[0];
      if (!id) return filter.op === 'eq' ? NO_ROW : EVERY_ROW;
      return compare(COMPARE_OPS[filter.op], target, value(id.type, id.value));
    }
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte':
      return compare(COMPARE_OPS[filter.op], idText(filter.field.column, stored), valueNode(filter.values[0]));
    default: {
      const never: never = filter.op;
      throw new Error(`unhandled filter op ${String(never)}`);
    }
  }
}

/** A dimension's value as the query reads it: the column, or an id column's text. */
export function fieldExpr(field: FieldDef): Expr {
  return field.type === 'string' && field.stored ? idText(field.column, field.stored) : column(field.column);
}

export function bucketExpr(bucket: Bucket): Expr {
  switch (bucket) {
    case 'minute':
      return call('formatDateTime', call('toStartOfMinute', TIMESTAMP), literal(BUCKET_TEXT_FORMAT));
    case 'hour':
      return call('formatDateTime', call('toStartOfHour', TIMESTAMP), literal(BUCKET_TEXT_FORMAT));
    case 'day':
      return call('toDate', TIMESTAMP);
    case 'week':
      // Mode 0: weeks start on Sunday (a week bucket is the date of its Sunday).
      return call('toStartOfWeek', TIMESTAMP, literal(0));
    case 'month':
      return call('toStartOfMonth', TIMESTAMP);
    default: {
      const never: never = bucket;
      throw new Error(`unhandled bucket ${String(never)}`);
    }
  }
}

const QUANTILE_LEVEL = { p50: 0.5, p95: 0.95, p99: 0.99 } as const;

/**
 * The quantile levels asked of each (field, filter) among a select's measures. Two or more levels
 * over the same values are computed by one quantilesExact — one copy and one sort of the values
 * instead of one per level — and each measure takes its element; the answers are the same
 * (quantilesExact and quantileExact pick the same element at each level; the tests compare both
 * with independently computed quantiles, and the null over no values).
 */
type QuantileLevels = Map<string, number[]>;

function quantileKey(measure: AggregateMeasure): string {
  return JSON.stringify([measure.field?.column ?? null, measure.filter ? [measure.filter.field.column, measure.filter.op, measure.filter.values] : null]);
}

function quantileLevels(measures: readonly AggregateMeasure[]): QuantileLevels {
  const levels: QuantileLevels = new Map();
  for (const m of measures) {
    if (m.agg !== 'p50' && m.agg !== 'p95' && m.agg !== 'p99') continue;
    const list = levels.get(quantileKey(m)) ?? [];
    if (!list.includes(QUANTILE_LEVEL[m.agg])) list.push(QUANTILE_LEVEL[m.agg]);
    levels.set(quantileKey(m), list);
  }
  for (const list of levels.values()) list.sort((a, b) => a - b);
  return levels;
}

function measureExpr(measure: AggregateMeasure, quantiles: QuantileLevels): { expr: Expr; kind: OutputKind } {
  const condition = measure.filter ? filterExpr(measure.filter) : null;
  const arg = measure.field ? column(measure.field.column) : null;
  const storage: OutputKind = measure.field?.type === 'number' ? measure.field.storage : 'string';
  const simple = (fn: AggregateFn, kind: OutputKind) => ({ expr: aggregate(fn, arg, condition), kind });
  switch (measure.agg) {
    case 'count':
      return simple('count', 'integer');
    case 'uniqExact':
      return simple('uniqExact', 'integer');
    case 'sum':
      return simple('sum', storage);
    case 'avg':
      return simple('avgOrNull', 'float');
    case 'min':
      return simple('minOrNull', storage);
    case 'max':
      return simple('maxOrNull', storage);
    case 'p50':
    case 'p95':
    case 'p99':
    {
      const level = QUANTILE_LEVEL[measure.agg];
      const levels = quantiles.get(quantileKey(measure)) ?? [level];
      if (levels.length === 1) return { expr: aggregate('quantileExactOrNull', arg, condition, [level]), kind: storage };
      // The same aggregate text in every measure of the key: ClickHouse computes it once. The
      // OrNull element keeps quantileExactOrNull's answer over no values (null; the array is empty).
      const shared = aggregate('quantilesExactOrNull', arg, condition, levels);
      return { expr: call('arrayElementOrNull', shared, literal(levels.indexOf(level) + 1)), kind: storage };
    }
    default: {
      const never: never = measure.agg;
      throw new Error(`unhandled agg ${String(never)}`);
    }
  }
}

function fieldKind(field: FieldDef): OutputKind {
  return field.type === 'number' ? field.storage : 'string';
}

/** The WHERE of one event read: window, discriminator, filters (the guard is the printer's). */
function eventWhere(query: ValidQuery, event: ValidQuery['event'], filters: ValidFilter[]): Expr {
  return and([...eventWindowWhere(query.window, event), ...filters.map(filterExpr)]);
}

/** An event's rows in a window: the window on `timestamp`, then the discriminator of a shared table (issue.*). */
export function eventWindowWhere(window: ValidQuery['window'], event: ValidQuery['event']): Expr[] {
  const items: Expr[] = [
    compare('>=', TIMESTAMP, value("DateTime64(3, 'UTC')", dateTime64(window.start))),
    compare('<', TIMESTAMP, value("DateTime64(3, 'UTC')", dateTime64(window.endExclusive))),
  ];
  if (event.discriminator) items.push(compare('=', column(event.discriminator.column), value('String', event.discriminator.value)));
  return items;
}

export function buildQuery(query: ValidQuery, options: BuildOptions): CompiledQuery {
  const columns: OutputColumn[] = [];
  const groupItems: SelectItemNode[] = [];
  const groups: CompiledQuery['groups'] = [];
  query.groups.forEach((group, i) => {
    const key = `g${i}`;
    const expr = group.kind === 'bucket' ? bucketExpr(group.bucket) : fieldExpr(group.field);
    groupItems.push(selectItem(expr, key));
    groups.push({ alias: group.alias, expr });
    columns.push({ key, alias: group.alias, kind: group.kind === 'bucket' ? 'string' : fieldKind(group.field) });
  });
  const primaryQuantiles = quantileLevels(query.measures);
  const measureItems = query.measures.map((measure, i) => {
    const { expr, kind } = measureExpr(measure, primaryQuantiles);
    columns.push({ key: `m${i}`, alias: measure.alias, kind });
    return selectItem(expr, `m${i}`);
  });

  const keyOf = new Map(columns.map((c) => [c.alias, c.key]));
  const explicit: OrderItemNode[] = query.orderBy.map((o) => orderItem(ref(keyOf.get(o.alias)!), o.direction === 'desc' ? 'DESC' : 'ASC'));
  const ordered = new Set(query.orderBy.map((o) => keyOf.get(o.alias)));
  const tieBreakers = groupItems.filter((g) => !ordered.has(g.alias)).map((g) => orderItem(ref(g.alias), 'ASC'));
  const orderBy = [...explicit, ...tieBreakers];

  const grouped = query.groups.length > 0;
  const settings: SettingNode[] = [
    setting('max_execution_time', options.timeoutSeconds),
    setting('max_result_rows', query.limit),
    setting('max_memory_usage', options.maxMemoryBytes),
    setting('output_format_json_quote_64bit_integers', 1),
    setting('output_format_json_quote_denormals', 0),
  ];
  if (query.join) settings.push(setting('join_use_nulls', 1));
  // The setting covers the whole statement, so only when every table read allows it.
  if (query.event.finalWithinPartitions && (!query.join || query.join.event.finalWithinPartitions)) {
    settings.push(setting('do_not_merge_across_partitions_select_final', 1));
  }
  // Last, so nothing after it needs to change a setting; 2 still lets this query carry its own SETTINGS.
  settings.push(setting('readonly', 2));
  const limit = grouped ? value('UInt32', String(query.limit)) : null;

  // A query whose only measure is a cost measure, without groups, still needs a select list: a
  // row count that is not returned keeps the "one row without group_by" shape.
  const primaryItems = [...groupItems, ...measureItems];
  if (primaryItems.length === 0) primaryItems.push(selectItem(aggregate('count', null, null), 'rows'));

  const primary = select({
    items: primaryItems,
    from: table(query.event.table),
    where: eventWhere(query, query.event, query.filters),
    groupBy: groupItems.map((g) => ref(g.alias)),
    orderBy: query.join ? [] : orderBy,
    limit: query.join ? null : limit,
    settings: query.join ? [] : settings,
  });

  if (!query.join) return { statement: primary, primary, groups, columns, limit: query.limit };

  const join = query.join;
  const onKey = keyOf.get(join.on)!;
  const joinQuantiles = quantileLevels(join.measures);
  const joinedItems = join.measures.map((measure, i) => {
    const { expr, kind } = measureExpr(measure, joinQuantiles);
    columns.push({ key: `j${i}`, alias: measure.alias, kind });
    return selectItem(expr, `j${i}`);
  });
  const joined = select({
    items: [selectItem(fieldExpr(findField(join.event, join.on)!), 'k'), ...joinedItems],
    from: table(join.event.table),
    where: eventWhere(query, join.event, join.filters),
    groupBy: [ref('k')],
    orderBy: [],
    limit: null,
    settings: [],
  });
  const statement = select({
    items: [
      ...[...groupItems, ...measureItems].map((item) => selectItem(ref(item.alias, 'p'), item.alias)),
      ...joinedItems.map((item) => selectItem(ref(item.alias, 'j'), item.alias)),
    ],
    from: leftJoin(subquery(primary, 'p'), subquery(joined, 'j'), ref(onKey, 'p'), ref('k', 'j')),
    where: null,
    groupBy: [],
    orderBy,
    limit,
    settings,
  });
  return { statement, primary, groups, columns, limit: query.limit };
}
