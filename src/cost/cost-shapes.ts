/**
 * The cost module's answers, declared once as TypeBox schemas: the cost object the analytics views
 * share (docs/cost.md, field for field) and the admin backfill's body and answer. The OpenAPI
 * document carries these objects, ajv validates with them, and the server's and the dashboard's
 * types are `Static` of them. This file imports nothing of the server, so the dashboard's type check
 * can read it.
 */
import { Type, type Static } from 'typebox';
import { bareEnum, nullable, stringEnum } from '../platform/http/shape-kit.js';

export const COST_SOURCES = ['stored', 'mixed', 'query_time'] as const;
export type CostSource = (typeof COST_SOURCES)[number];

/** Why a cost is a lower bound, in the order the answers list them. */
export const LOWER_BOUND_REASONS = ['unpriced_models', 'prices_unavailable', 'unbackfilled_traces', 'live_priced_breakdown_truncated', 'model_rollup_truncated'] as const;
export type LowerBoundReason = (typeof LOWER_BOUND_REASONS)[number];

export const ATTRIBUTION_COVERAGES = ['all', 'unwritten_only', 'none'] as const;
export type AttributionCoverage = (typeof ATTRIBUTION_COVERAGES)[number];

export const costSourceField = stringEnum(COST_SOURCES);
export const lowerBoundReasonsField = Type.Array(stringEnum(LOWER_BOUND_REASONS));
export const attributionCoverageField = stringEnum(ATTRIBUTION_COVERAGES);

/** The cost object shared by the analytics views. */
export const CostObject = Type.Object({
  estimated_cost_usd: nullable(Type.Number()),
  priced_token_share: Type.Number(),
  priced_tokens: Type.Number(),
  total_tokens: Type.Number(),
  unpriced_models: Type.Array(Type.String()),
  pricing_fetched_at: nullable(Type.String()),
  cost_source: costSourceField,
  cost_lower_bound: Type.Boolean(),
  cost_lower_bound_reasons: lowerBoundReasonsField,
  model_breakdown_truncated: Type.Boolean(),
  cost_rollup_truncated: Type.Boolean(),
});
export type CostObject = Static<typeof CostObject>;

/** The window view's cost_trace_counts (docs/cost.md "Trace counts"). */
export const CostTraceCounts = Type.Object({
  stored: Type.Integer(),
  live_priced: Type.Integer(),
  unbackfilled: Type.Integer(),
  stored_unpriced: Type.Integer(),
  stored_unavailable: Type.Integer(),
  breakdown_truncated: Type.Integer(),
});
export type CostTraceCounts = Static<typeof CostTraceCounts>;

/** POST /admin/backfill-costs: the project to limit the run to (default: the key's, or all). */
export const BackfillCostsBody = Type.Object({ project_id: Type.Optional(Type.String({ minLength: 1 })) }, { additionalProperties: false });
export type BackfillCostsBody = Static<typeof BackfillCostsBody>;

/** What a backfill run priced. */
export const BackfillResult = Type.Object({
  /** Unbackfilled rows found. */
  scanned: Type.Integer(),
  /** Rows rewritten with a cost. */
  rewritten: Type.Integer(),
  /** Rows left unbackfilled: they have tokens but no generation row to price them from. */
  without_generations: Type.Integer(),
  /** Catalog snapshot time the rewritten rows carry (their cost_priced_at), null when nothing was priced. */
  priced_at: nullable(Type.String()),
  /** Set when nothing could be done: no catalog. */
  skipped: Type.Optional(bareEnum(['prices_unavailable'])),
});
export type BackfillResult = Static<typeof BackfillResult>;
