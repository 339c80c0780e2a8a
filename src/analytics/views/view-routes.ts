/**
 * REST routes of the preset views:
 * GET /projects/{project_id}/analytics?view=… and its deprecated per-view aliases, which run the
 * very same service with the view fixed by the path. Read or admin scope; an unknown project, one
 * of another tenant or one outside a project-limited key is a 404 (the route helper answers it).
 */
import { Router } from 'express';
import type { AppDeps } from '../../app/app-deps.js';
import { ValidationError } from '../../platform/http/errors.js';
import { defineRoute } from '../../app/route.js';
import type { JsonSchema } from '../../platform/http/openapi.js';
import { requestedView, runPresetView, viewDeps, type RawViewParams, type ViewName } from './preset-views.js';
import { GRANULARITIES } from './time-buckets.js';
import { freshnessOf } from '../../ingest/freshness.js';
import { DEFAULT_HOURS, MAX_HOURS, VIEW_NAMES } from './view-params.js';
import { registerViewSchemas } from './view-schemas.js';

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

const instant = (description: string) => ({ type: 'string', description: `${description} ISO 8601 UTC at a whole second, e.g. 2026-01-01T00:00:00Z.` });

/**
 * The documented parameters. Types only: every rule (formats, ranges, which view needs what) is
 * view-params.ts's, so REST and MCP answer the same details.
 */
function querySchema(withView: boolean): JsonSchema {
  return {
    type: 'object',
    properties: {
      ...(withView ? { view: { type: 'string', enum: [...VIEW_NAMES], description: 'Omitted: general.' } } : {}),
      start: instant('Window start, inclusive. Required by base, window, agent_scorecard, tool_aggregates, model_scorecard.'),
      endExclusive: instant('Window end, exclusive. Required by base, window, agent_scorecard, tool_aggregates; optional for model_scorecard; for general, the end of the lookback (default now).'),
      end_exclusive: instant('Same as endExclusive.'),
      end: instant('model_scorecard only: inclusive end, in place of endExclusive.'),
      hours: { type: 'string', description: `general only: lookback in whole hours, 1 to ${MAX_HOURS}; default ${DEFAULT_HOURS}.` },
      granularity: { type: 'string', enum: [...GRANULARITIES], description: 'Series buckets: day (default), week (starting Sunday), month.' },
    },
  };
}

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
  const schemas = registerViewSchemas(deps.openapi);
  const services = viewDeps(deps);

  defineRoute<unknown, RawViewParams>(router, deps, {
    method: 'get',
    path: '/projects/{project_id}/analytics',
    tag: 'analytics',
    scope: 'read',
    projectParam: true,
    summary: 'A preset analytics view of the project (view omitted: general); only the requested view is computed',
    query: querySchema(true),
    responses: { 200: { description: 'The payload of the requested view', schema: { anyOf: Object.values(schemas) } } },
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
      query: querySchema(true),
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
