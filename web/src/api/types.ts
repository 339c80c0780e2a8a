/**
 * Response shapes the dashboard reads, as the API answers them. Fields the API may leave out are
 * optional here, and pages show them only when present.
 */

import type { CostObject, LowerBoundReason as CostLowerBoundReason } from '../../../src/cost/cost-shapes.js';
import type { Freshness } from '../../../src/ingest/freshness-shapes.js';

/** The analytics query's body and answer, declared once beside its route (the server's TypeBox schemas). */
export type { AnalyticsQueryBody, AnalyticsQueryResponse } from '../../../src/analytics/query/query-shapes.js';

export interface Project {
  id: string;
  name: string;
  description: string | null;
  sort_order: number;
  created_at: string | null;
  updated_at: string | null;
  mcp_activated_at: string | null;
}

/** The cost object the analytics views share, and why a cost may be a lower bound: the cost module's shapes. */
export type { CostLowerBoundReason, CostObject };

/** The preset views' payloads as the REST answers carry them (freshness fields beside): declared once beside the views. */
export type {
  AgentScorecardRow,
  AgentScorecardView,
  ErrorConcentration as ToolErrorConcentration,
  GeneralView,
  ModelScorecardRow,
  ModelScorecardView,
  Percentiles,
  SeriesPoint as DatedValue,
  ToolAggregatesView,
  ToolRow as ToolAggregateRow,
  VolumePoint as ToolVolumePoint,
  WindowView,
} from '../../../src/analytics/views/view-schemas.js';

export interface TraceToolCall {
  span_id: string;
  name: string;
  duration_ms: number;
  is_error: boolean;
  user_facing_message?: string;
  user_facing_message_truncated?: boolean;
  user_facing_messages_omitted?: number;
}

export interface SpanEvent {
  name?: string;
  timestamp?: string;
  time_unix_nano?: string;
  attributes?: Record<string, unknown>;
  [key: string]: unknown;
}

export interface Span {
  id?: string;
  otel_span_id: string;
  parent_otel_span_id: string | null;
  name: string;
  kind: string | number;
  start_time_ns: string | number;
  end_time_ns: string | number;
  duration_ms: number;
  status_code: string;
  status_description: string;
  input_tokens: number;
  output_tokens: number;
  model_name: string;
  tps?: number | null;
  /** generation, tool or other (the ingest attribute mapping's span class). */
  span_class?: string;
  attributes?: Record<string, unknown>;
  events?: unknown;
}

export interface TraceStats {
  span_count: number;
  total_tokens: number;
  total_duration_ms: number;
  error_count: number;
  tool_calls?: { name: string; otel_span_id: string; status: string }[];
  models_used?: string[];
}

/** A trace in the default detail form. */
export interface TraceDetail {
  id: string;
  otel_trace_id: string;
  project_id: string;
  project_name: string;
  service_name: string;
  agent_name: string;
  thread_id: string;
  thread_trace_count: number;
  agent_input_display: string;
  agent_input: unknown;
  agent_output: unknown;
  release: string;
  tool_calls: TraceToolCall[];
  has_error: boolean;
  total_duration_ms: number;
  timestamp: string;
  spans: Span[];
  stats: TraceStats;
  issue_extraction?: { status: string; reason: string; issue_count: number; occurrence_count: number; completed_at: string | null } | null;
  /** The cost stored when the trace was processed, and how it was decided (docs/cost.md "On a trace"). */
  estimated_cost_usd: number | null;
  estimated_cost_basis: 'stored' | 'partial' | 'unpriced' | 'unavailable' | 'pending';
  cost_unpriced_models: string[];
}

/** A row of GET /api/projects/{pid}/traces; fields beyond id are shown when present. */
export interface TraceListItem {
  id: string;
  otel_trace_id?: string;
  timestamp?: string;
  agent_name?: string;
  service_name?: string;
  thread_id?: string;
  agent_input_display?: string;
  has_error?: boolean;
  total_duration_ms?: number;
  duration_ms?: number;
  span_count?: number;
  total_tokens?: number;
  error_count?: number;
  models_used?: string[];
  release?: string;
  tool_call_count?: number;
  estimated_cost_usd?: number | null;
}

/** How fresh a trace list or view answer is (docs/analytics.md "Freshness"); absent from older servers. */
export type FreshnessFields = Partial<Freshness>;

export interface TraceList extends FreshnessFields {
  traces: TraceListItem[];
  next_cursor?: string | null;
}

/** GET /api/issues/{id}/occurrences rows; the context bundle carries the same kind for its trace. */
export interface IssueOccurrence {
  trace_id: string;
  otel_trace_id?: string;
  issue_id?: string;
  span_id?: string | null;
  occurred_at?: string;
  error_type?: string;
  span_name?: string;
  tool_name?: string;
  message?: string;
  [key: string]: unknown;
}

/** An issue occurrence as the context bundle lists it for its trace. */
export interface TraceIssueOccurrence {
  issue_id: string;
  issue_title: string;
  issue_status: string;
  span_id: string;
  occurred_at: string;
}

/** The context bundle: GET /api/traces/{id}?expand=context. */
export interface TraceContextBundle {
  id: string;
  project_id: string;
  project_name: string;
  trace: Omit<TraceDetail, 'spans' | 'stats' | 'project_name'>;
  stats: TraceStats;
  spans: Span[];
  spans_total: number;
  spans_offset: number;
  spans_limit: number;
  issue_occurrences: TraceIssueOccurrence[];
}

export interface IssueTag {
  id: string;
  name: string;
  color: string;
}

export type IssueStatus = 'open' | 'in_progress' | 'resolved' | 'dismissed';

export interface Issue {
  id: string;
  project_id: string;
  title: string;
  description: string | null;
  status: IssueStatus;
  assignee_user_id: string | null;
  fingerprint: string | null;
  flagged: boolean;
  first_seen_at: string | null;
  last_seen_at: string | null;
  occurrence_count: number;
  created_at: string;
  updated_at: string;
  tags: IssueTag[];
}

export interface IssueList {
  issues: Issue[];
  next_cursor?: string | null;
}

export interface TicketLink {
  project_id: string;
  issue_id: string;
  issue_assignee_user_id: string | null;
  link: {
    id: string;
    origin: string;
    linked_at: string;
    last_successful_sync_at: string | null;
    last_error_at: string | null;
    sync_status: string;
    last_error_code: string | null;
    last_error_message: string | null;
    ticket: {
      id: string;
      identifier: string;
      url: string;
      title: string;
      team_name?: string;
      state_name?: string;
      state_type?: string;
      tracker_assignee?: { id: string; name: string; avatar_url: string } | null;
    };
  } | null;
  activity?: { id: string; type: string; actor_type: string; actor_id: string; ticket_identifier: string; occurred_at: string }[];
  pull_requests?: { id: string; title: string; url: string }[];
}

/** A webhook endpoint as GET answers it (never its secret), and one delivery attempt of its log: declared once beside the routes. */
export type { WebhookDelivery, WebhookEndpoint } from '../../../src/workspace/webhooks/webhook-schemas.js';
