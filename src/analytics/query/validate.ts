/**
 * Validates an analytics query body and resolves every name against the catalog (the first pass
 * of the compiler, as in HogQL's resolver). The result holds catalog definitions, never caller
 * names, so later passes cannot reach an identifier the catalog does not list.
 *
 * The documented detail strings (docs/analytics-query.md) are returned verbatim; every
 * other failure (unknown keys at any level, types, limits) is a 400 whose detail names the field,
 * in the `path: problem` form the ajv layer uses (src/platform/http/validation.ts).
 */
import { ValidationError } from '../../platform/http/errors.js';
import {
  ALL_AGGS,
  BUCKETS,
  FILTER_OPS,
  findEvent,
  findField,
  type Agg,
  type Bucket,
  type CostMeasure,
  type EventDef,
  type FieldDef,
  type FilterOp,
  type Limits,
  allEvents,
} from '../catalog.js';
import { parseWindow, type QueryWindow } from './window.js';

export interface ValidFilter {
  field: FieldDef;
  op: FilterOp;
  /** One value for comparisons, one or more for `in`, none for the null checks. */
  values: (string | number)[];
}

export interface AggregateMeasure {
  kind: 'aggregate';
  alias: string;
  agg: Exclude<Agg, CostMeasure>;
  /** null only for count. */
  field: FieldDef | null;
  filter: ValidFilter | null;
}

export interface CostMeasureSpec {
  kind: 'cost';
  /** Cost rows do not use the alias ; it is only checked when given. */
  alias: string | null;
  agg: CostMeasure;
}

export type ValidGroup = { kind: 'bucket'; alias: string; bucket: Bucket } | { kind: 'field'; alias: string; field: FieldDef };

export interface ValidOrder {
  alias: string;
  direction: 'asc' | 'desc';
}

export interface ValidJoin {
  event: EventDef;
  on: string;
  filters: ValidFilter[];
  measures: AggregateMeasure[];
}

export interface ValidQuery {
  event: EventDef;
  window: QueryWindow;
  measures: AggregateMeasure[];
  cost: CostMeasureSpec | null;
  filters: ValidFilter[];
  groups: ValidGroup[];
  orderBy: ValidOrder[];
  limit: number;
  join: ValidJoin | null;
}

/** An alias: "a lowercase letter followed by up to 40 lowercase letters, digits or underscores". */
const ALIAS = /^[a-z][a-z0-9_]{0,40}$/;

/** Row fields a cost measure writes ; an alias may not shadow them. */
export const COST_ROW_FIELDS: Record<CostMeasure, readonly string[]> = {
  generation_cost: ['estimated_cost_usd', 'priced'],
  trace_cost: [
    'estimated_cost_usd',
    'priced_tokens',
    'total_tokens',
    'priced_token_share',
    'unpriced_models',
    'pricing_fetched_at',
    'cost_source',
    'cost_lower_bound',
    'cost_lower_bound_reasons',
    'model_breakdown_truncated',
    'attribution',
  ],
};

const fail = (detail: string): never => {
  throw new ValidationError(detail);
};

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function requireObject(value: unknown, path: string): Record<string, unknown> {
  if (!isObject(value)) fail(`${path}: must be an object`);
  return value as Record<string, unknown>;
}

function checkKeys(object: Record<string, unknown>, allowed: readonly string[], path: string): void {
  for (const key of Object.keys(object)) if (!allowed.includes(key)) fail(`${path}: unknown key '${key}'`);
}

function requireArray(value: unknown, path: string, min: number, max: number): unknown[] {
  if (!Array.isArray(value)) fail(`${path}: must be an array`);
  const array = value as unknown[];
  if (array.length < min) fail(`${path}: must have at least ${min} ${min === 1 ? 'entry' : 'entries'}`);
  if (array.length > max) fail(`${path}: must have at most ${max} entries`);
  return array;
}

function requireString(value: unknown, path: string): string {
  if (typeof value !== 'string') fail(`${path}: must be a string`);
  return value as string;
}

function checkAlias(alias: unknown, path: string): string {
  const text = requireString(alias, path);
  if (!ALIAS.test(text)) fail(`Invalid alias: ${text}`);
  return text;
}

function resolveField(event: EventDef, name: unknown, path: string): FieldDef {
  const text = requireString(name, path);
  return findField(event, text) ?? fail(`Unknown field: ${text}`);
}

function filterValue(value: unknown, field: FieldDef, path: string): string | number {
  if (field.type === 'string') {
    if (typeof value !== 'string') fail(`${path}: must be a string for ${field.field}`);
    return value as string;
  }
  if (typeof value !== 'number' || !Number.isFinite(value)) fail(`${path}: must be a finite number for ${field.field}`);
  return value as number;
}

function validateFilter(raw: unknown, event: EventDef, path: string, limits: Limits): ValidFilter {
  const filter = requireObject(raw, path);
  checkKeys(filter, ['field', 'op', 'value'], path);
  if (filter.field === undefined) fail(`${path}.field is required`);
  if (filter.op === undefined) fail(`${path}.op is required`);
  const field = resolveField(event, filter.field, `${path}.field`);
  const op = requireString(filter.op, `${path}.op`) as FilterOp;
  if (!FILTER_OPS.includes(op)) fail(`${path}.op: must be one of ${FILTER_OPS.join(', ')}`);
  const hasValue = filter.value !== undefined;
  switch (op) {
    case 'is_null':
    case 'is_not_null':
      if (hasValue && filter.value !== null) fail(`${path}.value: ${op} takes no value`);
      return { field, op, values: [] };
    case 'in': {
      if (!Array.isArray(filter.value)) fail(`${path}.value: in needs a non-empty array`);
      const list = filter.value as unknown[];
      if (list.length === 0) fail(`${path}.value: in needs a non-empty array`);
      if (list.length > limits.max_in_values) fail(`in filters accept at most ${limits.max_in_values} values`);
      return { field, op, values: list.map((v, i) => filterValue(v, field, `${path}.value.${i}`)) };
    }
    case 'eq':
    case 'neq':
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte':
      if (!hasValue) fail(`${path}.value is required`);
      return { field, op, values: [filterValue(filter.value, field, `${path}.value`)] };
    default:
      return fail(`${path}.op: must be one of ${FILTER_OPS.join(', ')}`);
  }
}

function validateFilters(raw: unknown, event: EventDef, path: string, limits: Limits): ValidFilter[] {
  if (raw === undefined) return [];
  return requireArray(raw, path, 0, limits.max_filters).map((f, i) => validateFilter(f, event, `${path}.${i}`, limits));
}

function validateMeasure(raw: unknown, event: EventDef, path: string, limits: Limits): AggregateMeasure | CostMeasureSpec {
  const measure = requireObject(raw, path);
  checkKeys(measure, ['as', 'agg', 'field', 'filter'], path);
  if (measure.agg === undefined) fail(`${path}.agg is required`);
  const agg = requireString(measure.agg, `${path}.agg`) as Agg;
  if (!ALL_AGGS.includes(agg)) fail(`${path}.agg: must be one of ${ALL_AGGS.join(', ')}`);

  if (agg === 'trace_cost' || agg === 'generation_cost') {
    if (event.costMeasure !== agg) fail(`${agg} is not valid on ${event.name}`);
    if (measure.field !== undefined) fail(`${path}.field: ${agg} does not take a field`);
    if (measure.filter !== undefined) fail(`${path}.filter: ${agg} does not take a filter`);
    return { kind: 'cost', agg, alias: measure.as === undefined ? null : checkAlias(measure.as, `${path}.as`) };
  }

  if (measure.as === undefined) fail(`${path}.as is required`);
  const alias = checkAlias(measure.as, `${path}.as`);
  let field: FieldDef | null = null;
  if (agg === 'count') {
    if (measure.field !== undefined) fail('count does not take a field');
  } else {
    if (measure.field === undefined) fail(`${path}.field is required for ${agg}`);
    field = resolveField(event, measure.field, `${path}.field`);
    // uniqExact takes any field; the numeric aggregations need a measure whose aggs list them.
    if (agg !== 'uniqExact' && (field.type !== 'number' || !field.aggs.includes(agg))) {
      fail(`${agg} is not valid for ${field.field}`);
    }
  }
  const filter = measure.filter === undefined ? null : validateFilter(measure.filter, event, `${path}.filter`, limits);
  return { kind: 'aggregate', alias, agg, field, filter };
}

function validateGroup(raw: unknown, event: EventDef, path: string): ValidGroup {
  const group = requireObject(raw, path);
  checkKeys(group, ['bucket', 'field', 'as'], path);
  const hasBucket = group.bucket !== undefined;
  const hasField = group.field !== undefined;
  if (hasBucket === hasField) fail(`${path}: needs exactly one of bucket or field`);
  if (hasBucket) {
    const bucket = requireString(group.bucket, `${path}.bucket`) as Bucket;
    if (!BUCKETS.includes(bucket)) fail(`${path}.bucket: must be one of ${BUCKETS.join(', ')}`);
    // The default alias is `bucket` for a bucket.
    return { kind: 'bucket', bucket, alias: group.as === undefined ? 'bucket' : checkAlias(group.as, `${path}.as`) };
  }
  const field = resolveField(event, group.field, `${path}.field`);
  return { kind: 'field', field, alias: group.as === undefined ? field.field : checkAlias(group.as, `${path}.as`) };
}

function claimAlias(seen: Set<string>, alias: string): void {
  if (seen.has(alias)) fail(`Duplicate alias: ${alias}`);
  seen.add(alias);
}

function validateJoin(raw: unknown, primary: EventDef, groups: ValidGroup[], aliases: Set<string>, limits: Limits): ValidJoin {
  const join = requireObject(raw, 'join');
  checkKeys(join, ['from', 'on', 'filters', 'measures'], 'join');
  if (join.from === undefined) fail('join.from is required');
  if (join.on === undefined) fail('join.on is required');
  if (join.measures === undefined) fail('join.measures is required');
  const from = requireString(join.from, 'join.from');
  const event = findEvent(from) ?? fail(`join.from: unknown event ${from}; events are ${eventNames()}`);
  if (event.name === primary.name) fail('Join must use a different event');
  const on = requireString(join.on, 'join.on');
  const onPrimary = findField(primary, on) ?? fail(`Unknown field: ${on}`);
  const onJoined = findField(event, on) ?? fail(`Unknown field: ${on}`);
  if (onPrimary.type !== onJoined.type) fail(`join.on: ${on} has different types on ${primary.name} and ${event.name}`);
  // The primary query must group by `on` with the default alias.
  if (!groups.some((g) => g.kind === 'field' && g.field.field === on && g.alias === on)) {
    fail(`join.on: the query must group by ${on} with alias ${on}`);
  }
  const filters = validateFilters(join.filters, event, 'join.filters', limits);
  const measures = requireArray(join.measures, 'join.measures', 1, limits.max_measures).map((m, i) => {
    const measure = validateMeasure(m, event, `join.measures.${i}`, limits);
    if (measure.kind === 'cost') return fail(`join.measures.${i}: cost measures are not allowed in a join`);
    claimAlias(aliases, measure.alias);
    return measure;
  });
  return { event, on, filters, measures };
}

export function eventNames(): string {
  return allEvents()
    .map((e) => e.name)
    .join(', ');
}

const TOP_LEVEL_KEYS = ['from', 'start', 'end_exclusive', 'measures', 'filters', 'group_by', 'order_by', 'limit', 'join'] as const;

/**
 * Validates a body in the REST (snake_case) shape. Callers with another shape (the MCP tool's
 * endExclusive, groupBy, orderBy) map it to this one first, so all surfaces share every rule.
 */
export function validateQuery(body: unknown, limits: Limits): ValidQuery {
  const query = requireObject(body, 'body');
  checkKeys(query, TOP_LEVEL_KEYS, 'body');
  for (const key of ['from', 'start', 'end_exclusive', 'measures'] as const) if (query[key] === undefined) fail(`${key} is required`);

  const from = requireString(query.from, 'from');
  const event = findEvent(from) ?? fail(`from: unknown event ${from}; events are ${eventNames()}`);
  const window = parseWindow(query.start, query.end_exclusive, limits.max_window_days);

  const filters = validateFilters(query.filters, event, 'filters', limits);
  const groups = query.group_by === undefined ? [] : requireArray(query.group_by, 'group_by', 0, limits.max_group_by).map((g, i) => validateGroup(g, event, `group_by.${i}`));
  const all = requireArray(query.measures, 'measures', 1, limits.max_measures).map((m, i) => validateMeasure(m, event, `measures.${i}`, limits));

  const aliases = new Set<string>();
  for (const group of groups) claimAlias(aliases, group.alias);
  const measures: AggregateMeasure[] = [];
  const costs: CostMeasureSpec[] = [];
  for (const measure of all) {
    if (measure.kind === 'cost') {
      costs.push(measure);
      if (measure.alias !== null) claimAlias(aliases, measure.alias);
    } else {
      claimAlias(aliases, measure.alias);
      measures.push(measure);
    }
  }
  if (costs.length > 1) fail('Only one cost measure is allowed');
  const cost = costs[0] ?? null;
  if (cost) {
    if (cost.agg === 'generation_cost' && !groups.some((g) => g.kind === 'field' && g.field.field === 'model' && g.alias === 'model')) {
      fail('generation_cost requires grouping by model');
    }
    // The cost row's fields share the row with the aliases.
    for (const name of COST_ROW_FIELDS[cost.agg]) if (aliases.has(name)) fail(`Duplicate alias: ${name}`);
  }

  const orderableAliases = new Set([...groups.map((g) => g.alias), ...measures.map((m) => m.alias)]);
  const join = query.join === undefined ? null : validateJoin(query.join, event, groups, aliases, limits);
  if (cost && join) for (const name of COST_ROW_FIELDS[cost.agg]) if (join.measures.some((m) => m.alias === name)) fail(`Duplicate alias: ${name}`);

  const orderBy = query.order_by === undefined ? [] : requireArray(query.order_by, 'order_by', 0, limits.max_order_by).map((raw, i): ValidOrder => {
    const path = `order_by.${i}`;
    const entry = requireObject(raw, path);
    checkKeys(entry, ['measure', 'direction'], path);
    if (entry.measure === undefined) fail(`${path}.measure is required`);
    const alias = requireString(entry.measure, `${path}.measure`);
    // Only a group alias or a primary measure alias; joined (and cost) aliases are not row columns to sort on.
    if (!orderableAliases.has(alias)) fail(`Unknown order field: ${alias}`);
    const direction = entry.direction === undefined ? 'asc' : requireString(entry.direction, `${path}.direction`);
    if (direction !== 'asc' && direction !== 'desc') fail(`${path}.direction: must be one of asc, desc`);
    return { alias, direction: direction as 'asc' | 'desc' };
  });

  let limit = limits.max_rows;
  if (query.limit !== undefined) {
    if (typeof query.limit !== 'number' || !Number.isInteger(query.limit) || query.limit < 1 || query.limit > limits.max_rows) {
      fail(`limit: must be an integer from 1 to ${limits.max_rows}`);
    }
    limit = query.limit as number;
  }

  return { event, window, measures, cost, filters, groups, orderBy, limit, join };
}

