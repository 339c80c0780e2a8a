/**
 * The preset views' parameters and payloads, declared once as TypeBox schemas: the OpenAPI
 * components (view-routes.ts registers them; the cost object is the cost module's), the types the
 * views build (`Static`) and the ones the dashboard imports. The loose parts the contract leaves open
 * are described as docs/analytics.md decides them. This file imports nothing of the server but
 * shape files, so the dashboard's type check can read it.
 */
import { Type, type Static, type TObject, type TProperties } from 'typebox';
import { LIMITS } from '../catalog.js';
import { attributionCoverageField, CostObject, CostTraceCounts, costSourceField, lowerBoundReasonsField } from '../../cost/cost-shapes.js';
import { FRESHNESS_PROPERTIES, type Freshness } from '../../ingest/freshness-shapes.js';
import { componentRef, constant, dateTime, keyed, mapOf, nullable, objectOrNull, stringEnum } from '../../platform/http/shape-kit.js';

export const VIEW_NAMES = ['general', 'base', 'window', 'model_scorecard', 'agent_scorecard', 'tool_aggregates', 'roi'] as const;
export const GRANULARITIES = ['day', 'week', 'month'] as const;
/** The capabilities the window view's coverage block reports (docs/analytics.md "Coverage"). */
export const CAPABILITIES = ['root_status', 'root_duration', 'agents', 'tokens', 'model', 'provider', 'cost_basis', 'tools'] as const;
export const DEFAULT_HOURS = 24;
/** The general view looks back at most as far as events are kept (90 days). */
export const MAX_HOURS = LIMITS.max_window_days * 24;

const instant = (description: string) => Type.String({ description: `${description} ISO 8601 UTC at a whole second, e.g. 2026-01-01T00:00:00Z.` });

/**
 * The documented parameters: the REST query string's schema, whose property schemas the MCP view
 * tools take as their arguments (src/mcp/tools.ts). Types only: every rule (formats, ranges, which
 * view needs what) is view-params.ts's, so REST and MCP answer the same details.
 */
export const ViewQuery = Type.Object({
  view: Type.Optional(stringEnum(VIEW_NAMES, { description: 'Omitted: general.' })),
  start: Type.Optional(instant('Window start, inclusive. Required by base, window, agent_scorecard, tool_aggregates, model_scorecard.')),
  endExclusive: Type.Optional(instant('Window end, exclusive. Required by base, window, agent_scorecard, tool_aggregates; optional for model_scorecard; for general, the end of the lookback (default now).')),
  end_exclusive: Type.Optional(instant('Same as endExclusive.')),
  end: Type.Optional(instant('model_scorecard only: inclusive end, in place of endExclusive.')),
  hours: Type.Optional(Type.String({ description: `general only: lookback in whole hours, 1 to ${MAX_HOURS}; default ${DEFAULT_HOURS}.` })),
  granularity: Type.Optional(stringEnum(GRANULARITIES, { description: 'Series buckets: day (default), week (starting Sunday), month.' })),
});

const num = Type.Number();
const numOrNull = nullable(Type.Number());
const int = Type.Integer();
const str = Type.String();
const bool = Type.Boolean();
const date = Type.String({ description: "Bucket start, 'YYYY-MM-DD' (UTC): the day, the week's Sunday, or the month's 1st." });

/** The cost object as the view components refer to it (registered once as `CostObject`). */
export const COST_OBJECT_COMPONENT = 'CostObject';
const costObject = componentRef(COST_OBJECT_COMPONENT, CostObject);

export const SeriesPoint = Type.Object({ date, value: num });
export type SeriesPoint = Static<typeof SeriesPoint>;
const series = Type.Array(SeriesPoint);

/** The window an answer covers, echoed beside its figures. */
export const WindowEcho = Type.Object({ start: dateTime, end_exclusive: dateTime });

const percentiles = { p50: numOrNull, p95: numOrNull, p99: numOrNull };
export const Percentiles = Type.Object(percentiles);
export type Percentiles = Static<typeof Percentiles>;

export const GeneralPayload = Type.Object({
  window: WindowEcho,
  requests: series,
  errors: series,
  speed: Type.Array(SeriesPoint, { description: 'Mean output tokens per second of the model calls with a known speed; 0 in a bucket without one.' }),
  prompt_tokens: series,
  completion_tokens: series,
  top_models: Type.Array(Type.Object({ model: str, count: int })),
  speed_percentiles_timeseries: Type.Array(Type.Object({ date, ...percentiles })),
  totals: Type.Intersect([
    costObject,
    Type.Object({ requests: int, errors: int, avg_speed: numOrNull, prompt_tokens: int, completion_tokens: int, speed_percentiles: Percentiles }),
  ]),
});
export type GeneralPayload = Static<typeof GeneralPayload>;

export const CoverageEntry = Type.Object({ observed: int, eligible: int, is_lower_bound: Type.Optional(bool) });
export type CoverageEntry = Static<typeof CoverageEntry>;
export const CoverageBlock = Type.Object({
  capability: keyed(CAPABILITIES, bool),
  window: keyed(CAPABILITIES, objectOrNull(CoverageEntry)),
  window_traces: int,
});
export type CoverageBlock = Static<typeof CoverageBlock>;

export const WindowPayload = Type.Object({
  window: WindowEcho,
  latency: Type.Object({ granularity: stringEnum(GRANULARITIES), points: Type.Array(Type.Object({ date, p50: numOrNull, p95: numOrNull })) }),
  totals: Type.Object({ p50: numOrNull, p95: numOrNull, failed_runs: int, root_status_known: int, root_absent: int, traces: int, error_rate: numOrNull }),
  coverage: CoverageBlock,
  cost: Type.Intersect([costObject, Type.Object({ model_tokens_truncated: bool, unpriced_models_truncated: bool, cost_trace_counts: CostTraceCounts })]),
});
export type WindowPayload = Static<typeof WindowPayload>;

export const CostByModelEntry = Type.Object({ date, values: mapOf(num), coverage: attributionCoverageField, attributed_traces: int, traces: int });

export const BasePayload = Type.Object({
  window: WindowEcho,
  traces: series,
  errors: Type.Array(Type.Object({ date, span_errors: int, failed_runs: int, root_status_known: int, root_absent: int, traces: int })),
  tokens: Type.Array(Type.Object({ date, input_tokens: int, output_tokens: int })),
  cost: Type.Array(Type.Intersect([costObject, Type.Object({ date, traces: int })])),
  cost_by_model: Type.Array(CostByModelEntry),
  cost_by_model_source: constant('query_time'),
  cost_by_model_coverage: attributionCoverageField,
});
export type BasePayload = Static<typeof BasePayload>;

export const AgentScorecardRow = Type.Object({
  agent: str,
  traces: int,
  p50: numOrNull,
  p95: numOrNull,
  error_rate: numOrNull,
  root_status_known: int,
  tools_used: int,
  tools_used_is_lower_bound: bool,
  tokens: int,
  cost: numOrNull,
  cost_is_lower_bound: bool,
  cost_source: costSourceField,
  cost_lower_bound_reasons: lowerBoundReasonsField,
  model_breakdown_truncated: bool,
});
export type AgentScorecardRow = Static<typeof AgentScorecardRow>;
export const AgentScorecardPayload = Type.Object({ window: WindowEcho, rows: Type.Array(AgentScorecardRow) });
export type AgentScorecardPayload = Static<typeof AgentScorecardPayload>;

export const ToolRow = Type.Object({ tool: str, calls: int, errors: int, error_rate: num, p50: num, p95: num, traces: int, output_tokens: int });
export type ToolRow = Static<typeof ToolRow>;
/** Calls in the bucket (failing calls for failing_volume) over all tools, and the same per tool with at least one. */
export const VolumePoint = Type.Object({ date, value: int, by_tool: mapOf(int) });
export type VolumePoint = Static<typeof VolumePoint>;
/** A tool's share of the window's failing calls, and the running sum down the list (a Pareto curve). */
export const ErrorConcentration = Type.Object({ tool: str, errors: int, share: num, cumulative_share: num });
export type ErrorConcentration = Static<typeof ErrorConcentration>;
const volume = Type.Array(VolumePoint);
export const ToolAggregatesPayload = Type.Object({
  window: WindowEcho,
  granularity: stringEnum(GRANULARITIES),
  rows: Type.Array(ToolRow),
  volume,
  failing_volume: volume,
  error_concentration: Type.Array(ErrorConcentration),
});
export type ToolAggregatesPayload = Static<typeof ToolAggregatesPayload>;

export const ModelScorecardRow = Type.Object({
  model: str,
  traces: int,
  tokens: int,
  input_tokens: int,
  output_tokens: int,
  avg_speed: numOrNull,
  priced: bool,
  estimated_cost_usd: numOrNull,
});
export type ModelScorecardRow = Static<typeof ModelScorecardRow>;
export const ModelScorecardPayload = Type.Intersect([
  costObject,
  Type.Object({
    window: WindowEcho,
    cost_attribution_coverage: attributionCoverageField,
    cost_attribution_source: constant('query_time'),
    rows: Type.Array(ModelScorecardRow),
  }),
]);
export type ModelScorecardPayload = Static<typeof ModelScorecardPayload>;

export const ROI_STATES = ['connect', 'waiting', 'populated'] as const;
export const RoiPayload = Type.Object({
  window: WindowEcho,
  state: stringEnum(ROI_STATES),
  counts: Type.Object({ agents: int, lifetime_traces: int, issues: int, resolved: int }),
  base: Type.Object({ caught: series, resolved: series, dismissed: series, traces: series, errors: series, artifact_iterations: series, resolution_days: series }),
});
export type RoiPayload = Static<typeof RoiPayload>;

/** A view's REST answer: its payload with the freshness fields beside (additive, so not required). */
function withFreshness<P extends TProperties>(payload: TObject<P>) {
  return Type.Object({ ...payload.properties, ...FRESHNESS_PROPERTIES });
}

export const GeneralView = withFreshness(GeneralPayload);
export type GeneralView = Static<typeof GeneralView>;
export const WindowView = withFreshness(WindowPayload);
export type WindowView = Static<typeof WindowView>;
export const BaseView = withFreshness(BasePayload);
export type BaseView = Static<typeof BaseView>;
export const AgentScorecardView = withFreshness(AgentScorecardPayload);
export type AgentScorecardView = Static<typeof AgentScorecardView>;
export const ToolAggregatesView = withFreshness(ToolAggregatesPayload);
export type ToolAggregatesView = Static<typeof ToolAggregatesView>;
export const RoiView = withFreshness(RoiPayload);
export type RoiView = Static<typeof RoiView>;
/** The model scorecard is an allOf (the cost object and its own fields); the freshness properties sit beside it. */
export const ModelScorecardView = Type.Unsafe<ModelScorecardPayload & Partial<Freshness>>({ ...ModelScorecardPayload, properties: { ...FRESHNESS_PROPERTIES } });
export type ModelScorecardView = Static<typeof ModelScorecardView>;
