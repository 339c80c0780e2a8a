/**
 * The shapes the dashboard reads, as the API answers them: each declared once, as a TypeBox schema
 * beside the server routes that answer it, and re-exported here under the names the pages use.
 * Type-only imports: the bundler erases them, so nothing of the server reaches the bundle.
 */

import type { CostObject, LowerBoundReason as CostLowerBoundReason } from '../../../src/cost/cost-shapes.js';
import type { Freshness } from '../../../src/ingest/freshness-shapes.js';

/** The analytics query's body and answer, declared once beside its route (the server's TypeBox schemas). */
export type { AnalyticsQueryBody, AnalyticsQueryResponse } from '../../../src/analytics/query/query-shapes.js';

/** The analytics catalog (events and their fields), declared once beside the query language. */
export type { CatalogResponse as AnalyticsCatalog } from '../../../src/analytics/catalog.js';

/** A project as the API answers it: declared once beside tenancy's routes. */
export type { Project } from '../../../src/tenancy/tenancy-shapes.js';

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

/** A trace's detail (default form), its context bundle, their parts, and the trace list: declared once beside the trace routes. */
export type {
  Span,
  SpanEvent,
  TraceContextBundle,
  TraceDetail,
  TraceIssueOccurrence,
  TraceList,
  TraceListItem,
  TraceStats,
  TraceToolCall,
} from '../../../src/traces/trace-schemas.js';

/** How fresh a trace list or view answer is (docs/analytics.md "Freshness"); absent from older servers. */
export type FreshnessFields = Partial<Freshness>;

/** Issues, their tags, a page of them and an issue's occurrences (GET /api/issues/{id}/occurrences rows): declared once beside the issue routes. */
export type { Issue, IssueList, IssueOccurrence, IssueStatus, IssueTag } from '../../../src/workspace/issues/issue-schemas.js';

/** An issue's ticket link with its activity and pull requests: declared once beside the ticket routes. */
export type { TicketLink } from '../../../src/workspace/tickets/ticket-schemas.js';

/** A webhook endpoint as GET answers it (never its secret), and one delivery attempt of its log: declared once beside the routes. */
export type { WebhookDelivery, WebhookEndpoint } from '../../../src/workspace/webhooks/webhook-schemas.js';

/** A project's retention (days its figures and its raw content are kept), and a deletion job: declared once beside the data-lifecycle routes. */
export type { Retention, RetentionInput } from '../../../src/lifecycle/retention-schemas.js';
export type { Deletion } from '../../../src/lifecycle/deletion-schemas.js';

/** A user of the tenant (GET /api/users, admin scope). */
export interface User {
  id: string;
  name: string;
  email: string | null;
  created_at: string;
}

/** An API key as listed (never its secret); `key` only in the answer to its creation. */
export interface ApiKey {
  id: string;
  name: string;
  scope: 'read' | 'admin' | 'ingest';
  project_id: string | null;
  user_id: string | null;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
  key?: string;
}
