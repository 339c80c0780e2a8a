/**
 * The preset views as services: one entry point that the REST route, its deprecated per-view
 * aliases and the MCP tools share, so each answers exactly what the others answer. It takes the
 * tenant and project explicitly; checking that the caller may see the project is the caller's job
 * (the route helper does it; an MCP tool must do the same, answering 404 like the route).
 *
 *   await runPresetView(deps, tenantId, projectId, 'window', { start, endExclusive, granularity })
 *
 * Only the requested view is computed (SPEC.md "Project analytics: preset views").
 */
import { agentScorecardView, type AgentScorecardPayload } from './agent-scorecard-view.js';
import { baseView, type BasePayload } from './base-view.js';
import { generalView, type GeneralPayload } from './general-view.js';
import { modelScorecardView, type ModelScorecardPayload } from './model-scorecard-view.js';
import { roiView, type RoiPayload } from './roi-view.js';
import { toolAggregatesView, type ToolAggregatesPayload } from './tool-aggregates-view.js';
import {
  parseGeneralParams,
  parseModelScorecardParams,
  parseRoiParams,
  parseViewName,
  parseWindowedParams,
  type RawViewParams,
  type ViewName,
} from './view-params.js';
import type { ViewDeps } from './view-sql.js';
import { windowView, type WindowPayload } from './window-view.js';

export { agentScorecardView, baseView, generalView, modelScorecardView, roiView, toolAggregatesView, windowView };
export type { ViewDeps, ViewName, RawViewParams };

export interface ViewPayloads {
  general: GeneralPayload;
  base: BasePayload;
  window: WindowPayload;
  model_scorecard: ModelScorecardPayload;
  agent_scorecard: AgentScorecardPayload;
  tool_aggregates: ToolAggregatesPayload;
  roi: RoiPayload;
}

/**
 * Validates `raw` for `view` (400 ValidationError naming the parameter) and computes that view.
 * `now` anchors the views that default to "up to now" (general, model_scorecard without an end, roi).
 */
export async function runPresetView<V extends ViewName>(deps: ViewDeps, tenantId: string, projectId: string, view: V, raw: RawViewParams, now = new Date()): Promise<ViewPayloads[V]> {
  // A statement past the time limit (waiting included) is the SQL layer's 504 query_timeout, as for the analytics query.
  return computeView(deps, tenantId, projectId, view, raw, now);
}

async function computeView<V extends ViewName>(deps: ViewDeps, tenantId: string, projectId: string, view: V, raw: RawViewParams, now: Date): Promise<ViewPayloads[V]> {
  const name: ViewName = view;
  switch (name) {
    case 'general':
      return (await generalView(deps, tenantId, projectId, parseGeneralParams(raw, now))) as ViewPayloads[V];
    case 'base':
      return (await baseView(deps, tenantId, projectId, parseWindowedParams(raw))) as ViewPayloads[V];
    case 'window':
      return (await windowView(deps, tenantId, projectId, parseWindowedParams(raw))) as ViewPayloads[V];
    case 'model_scorecard':
      return (await modelScorecardView(deps, tenantId, projectId, parseModelScorecardParams(raw, now))) as ViewPayloads[V];
    case 'agent_scorecard':
      return (await agentScorecardView(deps, tenantId, projectId, parseWindowedParams(raw))) as ViewPayloads[V];
    case 'tool_aggregates':
      return (await toolAggregatesView(deps, tenantId, projectId, parseWindowedParams(raw))) as ViewPayloads[V];
    case 'roi':
      return (await roiView(deps, tenantId, projectId, parseRoiParams(raw, now))) as ViewPayloads[V];
    default: {
      const never: never = name;
      throw new Error(`unknown view ${String(never)}`);
    }
  }
}

/** `view` as the REST route reads it: omitted → general (SPEC "Versioning" 3). */
export function requestedView(raw: RawViewParams): ViewName {
  return parseViewName(raw.view);
}
