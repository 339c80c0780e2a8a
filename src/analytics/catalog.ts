/**
 * The analytics catalog: the one definition of what the query DSL may read (events,
 * fields, limits). It is at the same time the allowlist of
 * the compiler — no identifier reaches SQL unless it is written in this file — and the body of
 * `GET /projects/{project_id}/analytics/catalog`. A test compares it with clickhouse/*.sql so the
 * two cannot drift.
 */
import { Type, type Static, type TInteger } from 'typebox';
import type { StoredId } from '../platform/clickhouse/sql/event-ids.js';

/** Aggregations that need a numeric field whose `aggs` lists them . */
export const NUMERIC_AGGS = ['sum', 'avg', 'min', 'max', 'p50', 'p95', 'p99'] as const;
export type NumericAgg = (typeof NUMERIC_AGGS)[number];

export const COST_MEASURES = ['trace_cost', 'generation_cost'] as const;
export type CostMeasure = (typeof COST_MEASURES)[number];

/** Every `agg` a measure may name: count (no field), uniqExact (any field), the numeric ones, the cost measures. */
export const ALL_AGGS = ['count', 'uniqExact', ...NUMERIC_AGGS, ...COST_MEASURES] as const;
export type Agg = (typeof ALL_AGGS)[number];

export const FILTER_OPS = ['eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'in', 'is_null', 'is_not_null'] as const;
export type FilterOp = (typeof FILTER_OPS)[number];

export const BUCKETS = ['minute', 'hour', 'day', 'week', 'month'] as const;
export type Bucket = (typeof BUCKETS)[number];

/** The limits the catalog reports and the validator enforces. */
export interface Limits {
  max_group_by: number;
  max_measures: number;
  max_filters: number;
  max_order_by: number;
  max_in_values: number;
  max_rows: number;
  max_window_days: number;
}

export const LIMITS: Readonly<Limits> = Object.freeze({
  max_group_by: 4,
  max_measures: 12,
  max_filters: 12,
  max_order_by: 4,
  max_in_values: 20,
  max_rows: 10000,
  max_window_days: 90,
});

/**
 * A catalog field. `column` is the ClickHouse column it reads (same name for every field today, kept
 * separate so a rename in the DDL never changes the public name). `storage` drives how results are
 * returned: integer columns come back from ClickHouse as 64-bit values (see docs/analytics-query.md).
 */
export interface DimensionDef {
  readonly field: string;
  readonly type: 'string';
  readonly column: string;
  /**
   * Set when the column stores the text as an id (the per-span tables' trace_id UUID and span_id
   * UInt64, migration 009): the compiler reads it back as its text and compares text values with
   * it as ids (src/platform/clickhouse/sql/event-ids.ts). Unset: the column is the text.
   */
  readonly stored?: StoredId;
}

export interface MeasureDef {
  readonly field: string;
  readonly type: 'number';
  readonly column: string;
  readonly aggs: readonly NumericAgg[];
  readonly storage: 'integer' | 'float';
  /** True when the column is Nullable (tps is null when unknown); is_null is only meaningful here. */
  readonly nullable: boolean;
}

export type FieldDef = DimensionDef | MeasureDef;

export interface EventDef {
  readonly name: string;
  /** The ClickHouse table (unqualified; the store qualifies it with its database). */
  readonly table: string;
  /**
   * Rows of a shared table that belong to this event: the eight issue.* events share event_issue and
   * its `name` column says which one. Printed as a bound parameter like every other value.
   */
  readonly discriminator: { readonly column: string; readonly value: string } | null;
  readonly dimensions: readonly DimensionDef[];
  readonly measures: readonly MeasureDef[];
  readonly costMeasure: CostMeasure | null;
  /**
   * True when the table's sorting key contains `timestamp` and it is partitioned by a function of
   * it: two versions of one row then always share a partition, so FINAL may skip merging across
   * partitions (`do_not_merge_across_partitions_select_final`, which saves work).
   * event_trace_processed is keyed by trace only — a re-processed trace can move to another month —
   * so it must merge across partitions.
   */
  readonly finalWithinPartitions: boolean;
}

const dim = (field: string): DimensionDef => ({ field, type: 'string', column: field });
/** The per-span tables' ids (clickhouse/009): same text out and in, stored compactly. */
const TRACE_ID: DimensionDef = { field: 'trace_id', type: 'string', column: 'trace_id', stored: 'uuid' };
const SPAN_ID: DimensionDef = { field: 'span_id', type: 'string', column: 'span_id', stored: 'hex64' };

const ALL_NUMERIC: readonly NumericAgg[] = NUMERIC_AGGS;

function measure(field: string, storage: MeasureDef['storage'], options: { aggs?: readonly NumericAgg[]; nullable?: boolean } = {}): MeasureDef {
  return { field, type: 'number', column: field, aggs: options.aggs ?? ALL_NUMERIC, storage, nullable: options.nullable ?? false };
}

/** Every event also carries these string dimensions. */
export const COMMON_DIMENSIONS: readonly DimensionDef[] = [dim('actor'), dim('surface'), dim('user_id'), dim('api_key_id')];

export const ISSUE_EVENTS = [
  'issue.created',
  'issue.resolved',
  'issue.dismissed',
  'issue.reopened',
  'issue.review_started',
  'issue.flagged',
  'issue.unflagged',
  'issue.chat_sent',
] as const;

const EVENTS: readonly EventDef[] = [
  {
    // One row per processed trace, newest processing wins (read with FINAL). No queryable trace_id
    // (trace ids are not a query dimension); the cost bookkeeping columns are not measures — trace_cost reads them.
    name: 'trace.processed',
    table: 'event_trace_processed',
    discriminator: null,
    dimensions: [dim('agent_name'), dim('root_status_code'), ...COMMON_DIMENSIONS],
    measures: [
      measure('root_duration_ms', 'float', { nullable: true }),
      measure('error_count', 'integer'),
      measure('failing_tool_calls', 'integer'),
      measure('input_tokens', 'integer'),
      measure('output_tokens', 'integer'),
      // Input plus output; only its sum is meaningful.
      measure('total_tokens', 'integer', { aggs: ['sum'] }),
      // The stored per-trace estimate; null when the trace could not be priced at write time.
      measure('estimated_cost_usd', 'float', { nullable: true }),
    ],
    costMeasure: 'trace_cost',
    finalWithinPartitions: false,
  },
  {
    // provider, cached_input_tokens and cache_write_input_tokens are cost bookkeeping, not
    // queryable fields: generation_cost / trace_cost read them (test/integration/analytics-query/engine.test.ts).
    name: 'generation.completed',
    table: 'event_generation_completed',
    discriminator: null,
    dimensions: [dim('model'), TRACE_ID, SPAN_ID, ...COMMON_DIMENSIONS],
    measures: [
      measure('duration_ms', 'float'),
      measure('input_tokens', 'integer'),
      measure('output_tokens', 'integer'),
      measure('tps', 'float', { nullable: true }),
      measure('error', 'integer'),
    ],
    costMeasure: 'generation_cost',
    finalWithinPartitions: true,
  },
  {
    name: 'tool.called',
    table: 'event_tool_called',
    discriminator: null,
    dimensions: [dim('tool'), dim('agent_name'), TRACE_ID, SPAN_ID, ...COMMON_DIMENSIONS],
    measures: [measure('duration_ms', 'float'), measure('output_tokens', 'integer'), measure('error', 'integer')],
    costMeasure: null,
    finalWithinPartitions: true,
  },
  {
    name: 'span.errored',
    table: 'event_span_errored',
    discriminator: null,
    dimensions: [dim('span_name'), TRACE_ID, SPAN_ID, ...COMMON_DIMENSIONS],
    measures: [],
    costMeasure: null,
    finalWithinPartitions: true,
  },
  ...ISSUE_EVENTS.map(
    (name): EventDef => ({
      name,
      table: 'event_issue',
      discriminator: { column: 'name', value: name },
      dimensions: COMMON_DIMENSIONS,
      measures: [],
      costMeasure: null,
      finalWithinPartitions: true,
    }),
  ),
];

const BY_NAME = new Map(EVENTS.map((event) => [event.name, event]));

export function allEvents(): readonly EventDef[] {
  return EVENTS;
}

export function findEvent(name: string): EventDef | undefined {
  return BY_NAME.get(name);
}

export function findField(event: EventDef, field: string): FieldDef | undefined {
  return event.dimensions.find((d) => d.field === field) ?? event.measures.find((m) => m.field === field);
}

const field = { field: Type.String() };

/**
 * The body of the catalog route and the describe_project_analytics tool, declared once (TypeBox:
 * the JSON Schema of the OpenAPI document, with the type derived from it).
 */
export const AnalyticsCatalog = Type.Object({
  events: Type.Array(
    Type.Object({
      name: Type.String(),
      dimensions: Type.Array(Type.Object({ ...field, type: Type.Literal('string') })),
      measures: Type.Array(Type.Object({ ...field, type: Type.Literal('number'), aggs: Type.Array(Type.Enum([...NUMERIC_AGGS], { type: 'string' })) })),
      cost_measures: Type.Array(Type.Enum([...COST_MEASURES], { type: 'string' })),
    }),
  ),
  filter_ops: Type.Array(Type.Enum([...FILTER_OPS], { type: 'string' })),
  buckets: Type.Array(Type.Enum([...BUCKETS], { type: 'string' })),
  limits: Type.Object(Object.fromEntries(Object.keys(LIMITS).map((k) => [k, Type.Integer()])) as { [K in keyof Limits]: TInteger }),
});
export type CatalogResponse = Static<typeof AnalyticsCatalog>;

/** The body of GET /projects/{project_id}/analytics/catalog (and of the describe_project_analytics MCP tool). */
export function catalogResponse(): CatalogResponse {
  return {
    events: EVENTS.map((event) => ({
      name: event.name,
      dimensions: event.dimensions.map((d) => ({ field: d.field, type: d.type })),
      measures: event.measures.map((m) => ({ field: m.field, type: m.type, aggs: [...m.aggs] })),
      cost_measures: event.costMeasure ? [event.costMeasure] : [],
    })),
    filter_ops: [...FILTER_OPS],
    buckets: [...BUCKETS],
    limits: { ...LIMITS },
  };
}
