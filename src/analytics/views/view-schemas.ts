/**
 * OpenAPI schemas of the preset view payloads (and the "Cost
 * object"), registered once as components. They document the answers; the loose parts the contract leaves
 * open are described as docs/analytics.md decides them.
 */
import type { JsonSchema, OpenApiDocument } from '../../platform/http/openapi.js';
import { FRESHNESS_PROPERTIES } from '../../ingest/freshness.js';
import { CAPABILITIES } from './coverage.js';
import { GRANULARITIES } from './time-buckets.js';

const num = { type: 'number' };
const numOrNull = { type: ['number', 'null'] };
const int = { type: 'integer' };
const str = { type: 'string' };
const bool = { type: 'boolean' };
const date = { type: 'string', description: "Bucket start, 'YYYY-MM-DD' (UTC): the day, the week's Sunday, or the month's 1st." };

const obj = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}): JsonSchema => ({
  type: 'object',
  required: Object.keys(properties),
  properties,
  ...extra,
});

/** The REST answer's freshness fields (src/ingest/freshness.ts), beside the view's own; additive, so not required. */
const withFreshness = (schema: JsonSchema): JsonSchema => ({ ...schema, properties: { ...(schema.properties as object), ...FRESHNESS_PROPERTIES } });

const series = { type: 'array', items: obj({ date, value: num }) };
const windowEcho = obj({ start: { type: 'string', format: 'date-time' }, end_exclusive: { type: 'string', format: 'date-time' } });

export const costObjectProperties = {
  estimated_cost_usd: numOrNull,
  priced_token_share: num,
  priced_tokens: num,
  total_tokens: num,
  unpriced_models: { type: 'array', items: str },
  pricing_fetched_at: { type: ['string', 'null'] },
  cost_source: { type: 'string', enum: ['stored', 'mixed', 'query_time'] },
  cost_lower_bound: bool,
  cost_lower_bound_reasons: {
    type: 'array',
    items: { type: 'string', enum: ['unpriced_models', 'prices_unavailable', 'unbackfilled_traces', 'live_priced_breakdown_truncated', 'model_rollup_truncated'] },
  },
  model_breakdown_truncated: bool,
  cost_rollup_truncated: bool,
};

const coverageEnum = { type: 'string', enum: ['all', 'unwritten_only', 'none'] };
const percentiles = { p50: numOrNull, p95: numOrNull, p99: numOrNull };

export function registerViewSchemas(openapi: OpenApiDocument) {
  const CostObject = openapi.addSchema('CostObject', obj(costObjectProperties));

  const general = obj({
    window: windowEcho,
    requests: series,
    errors: series,
    speed: { ...series, description: 'Mean output tokens per second of the model calls with a known speed; 0 in a bucket without one.' },
    prompt_tokens: series,
    completion_tokens: series,
    top_models: { type: 'array', items: obj({ model: str, count: int }) },
    speed_percentiles_timeseries: { type: 'array', items: obj({ date, ...percentiles }) },
    totals: {
      allOf: [
        CostObject,
        obj({ requests: int, errors: int, avg_speed: numOrNull, prompt_tokens: int, completion_tokens: int, speed_percentiles: obj(percentiles) }),
      ],
    },
  });

  const coverageEntry = { oneOf: [obj({ observed: int, eligible: int, is_lower_bound: bool }, { required: ['observed', 'eligible'] }), { type: 'null' }] };
  const window = obj({
    window: windowEcho,
    latency: obj({ granularity: { type: 'string', enum: [...GRANULARITIES] }, points: { type: 'array', items: obj({ date, p50: numOrNull, p95: numOrNull }) } }),
    totals: obj({ p50: numOrNull, p95: numOrNull, failed_runs: int, root_status_known: int, root_absent: int, traces: int, error_rate: numOrNull }),
    coverage: obj({
      capability: obj(Object.fromEntries(CAPABILITIES.map((c) => [c, bool]))),
      window: obj(Object.fromEntries(CAPABILITIES.map((c) => [c, coverageEntry]))),
      window_traces: int,
    }),
    cost: {
      allOf: [
        CostObject,
        obj({
          model_tokens_truncated: bool,
          unpriced_models_truncated: bool,
          cost_trace_counts: obj({ stored: int, live_priced: int, unbackfilled: int, stored_unpriced: int, stored_unavailable: int, breakdown_truncated: int }),
        }),
      ],
    },
  });

  const base = obj({
    window: windowEcho,
    traces: series,
    errors: { type: 'array', items: obj({ date, span_errors: int, failed_runs: int, root_status_known: int, root_absent: int, traces: int }) },
    tokens: { type: 'array', items: obj({ date, input_tokens: int, output_tokens: int }) },
    cost: { type: 'array', items: { allOf: [CostObject, obj({ date, traces: int })] } },
    cost_by_model: {
      type: 'array',
      items: obj({ date, values: { type: 'object', additionalProperties: num }, coverage: coverageEnum, attributed_traces: int, traces: int }),
    },
    cost_by_model_source: { const: 'query_time' },
    cost_by_model_coverage: coverageEnum,
  });

  const agentScorecard = obj({
    window: windowEcho,
    rows: {
      type: 'array',
      items: obj({
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
        cost_source: costObjectProperties.cost_source,
        cost_lower_bound_reasons: costObjectProperties.cost_lower_bound_reasons,
        model_breakdown_truncated: bool,
      }),
    },
  });

  const volume = { type: 'array', items: obj({ date, value: int, by_tool: { type: 'object', additionalProperties: int } }) };
  const toolAggregates = obj({
    window: windowEcho,
    granularity: { type: 'string', enum: [...GRANULARITIES] },
    rows: { type: 'array', items: obj({ tool: str, calls: int, errors: int, error_rate: num, p50: num, p95: num, traces: int, output_tokens: int }) },
    volume,
    failing_volume: volume,
    error_concentration: { type: 'array', items: obj({ tool: str, errors: int, share: num, cumulative_share: num }) },
  });

  const modelScorecard = {
    allOf: [
      CostObject,
      obj({
        window: windowEcho,
        cost_attribution_coverage: coverageEnum,
        cost_attribution_source: { const: 'query_time' },
        rows: {
          type: 'array',
          items: obj({ model: str, traces: int, tokens: int, input_tokens: int, output_tokens: int, avg_speed: numOrNull, priced: bool, estimated_cost_usd: numOrNull }),
        },
      }),
    ],
  };

  const roi = obj({
    window: windowEcho,
    state: { type: 'string', enum: ['connect', 'waiting', 'populated'] },
    counts: obj({ agents: int, lifetime_traces: int, issues: int, resolved: int }),
    base: obj({ caught: series, resolved: series, dismissed: series, traces: series, errors: series, artifact_iterations: series, resolution_days: series }),
  });

  return {
    general: openapi.addSchema('AnalyticsGeneralView', withFreshness(general)),
    window: openapi.addSchema('AnalyticsWindowView', withFreshness(window)),
    base: openapi.addSchema('AnalyticsBaseView', withFreshness(base)),
    agent_scorecard: openapi.addSchema('AnalyticsAgentScorecardView', withFreshness(agentScorecard)),
    tool_aggregates: openapi.addSchema('AnalyticsToolAggregatesView', withFreshness(toolAggregates)),
    model_scorecard: openapi.addSchema('AnalyticsModelScorecardView', withFreshness(modelScorecard)),
    roi: openapi.addSchema('AnalyticsRoiView', withFreshness(roi)),
  };
}
