/**
 * REST routes of the analytics catalog and query (read or admin scope; an unknown project or one outside the key is a 404, which
 * the route helper answers).
 *
 * The request schema registered here documents the body and lets the route helper reject gross
 * shape errors (unknown keys, wrong types). It deliberately leaves out every rule whose error detail is
 * worded by the validator (alias pattern, in-list size, second alignment, window length): those are
 * validate.ts's, so REST and MCP answer with the same detail strings.
 */
import { Router } from 'express';
import type { AppDeps } from '../../app/app-deps.js';
import { defineRoute } from '../../app/route.js';
import type { LookoutModule } from '../../app/module.js';
import { ALL_AGGS, BUCKETS, catalogResponse, FILTER_OPS, LIMITS, NUMERIC_AGGS } from '../catalog.js';
import { runAnalyticsQuery } from './run.js';

const filterSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['field', 'op'],
  properties: {
    field: { type: 'string', description: 'A dimension or measure of the event (see the catalog).' },
    op: { type: 'string', enum: [...FILTER_OPS] },
    value: {
      description:
        'eq, neq, gt, gte, lt, lte: one string (dimension) or number (measure). in: a non-empty array of up to max_in_values of them. is_null, is_not_null: no value. A missing string is stored as the empty string: match it with eq "".',
    },
  },
};

const measureSchema = (filter: unknown) => ({
  type: 'object',
  additionalProperties: false,
  required: ['agg'],
  properties: {
    as: { type: 'string', description: 'Alias: a lowercase letter followed by up to 40 lowercase letters, digits or underscores. Required except on a cost measure.' },
    agg: { type: 'string', enum: [...ALL_AGGS], description: `count takes no field; uniqExact takes any field; ${NUMERIC_AGGS.join(', ')} need a measure whose aggs list them; trace_cost and generation_cost are cost measures.` },
    field: { type: 'string' },
    filter,
  },
});

const groupSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    bucket: { type: 'string', enum: [...BUCKETS], description: 'minute and hour: date-time text; day: a date; week: the date of its Sunday; month: the date of its first day.' },
    field: { type: 'string' },
    as: { type: 'string', description: 'Default: "bucket" for a bucket, the field name for a field.' },
  },
};

const windowText = { type: 'string', description: 'ISO 8601, UTC, whole second, e.g. 2026-01-01T00:00:00Z.' };

export function analyticsQueryRoutes(deps: AppDeps): Router {
  const router = Router();
  const Filter = deps.openapi.addSchema('AnalyticsFilter', filterSchema);
  const Measure = deps.openapi.addSchema('AnalyticsMeasure', measureSchema(Filter));
  const Group = deps.openapi.addSchema('AnalyticsGroup', groupSchema);
  const QueryBody = deps.openapi.addSchema('AnalyticsQuery', {
    type: 'object',
    additionalProperties: false,
    required: ['from', 'start', 'end_exclusive', 'measures'],
    properties: {
      from: { type: 'string', description: 'The event to read (catalog events[].name).' },
      start: { ...windowText, description: `${windowText.description} Inclusive.` },
      end_exclusive: { ...windowText, description: `${windowText.description} Exclusive; after start; at most max_window_days after it.` },
      measures: { type: 'array', items: Measure, maxItems: LIMITS.max_measures },
      filters: { type: 'array', items: Filter, maxItems: LIMITS.max_filters, description: 'A row must match all.' },
      group_by: { type: 'array', items: Group, maxItems: LIMITS.max_group_by },
      order_by: {
        type: 'array',
        maxItems: LIMITS.max_order_by,
        items: {
          type: 'object',
          additionalProperties: false,
          required: ['measure'],
          properties: {
            measure: { type: 'string', description: 'A group alias or a primary measure alias.' },
            direction: { type: 'string', enum: ['asc', 'desc'], description: 'Default asc.' },
          },
        },
        description: 'Without order_by, rows are sorted by the groups; the groups also break ties after the given entries.',
      },
      limit: { type: 'integer', description: `1 to max_rows (${LIMITS.max_rows}); default max_rows.` },
      join: {
        type: 'object',
        additionalProperties: false,
        required: ['from', 'on', 'measures'],
        properties: {
          from: { type: 'string', description: 'Another event than the primary one.' },
          on: { type: 'string', description: 'A field on both events; the primary query must group by it with the default alias.' },
          filters: { type: 'array', items: Filter, maxItems: LIMITS.max_filters, description: 'Apply only to the joined event.' },
          measures: { type: 'array', items: Measure, maxItems: LIMITS.max_measures, description: 'No cost measures; aliases distinct from the primary ones; null on primary rows without a match.' },
        },
      },
    },
  });
  const QueryResponse = deps.openapi.addSchema('AnalyticsQueryResponse', {
    type: 'object',
    required: ['rows', 'truncated', 'window'],
    properties: {
      rows: {
        type: 'array',
        items: { type: 'object', additionalProperties: true },
        description: 'Objects keyed by alias (one object when there is no group_by). Integers beyond 2^53-1 are numeric strings. Cost measures add their cost row fields, not their alias.',
      },
      truncated: { type: 'boolean', description: 'True when the row count reaches limit (max_rows when no limit): more groups may exist.' },
      window: { type: 'object', required: ['start', 'end_exclusive'], properties: { start: { type: 'string' }, end_exclusive: { type: 'string' } } },
    },
  });
  const field = { type: 'object', required: ['field', 'type'], properties: { field: { type: 'string' }, type: { type: 'string' } } };
  const Catalog = deps.openapi.addSchema('AnalyticsCatalog', {
    type: 'object',
    required: ['events', 'filter_ops', 'buckets', 'limits'],
    properties: {
      events: {
        type: 'array',
        items: {
          type: 'object',
          required: ['name', 'dimensions', 'measures', 'cost_measures'],
          properties: {
            name: { type: 'string' },
            dimensions: { type: 'array', items: field },
            measures: { type: 'array', items: { ...field, properties: { ...field.properties, aggs: { type: 'array', items: { type: 'string' } } } } },
            cost_measures: { type: 'array', items: { type: 'string' } },
          },
        },
      },
      filter_ops: { type: 'array', items: { type: 'string' } },
      buckets: { type: 'array', items: { type: 'string' } },
      limits: { type: 'object', properties: Object.fromEntries(Object.keys(LIMITS).map((k) => [k, { type: 'integer' }])) },
    },
  });

  defineRoute(router, deps, {
    method: 'get',
    path: '/projects/{project_id}/analytics/catalog',
    tag: 'analytics',
    scope: 'read',
    projectParam: true,
    summary: 'The events, fields, filter operators, buckets and limits the analytics query accepts',
    responses: { 200: { description: 'Catalog', schema: Catalog } },
    handler: async () => catalogResponse(),
  });

  defineRoute(router, deps, {
    method: 'post',
    path: '/projects/{project_id}/analytics/query',
    tag: 'analytics',
    scope: 'read',
    projectParam: true,
    summary: 'Run an aggregate query over one analytics event (optionally joined with another)',
    body: QueryBody,
    responses: { 200: { description: 'Rows', schema: QueryResponse } },
    handler: async ({ tenantId, project, body }) => runAnalyticsQuery({ ch: deps.ch, config: deps.config }, tenantId, project.id, body),
  });

  return router;
}

/** The feature module for src/app/modules.ts. MCP calls runAnalyticsQuery itself, like the route. */
export const analyticsQueryModule: LookoutModule = {
  name: 'analytics-query',
  api: analyticsQueryRoutes,
};
