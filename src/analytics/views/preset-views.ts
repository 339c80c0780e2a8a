/**
 * The preset views as services: one entry point that the REST route, its deprecated per-view
 * aliases and the MCP tools share, so each answers exactly what the others answer. It takes the
 * tenant and project explicitly; checking that the caller may see the project is the caller's job
 * (the route helper does it; an MCP tool must do the same, answering 404 like the route).
 *
 *   await runPresetView(deps, tenantId, projectId, 'window', { start, endExclusive, granularity })
 *
 * Only the requested view is computed.
 */
import type { AppDeps } from '../../app/app-deps.js';
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

type ViewRunner<V extends ViewName> = (deps: ViewDeps, tenantId: string, projectId: string, raw: RawViewParams, now: Date) => Promise<ViewPayloads[V]>;

/** Each view with its parameter parsing; typed per name, so a view cannot answer another's payload. */
const VIEWS: { [V in ViewName]: ViewRunner<V> } = {
  general: (deps, t, p, raw, now) => generalView(deps, t, p, parseGeneralParams(raw, now)),
  base: (deps, t, p, raw) => baseView(deps, t, p, parseWindowedParams(raw)),
  window: (deps, t, p, raw) => windowView(deps, t, p, parseWindowedParams(raw)),
  model_scorecard: (deps, t, p, raw, now) => modelScorecardView(deps, t, p, parseModelScorecardParams(raw, now)),
  agent_scorecard: (deps, t, p, raw) => agentScorecardView(deps, t, p, parseWindowedParams(raw)),
  tool_aggregates: (deps, t, p, raw) => toolAggregatesView(deps, t, p, parseWindowedParams(raw)),
  roi: (deps, t, p, raw, now) => roiView(deps, t, p, parseRoiParams(raw, now)),
};

/**
 * Validates `raw` for `view` (400 ValidationError naming the parameter) and computes that view.
 * `now` anchors the views that default to "up to now" (general, model_scorecard without an end, roi).
 * A statement past the time limit (waiting included) is the SQL layer's 504 query_timeout, as for
 * the analytics query.
 */
export function runPresetView<V extends ViewName>(deps: ViewDeps, tenantId: string, projectId: string, view: V, raw: RawViewParams, now = new Date()): Promise<ViewPayloads[V]> {
  return (VIEWS[view] as ViewRunner<V>)(deps, tenantId, projectId, raw, now);
}

/** What the views need of the process: both stores and the query time limit (REST and MCP alike). */
export function viewDeps(deps: AppDeps): ViewDeps {
  return { ch: deps.ch, sql: deps.sql, queryTimeoutSeconds: deps.config.queryTimeoutSeconds };
}

/** `view` as the REST route reads it: omitted → general. */
export function requestedView(raw: RawViewParams): ViewName {
  return parseViewName(raw.view);
}
