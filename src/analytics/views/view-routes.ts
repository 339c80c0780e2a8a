/**
 * REST routes of the preset views:
 * GET /projects/{project_id}/analytics?view=… and its deprecated per-view aliases, which run the
 * very same service with the view fixed by the path. Read or admin scope; an unknown project, one
 * of another tenant or one outside a project-limited key is a 404 (the route helper answers it).
 */
import { Router } from 'express';
import { Type } from 'typebox';
import type { AppDeps } from '../../app/app-deps.js';
import { ValidationError } from '../../platform/http/errors.js';
import type { JsonSchema } from '../../platform/http/openapi.js';
import { defineRoute } from '../../app/route.js';
import { requestedView, runPresetView, viewDeps, type RawViewParams, type ViewName } from './preset-views.js';
import { freshnessOf } from '../../ingest/freshness.js';
import { VIEW_NAMES } from './view-params.js';
import { CostObject } from '../../cost/cost-shapes.js';
import {
  AgentScorecardView,
  BaseView,
  COST_OBJECT_COMPONENT,
  GeneralView,
  ModelScorecardView,
  RoiView,
  ToolAggregatesView,
  ViewQuery,
  WindowView,
} from './view-schemas.js';

/** Deprecated per-view paths, kept for older clients, relative to /projects/{project_id}. */
export const VIEW_ALIASES: Record<ViewName, string> = {
  general: 'general',
  base: 'base',
  window: 'window',
  model_scorecard: 'model-scorecard',
  agent_scorecard: 'agent-scorecard',
  tool_aggregates: 'tool-aggregates',
  roi: 'roi',
};

/**
 * A view's REST answer: its payload with the freshness fields (read before the view runs, so the
 * payload is at least as fresh as they say), timed by view for the metrics.
 */
async function answerView(deps: AppDeps, view: ViewName, run: () => Promise<object>): Promise<object> {
  const freshness = freshnessOf(deps);
  const started = performance.now();
  const payload = await run();
  deps.metrics.viewDuration.observe({ view }, (performance.now() - started) / 1000);
  return { ...payload, ...freshness };
}

export function presetViewRoutes(deps: AppDeps): Router {
  const router = Router();
  // The cost object first: the view components refer to it.
  deps.openapi.addSchema(COST_OBJECT_COMPONENT, CostObject);
  const schemas: Record<ViewName, JsonSchema> = {
    general: deps.openapi.addSchema('AnalyticsGeneralView', GeneralView),
    window: deps.openapi.addSchema('AnalyticsWindowView', WindowView),
    base: deps.openapi.addSchema('AnalyticsBaseView', BaseView),
    agent_scorecard: deps.openapi.addSchema('AnalyticsAgentScorecardView', AgentScorecardView),
    tool_aggregates: deps.openapi.addSchema('AnalyticsToolAggregatesView', ToolAggregatesView),
    model_scorecard: deps.openapi.addSchema('AnalyticsModelScorecardView', ModelScorecardView),
    roi: deps.openapi.addSchema('AnalyticsRoiView', RoiView),
  };
  const services = viewDeps(deps);

  defineRoute<unknown, RawViewParams>(router, deps, {
    method: 'get',
    path: '/projects/{project_id}/analytics',
    tag: 'analytics',
    scope: 'read',
    projectParam: true,
    summary: 'A preset analytics view of the project (view omitted: general); only the requested view is computed',
    query: ViewQuery,
    responses: { 200: { description: 'The payload of the requested view', schema: Type.Union(Object.values(schemas).map((ref) => Type.Unsafe(ref))) } },
    handler: async ({ tenantId, project, query }) => answerView(deps, requestedView(query), () => runPresetView(services, tenantId, project.id, requestedView(query), query)),
  });

  for (const view of VIEW_NAMES) {
    defineRoute<unknown, RawViewParams>(router, deps, {
      method: 'get',
      path: `/projects/{project_id}/${VIEW_ALIASES[view]}`,
      tag: 'analytics',
      scope: 'read',
      projectParam: true,
      summary: `Deprecated: same as GET /projects/{project_id}/analytics?view=${view}`,
      query: ViewQuery,
      responses: { 200: { description: `The ${view} view`, schema: schemas[view] } },
      handler: async ({ tenantId, project, query }) => {
        // The path names the view; a contradicting ?view= is a mistake worth reporting.
        if (query.view !== undefined && query.view !== '' && query.view !== view) {
          throw new ValidationError(`view: this path serves the ${view} view; use /projects/{project_id}/analytics?view=${typeof query.view === 'string' ? query.view : JSON.stringify(query.view)}`);
        }
        return answerView(deps, view, () => runPresetView(services, tenantId, project.id, view, query));
      },
    });
  }
  return router;
}
