/**
 * REST routes of the analytics catalog and query (read or admin scope; an unknown project or one outside the key is a 404, which
 * the route helper answers).
 *
 * The request and response schemas are query-shapes.ts's (the MCP tool's input schema is the same
 * object): the route helper rejects gross shape errors with them; every rule whose error detail is
 * worded by the validator (alias pattern, in-list size, second alignment, window length) is
 * validate.ts's, so REST and MCP answer with the same detail strings.
 */
import { Router } from 'express';
import type { AppDeps } from '../../app/app-deps.js';
import { defineRoute } from '../../app/route.js';
import type { LookoutModule } from '../../app/module.js';
import { AnalyticsCatalog, catalogResponse } from '../catalog.js';
import { AnalyticsQueryBody, AnalyticsQueryResponse } from './query-shapes.js';
import { runAnalyticsQuery } from './run.js';

export function analyticsQueryRoutes(deps: AppDeps): Router {
  const router = Router();
  const QueryBody = deps.openapi.addSchema('AnalyticsQuery', AnalyticsQueryBody);
  const QueryResponse = deps.openapi.addSchema('AnalyticsQueryResponse', AnalyticsQueryResponse);
  const Catalog = deps.openapi.addSchema('AnalyticsCatalog', AnalyticsCatalog);

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
