/**
 * The analytics query's request and response, declared once as TypeBox schemas: JSON Schema that
 * ajv validates as it stands (so the OpenAPI document, the route's validator and the MCP tool's
 * input schema are these very objects) with the TypeScript types derived from them (`Static`).
 * The dashboard imports the types from here. This file imports nothing of the server but the
 * catalog's constants, so the dashboard's type check can read it.
 *
 * The schema checks shape only (keys, types, list lengths from the catalog's limits). Every rule
 * the error table words itself (alias pattern, in-list size, second alignment, window length) is
 * validate.ts's, so REST and MCP answer with the same detail strings.
 */
import { Type, type Static, type TSchema } from 'typebox';
import { ALL_AGGS, BUCKETS, FILTER_OPS, LIMITS, NUMERIC_AGGS } from '../catalog.js';

/** A closed list of strings: `{type: 'string', enum}` as ajv reports it, a union of literals as a type. */
const oneOf = <const V extends string[]>(values: readonly [...V], description?: string) =>
  Type.Enum([...values] as [...V], { type: 'string', ...(description ? { description } : {}) });

const windowText = 'ISO 8601 in UTC at a whole second, e.g. 2026-11-01T00:00:00Z.';

export const AnalyticsFilter = Type.Object(
  {
    field: Type.String({ description: 'A dimension or measure of the event (see the catalog).' }),
    op: oneOf(FILTER_OPS),
    value: Type.Optional(
      Type.Unknown({
        description: `eq, neq, gt, gte, lt, lte: one string (dimension) or number (measure). in: an array of 1 to max_in_values (${LIMITS.max_in_values}) of them. is_null, is_not_null: no value. A missing string is stored as the empty string: match it with eq "".`,
      }),
    ),
  },
  { additionalProperties: false, description: 'One condition {field, op, value}.' },
);

const measure = (filterDescription: string) =>
  Type.Object(
    {
      as: Type.Optional(Type.String({ description: 'Alias of the result column: a lowercase letter followed by up to 40 lowercase letters, digits or underscores; unique. Required except on a cost measure.' })),
      agg: oneOf(
        ALL_AGGS,
        `count takes no field; uniqExact takes any field; ${NUMERIC_AGGS.join(', ')} need a measure whose aggs list them; trace_cost (on trace.processed) and generation_cost (on generation.completed, grouped by model) are cost measures.`,
      ),
      field: Type.Optional(Type.String()),
      filter: Type.Optional({ ...AnalyticsFilter, description: filterDescription }),
    },
    { additionalProperties: false },
  );

export const AnalyticsMeasure = measure('Optional: this measure aggregates only rows matching it.');

export const AnalyticsGroup = Type.Object(
  {
    bucket: Type.Optional(oneOf(BUCKETS, 'minute and hour: date-time text; day: a date; week: the date of its Sunday; month: the date of its first day.')),
    field: Type.Optional(Type.String()),
    as: Type.Optional(Type.String({ description: 'Default: "bucket" for a bucket, the field name for a field.' })),
  },
  { additionalProperties: false },
);

export const AnalyticsOrder = Type.Object(
  {
    measure: Type.String({ description: 'A group alias or a primary measure alias.' }),
    direction: Type.Optional(oneOf(['asc', 'desc'], 'Default asc.')),
  },
  { additionalProperties: false },
);

export const AnalyticsJoin = Type.Object(
  {
    from: Type.String({ description: 'Another event than the primary one.' }),
    on: Type.String({ description: 'A field on both events; the primary query must group by it with the default alias.' }),
    filters: Type.Optional(Type.Array(AnalyticsFilter, { maxItems: LIMITS.max_filters, description: 'Apply only to the joined event.' })),
    measures: Type.Array(AnalyticsMeasure, { maxItems: LIMITS.max_measures, description: 'No cost measures; aliases distinct from the primary ones; null on primary rows without a match.' }),
  },
  { additionalProperties: false, description: 'Left-join another event grouped by `on`.' },
);

/** POST /projects/{project_id}/analytics/query: the body. */
export const AnalyticsQueryBody = Type.Object(
  {
    from: Type.String({ description: 'The event to read (catalog events[].name).' }),
    start: Type.String({ description: `Window start, inclusive. ${windowText}` }),
    end_exclusive: Type.String({ description: `Window end, exclusive; after start, at most max_window_days (${LIMITS.max_window_days}) after it. ${windowText}` }),
    measures: Type.Array(AnalyticsMeasure, { maxItems: LIMITS.max_measures }),
    filters: Type.Optional(Type.Array(AnalyticsFilter, { maxItems: LIMITS.max_filters, description: 'A row must match all.' })),
    group_by: Type.Optional(Type.Array(AnalyticsGroup, { maxItems: LIMITS.max_group_by, description: 'Groups: {field, as?} or {bucket, as?}.' })),
    order_by: Type.Optional(
      Type.Array(AnalyticsOrder, {
        maxItems: LIMITS.max_order_by,
        description: 'Without order_by, rows are sorted by the groups; the groups also break ties after the given entries.',
      }),
    ),
    limit: Type.Optional(Type.Integer({ description: `Rows to return: 1 to max_rows (${LIMITS.max_rows}); default max_rows. truncated is true when reached.` })),
    join: Type.Optional(AnalyticsJoin),
  },
  { additionalProperties: false },
);
export type AnalyticsQueryBody = Static<typeof AnalyticsQueryBody>;
export type AnalyticsFilter = Static<typeof AnalyticsFilter>;
export type AnalyticsMeasure = Static<typeof AnalyticsMeasure>;
export type AnalyticsGroup = Static<typeof AnalyticsGroup>;

export const WindowEcho = Type.Object({ start: Type.String(), end_exclusive: Type.String() });

/** The answer of the analytics query (REST and MCP alike). */
export const AnalyticsQueryResponse = Type.Object({
  rows: Type.Array(Type.Record(Type.String(), Type.Unknown()), {
    description: 'Objects keyed by alias (one object when there is no group_by). Integers beyond 2^53-1 are numeric strings. Cost measures add their cost row fields, not their alias.',
  }),
  truncated: Type.Boolean({ description: 'True when the row count reaches limit (max_rows when no limit): more groups may exist.' }),
  window: WindowEcho,
});
export type AnalyticsQueryResponse = Static<typeof AnalyticsQueryResponse>;

/**
 * The MCP tool spells three keys in camelCase (endExclusive, groupBy, orderBy); mcp-body.ts maps
 * them back before the one validator runs.
 */
export const MCP_KEY_RENAMES = [
  ['endExclusive', 'end_exclusive'],
  ['groupBy', 'group_by'],
  ['orderBy', 'order_by'],
] as const;

/**
 * The MCP query tool's input schema: the REST body's own property schemas under the MCP key
 * spellings, with `project_id` first. Nothing is restated, so the two cannot drift apart.
 */
export function mcpQueryInputSchema(projectId: TSchema): Record<string, unknown> {
  const snakeToCamel = new Map<string, string>(MCP_KEY_RENAMES.map(([camel, snake]) => [snake, camel]));
  const rename = (key: string) => snakeToCamel.get(key) ?? key;
  const properties = Object.fromEntries(Object.entries(AnalyticsQueryBody.properties).map(([key, schema]) => [rename(key), schema]));
  return {
    type: 'object',
    additionalProperties: false,
    required: ['project_id', ...AnalyticsQueryBody.required.map(rename)],
    properties: { project_id: projectId, ...properties },
  };
}
