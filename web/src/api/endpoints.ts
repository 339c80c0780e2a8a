import { viewGranularity, type WindowSelection } from '../time-window.js';
import { api } from './client.js';
import type {
  AgentScorecardView,
  AnalyticsCatalog,
  ApiKey,
  Deletion,
  GeneralView,
  Issue,
  IssueList,
  IssueOccurrence,
  IssueTag,
  ModelScorecardView,
  Project,
  Retention,
  RetentionInput,
  TicketLink,
  ToolAggregatesView,
  TraceContextBundle,
  TraceList,
  User,
  WebhookDelivery,
  WebhookEndpoint,
  WindowView,
} from './types.js';

/** Every REST call the dashboard makes, in one place. */

const enc = encodeURIComponent;

export function listProjects(key?: string): Promise<{ projects: Project[] }> {
  return api.get('/projects', undefined, key);
}

export function getProject(projectId: string): Promise<Project> {
  return api.get(`/projects/${enc(projectId)}`);
}

/** The project's retention in force (its own, the tenant's default, or 90 days). */
export function getRetention(projectId: string): Promise<Retention> {
  return api.get(`/projects/${enc(projectId)}/retention`);
}

/** Sets the project's own retention (admin); applies to stored data too. */
export function setRetention(projectId: string, input: RetentionInput): Promise<Retention> {
  return api.put(`/projects/${enc(projectId)}/retention`, input);
}

/** The project's deletion jobs, newest first. */
export function listDeletions(projectId: string, limit = 20): Promise<{ deletions: Deletion[] }> {
  return api.get(`/projects/${enc(projectId)}/deletions`, { limit });
}

const analytics = (projectId: string) => `/projects/${enc(projectId)}/analytics`;

/**
 * The general view looks back `hours` from an anchor; the analytics module also takes
 * `endExclusive` as that anchor, so every panel of a page reads the same window. A custom window
 * becomes its length in whole hours, rounded up, ending at its end.
 */
export function generalParams(window: WindowSelection): Record<string, string> {
  const hours = window.hours ?? Math.max(1, Math.ceil((Date.parse(window.endExclusive) - Date.parse(window.start)) / 3_600_000));
  return { view: 'general', hours: String(hours), endExclusive: window.endExclusive, granularity: viewGranularity(window) };
}

export function getGeneralView(projectId: string, window: WindowSelection): Promise<GeneralView> {
  return api.get(analytics(projectId), generalParams(window));
}

/** window, agent_scorecard and tool_aggregates take start + endExclusive. */
export function windowParams(view: 'window' | 'agent_scorecard' | 'tool_aggregates', window: WindowSelection): Record<string, string> {
  return { view, start: window.start, endExclusive: window.endExclusive, granularity: viewGranularity(window) };
}

export function getWindowView(projectId: string, window: WindowSelection): Promise<WindowView> {
  return api.get(analytics(projectId), windowParams('window', window));
}

export function getAgentScorecard(projectId: string, window: WindowSelection): Promise<AgentScorecardView> {
  return api.get(analytics(projectId), windowParams('agent_scorecard', window));
}

export function getToolAggregates(projectId: string, window: WindowSelection): Promise<ToolAggregatesView> {
  return api.get(analytics(projectId), windowParams('tool_aggregates', window));
}

/** model_scorecard takes start and an optional inclusive end: the last second of the window. */
export function modelScorecardParams(window: WindowSelection): Record<string, string> {
  const end = new Date(new Date(window.endExclusive).getTime() - 1000).toISOString().replace('.000Z', 'Z');
  return { view: 'model_scorecard', start: window.start, end };
}

export function getModelScorecard(projectId: string, window: WindowSelection): Promise<ModelScorecardView> {
  return api.get(analytics(projectId), modelScorecardParams(window));
}

export interface TraceFilters {
  /** Search over the traces' content (words, "phrases", -word, field:word). */
  q?: string;
  agent_name?: string;
  has_error?: string;
  thread_id?: string;
  /** One of the models a trace called (exact). */
  model?: string;
  /** One of the tools a trace called (exact). */
  tool?: string;
  release?: string;
  /** Inclusive bounds on total_duration_ms and estimated_cost_usd, as decimal text. */
  min_duration_ms?: string;
  max_duration_ms?: string;
  min_cost_usd?: string;
  max_cost_usd?: string;
  start?: string;
  end?: string;
  cursor?: string;
  limit?: number;
  /** Ask for `total`, the count of every matching trace. */
  include_total?: boolean;
}

export function listTraces(projectId: string, filters: TraceFilters): Promise<TraceList> {
  // Traces still settling are listed too (marked in the table), so a run shows up within a second.
  return api.get(`/projects/${enc(projectId)}/traces`, { include_unsettled: 'true', ...filters });
}

export function listAgentNames(projectId: string): Promise<{ agent_names: string[] }> {
  return api.get('/traces/agent-names', { project_id: projectId });
}

/** One page of the context bundle (spans_limit 1..500, spans_offset >= 0). */
export function getTraceContext(
  traceId: string,
  projectId: string,
  page: { offset: number; limit: number; attributes: boolean; events: boolean },
): Promise<TraceContextBundle> {
  return api.get(`/traces/${enc(traceId)}`, {
    expand: 'context',
    project_id: projectId,
    spans_offset: page.offset,
    spans_limit: page.limit,
    include_attributes: page.attributes,
    include_events: page.events,
  });
}

/** GET /api/projects/{pid}/issues filters: status (comma list), tag (a tag id), cursor; the optional agent and trend columns. */
export interface IssueFilters {
  status?: string;
  tag?: string;
  cursor?: string;
  limit?: number;
  include_agents?: boolean;
  include_trend?: boolean;
}

export function listIssues(projectId: string, filters: IssueFilters): Promise<IssueList> {
  return api.get(`/projects/${enc(projectId)}/issues`, { ...filters });
}

export function getIssue(issueId: string): Promise<Issue> {
  return api.get(`/issues/${enc(issueId)}`);
}

export function listOccurrences(issueId: string, cursor?: string): Promise<{ occurrences: IssueOccurrence[]; next_cursor: string | null }> {
  return api.get(`/issues/${enc(issueId)}/occurrences`, { cursor, limit: 50 });
}

export type IssueAction = 'start-review' | 'resolve' | 'dismiss' | 'reopen';

export function issueAction(issueId: string, action: IssueAction): Promise<Partial<Issue>> {
  return api.patch(`/issues/${enc(issueId)}/${action}`);
}

export function listIssueTags(projectId: string): Promise<{ tags: IssueTag[] }> {
  return api.get('/issues/tags', { project_id: projectId });
}

export function getTicketLink(issueId: string): Promise<TicketLink> {
  return api.get(`/issues/${enc(issueId)}/tracker-ticket`);
}

/** Ticket tracker: preview a ticket for the issue, then confirm it with the preview token. */
export function previewTicket(issueId: string): Promise<{ preview_token: string; expires_at?: string; [key: string]: unknown }> {
  return api.post(`/issues/${enc(issueId)}/tracker-ticket/preview`, {});
}

export function linkTicket(issueId: string, previewToken: string): Promise<TicketLink> {
  return api.put(`/issues/${enc(issueId)}/tracker-ticket`, { preview_token: previewToken });
}

/** docs/webhooks.md: the project's endpoints, their delivery logs, and the test event (admin scope). */
/** The events the analytics query (and the export) read. */
export function getAnalyticsCatalog(projectId: string): Promise<AnalyticsCatalog> {
  return api.get(`/projects/${enc(projectId)}/analytics/catalog`);
}

export function listWebhooks(projectId: string): Promise<{ webhooks: WebhookEndpoint[] }> {
  return api.get(`/projects/${enc(projectId)}/webhooks`);
}

export function listWebhookDeliveries(webhookId: string, limit: number): Promise<{ deliveries: WebhookDelivery[] }> {
  return api.get(`/webhooks/${enc(webhookId)}/deliveries`, { limit });
}

export function sendWebhookTest(webhookId: string): Promise<WebhookDelivery> {
  return api.post(`/webhooks/${enc(webhookId)}/test`);
}

/** The tenant's users (admin scope): the dashboard shows an assignee by name when it may list them. */
export function listUsers(): Promise<{ users: User[] }> {
  return api.get('/users');
}

/** Administration (admin scope): projects, API keys, webhook endpoints (docs/workspace.md, docs/webhooks.md). */
export function createProject(name: string, description: string | null): Promise<Project> {
  return api.post('/projects', { name, ...(description ? { description } : {}) });
}

export function listApiKeys(): Promise<{ api_keys: ApiKey[] }> {
  return api.get('/api-keys');
}

export function createApiKey(body: { name: string; scope: ApiKey['scope']; project_id: string | null }): Promise<ApiKey> {
  return api.post('/api-keys', body);
}

export function revokeApiKey(keyId: string): Promise<void> {
  return api.delete(`/api-keys/${enc(keyId)}`);
}

export function createWebhook(projectId: string, body: { url: string; events: string[]; description?: string }): Promise<WebhookEndpoint & { secret: string }> {
  return api.post(`/projects/${enc(projectId)}/webhooks`, body);
}

export function updateWebhook(webhookId: string, patch: { url?: string; events?: string[]; enabled?: boolean; description?: string }): Promise<WebhookEndpoint> {
  return api.patch(`/webhooks/${enc(webhookId)}`, patch);
}

export function rotateWebhookSecret(webhookId: string): Promise<WebhookEndpoint & { secret: string }> {
  return api.post(`/webhooks/${enc(webhookId)}/rotate-secret`);
}
