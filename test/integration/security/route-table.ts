import crypto from 'node:crypto';
import type { Fixture } from './tenant-fixture.js';

/**
 * Every operation of /api/openapi.json, and how the security suite calls it. The suite fails when
 * the document has an operation this table does not name, or the table names one the document
 * lacks: a new route is covered on purpose, never by accident.
 *
 * - params: which fixture id fills each `{path parameter}` (every parameter must be listed).
 * - foreign: how the route names a tenant's project data —
 *     'path': by a path id → another tenant (or a key limited to another project) gets 404 not_found;
 *     'ref':  by an id in the body or query → the answer is the one an unknown id gets (no existence oracle);
 *     'none': it names nothing of a project → the caller only ever sees its own data.
 * - readKeyMayCall: a non-GET that read keys may use (the analytics query needs read or admin).
 * - operator: takes the operator credential instead of a tenant key.
 * - late: changes the fixture so much (delete, revoke, unlink) that the owner's own call runs last.
 */
export type FixtureId = keyof Pick<Fixture, 'projectId' | 'issueId' | 'tagId' | 'monitorId' | 'metricId' | 'versionId' | 'keyId' | 'traceId' | 'ticketIdentifier' | 'webhookId' | 'deletionId'>;

export interface RouteCase {
  params: Record<string, FixtureId>;
  query?: (f: Fixture) => Record<string, string>;
  body?: (f: Fixture) => unknown;
  foreign: 'path' | 'ref' | 'none';
  readKeyMayCall?: boolean;
  operator?: boolean;
  late?: number;
}

const hourMs = 3_600_000;
const whole = (ms: number) => new Date(Math.floor(ms / hourMs) * hourMs).toISOString().replace(/\.\d{3}Z$/, 'Z');
const windowQuery = () => ({ start: whole(Date.now() - 48 * hourMs), endExclusive: whole(Date.now() + hourMs) });
const unique = (prefix: string) => `${prefix} ${crypto.randomBytes(3).toString('hex')}`;

export const ROUTES: Record<string, RouteCase> = {
  // Tenancy
  'POST /users': { params: {}, foreign: 'none', body: () => ({ name: 'sec user', email: null }) },
  'GET /users': { params: {}, foreign: 'none' },
  'POST /api-keys': { params: {}, foreign: 'ref', body: (f) => ({ name: 'sec key', scope: 'read', project_id: f.projectId }) },
  'GET /api-keys': { params: {}, foreign: 'none' },
  'DELETE /api-keys/{key_id}': { params: { key_id: 'keyId' }, foreign: 'path', late: 1 },
  'POST /tenants': { params: {}, foreign: 'none', operator: true, body: () => ({ name: 'sec tenant' }) },

  // Projects
  'GET /projects': { params: {}, foreign: 'none' },
  'POST /projects': { params: {}, foreign: 'none', body: () => ({ name: 'sec created' }) },
  'POST /projects/reorder': { params: {}, foreign: 'ref', body: (f) => ({ ordered_ids: [f.projectId] }) },
  'GET /projects/{project_id}': { params: { project_id: 'projectId' }, foreign: 'path' },
  'PATCH /projects/{project_id}': { params: { project_id: 'projectId' }, foreign: 'path', body: (f) => ({ name: `${f.marker} project` }) },
  'DELETE /projects/{project_id}': { params: { project_id: 'projectId' }, foreign: 'path', late: 9 },
  'GET /projects/{project_id}/instrumentation-diagnostics': { params: { project_id: 'projectId' }, foreign: 'path' },
  'PUT /projects/{project_id}/instrumentation-diagnostics': { params: { project_id: 'projectId' }, foreign: 'path', body: () => ({ enabled: true }) },

  // Data lifecycle (deletions of a thread that never existed: nothing of the fixture goes)
  'POST /projects/{project_id}/deletions': { params: { project_id: 'projectId' }, foreign: 'path', body: (f) => ({ thread_id: `${f.marker} absent thread` }) },
  'GET /projects/{project_id}/deletions': { params: { project_id: 'projectId' }, foreign: 'path', query: () => ({ limit: '10' }) },
  'GET /deletions/{deletion_id}': { params: { deletion_id: 'deletionId' }, foreign: 'path' },
  // Retention (set to what it already is: 90 days both, the default) and exports of the last two days
  'GET /projects/{project_id}/retention': { params: { project_id: 'projectId' }, foreign: 'path' },
  'PUT /projects/{project_id}/retention': { params: { project_id: 'projectId' }, foreign: 'path', body: () => ({ analytics_days: 90, content_days: 90 }) },
  'GET /retention': { params: {}, foreign: 'none' },
  'PUT /retention': { params: {}, foreign: 'none', body: () => ({ analytics_days: 90, content_days: 90 }) },
  'GET /projects/{project_id}/export': {
    params: { project_id: 'projectId' },
    foreign: 'path',
    query: () => ({ from: 'trace.processed', start: whole(Date.now() - 48 * hourMs), end_exclusive: whole(Date.now() + hourMs), format: 'ndjson' }),
  },
  'GET /projects/{project_id}/export/traces': {
    params: { project_id: 'projectId' },
    foreign: 'path',
    query: () => ({ start: whole(Date.now() - 48 * hourMs), end_exclusive: whole(Date.now() + hourMs) }),
  },

  // Cost
  'POST /admin/backfill-costs': { params: {}, foreign: 'ref', body: (f) => ({ project_id: f.projectId }) },

  // Analytics
  'GET /projects/{project_id}/analytics/catalog': { params: { project_id: 'projectId' }, foreign: 'path' },
  'POST /projects/{project_id}/analytics/query': {
    params: { project_id: 'projectId' }, foreign: 'path', readKeyMayCall: true,
    body: () => {
      const w = windowQuery();
      return { from: 'trace.processed', start: w.start, end_exclusive: w.endExclusive, measures: [{ as: 'n', agg: 'count' }], group_by: [{ field: 'agent_name', as: 'agent' }] };
    },
  },
  'GET /projects/{project_id}/analytics': { params: { project_id: 'projectId' }, foreign: 'path', query: () => ({ view: 'window', ...windowQuery() }) },
  'GET /projects/{project_id}/general': { params: { project_id: 'projectId' }, foreign: 'path', query: () => ({ hours: '48' }) },
  'GET /projects/{project_id}/base': { params: { project_id: 'projectId' }, foreign: 'path', query: windowQuery },
  'GET /projects/{project_id}/window': { params: { project_id: 'projectId' }, foreign: 'path', query: windowQuery },
  'GET /projects/{project_id}/model-scorecard': { params: { project_id: 'projectId' }, foreign: 'path', query: () => ({ start: windowQuery().start }) },
  'GET /projects/{project_id}/agent-scorecard': { params: { project_id: 'projectId' }, foreign: 'path', query: windowQuery },
  'GET /projects/{project_id}/tool-aggregates': { params: { project_id: 'projectId' }, foreign: 'path', query: windowQuery },
  'GET /projects/{project_id}/roi': { params: { project_id: 'projectId' }, foreign: 'path' },

  // Issues and tags
  'POST /issues/tags': { params: {}, foreign: 'ref', body: (f) => ({ project_id: f.projectId, name: unique('sec tag'), color: '#abcdef' }) },
  'GET /issues/tags': { params: {}, foreign: 'ref', query: (f) => ({ project_id: f.projectId }) },
  'PUT /issues/{issue_id}/tags/{tag_id}': { params: { issue_id: 'issueId', tag_id: 'tagId' }, foreign: 'path' },
  'DELETE /issues/{issue_id}/tags/{tag_id}': { params: { issue_id: 'issueId', tag_id: 'tagId' }, foreign: 'path', late: 1 },
  'GET /projects/{project_id}/issues': { params: { project_id: 'projectId' }, foreign: 'path' },
  'POST /projects/{project_id}/issues': { params: { project_id: 'projectId' }, foreign: 'path', body: () => ({ title: 'sec issue' }) },
  'GET /issues/{issue_id}': { params: { issue_id: 'issueId' }, foreign: 'path' },
  'PATCH /issues/{issue_id}': { params: { issue_id: 'issueId' }, foreign: 'path', body: () => ({ description: 'edited' }) },
  'PATCH /issues/{issue_id}/start-review': { params: { issue_id: 'issueId' }, foreign: 'path' },
  'PATCH /issues/{issue_id}/resolve': { params: { issue_id: 'issueId' }, foreign: 'path' },
  'PATCH /issues/{issue_id}/dismiss': { params: { issue_id: 'issueId' }, foreign: 'path' },
  'PATCH /issues/{issue_id}/reopen': { params: { issue_id: 'issueId' }, foreign: 'path' },
  'PATCH /issues/{issue_id}/flag': { params: { issue_id: 'issueId' }, foreign: 'path' },
  'PATCH /issues/{issue_id}/unflag': { params: { issue_id: 'issueId' }, foreign: 'path' },
  'POST /issues/{issue_id}/chat': { params: { issue_id: 'issueId' }, foreign: 'path', body: () => ({ message: 'sec message' }) },
  'GET /issues/{issue_id}/chat': { params: { issue_id: 'issueId' }, foreign: 'path' },
  'GET /issues/{issue_id}/occurrences': { params: { issue_id: 'issueId' }, foreign: 'path' },

  // Ticket tracker
  'POST /issues/{issue_id}/tracker-ticket/preview': { params: { issue_id: 'issueId' }, foreign: 'path', body: () => ({ title: 'sec ticket' }) },
  'PUT /issues/{issue_id}/tracker-ticket': { params: { issue_id: 'issueId' }, foreign: 'path', body: () => ({ preview_token: 'tkp_not_a_real_token' }) },
  'GET /issues/{issue_id}/tracker-ticket': { params: { issue_id: 'issueId' }, foreign: 'path' },
  'DELETE /issues/{issue_id}/tracker-ticket': { params: { issue_id: 'issueId' }, foreign: 'path', late: 2 },
  'POST /issues/{issue_id}/tracker-ticket/sync': { params: { issue_id: 'issueId' }, foreign: 'path' },
  'POST /issues/{issue_id}/pull-requests': { params: { issue_id: 'issueId' }, foreign: 'path', body: () => ({ title: 'sec pr', url: 'https://code.example/octo/app/pull/2' }) },
  'GET /integrations/ticket-tracker': { params: {}, foreign: 'none' },
  'PUT /integrations/ticket-tracker': { params: {}, foreign: 'none', body: () => ({ provider: 'local', team_name: 'Sec team' }) },
  'GET /integrations/ticket-tracker/tickets/{identifier}': { params: { identifier: 'ticketIdentifier' }, foreign: 'path' },
  'PATCH /integrations/ticket-tracker/tickets/{identifier}': { params: { identifier: 'ticketIdentifier' }, foreign: 'path', body: () => ({ state: 'in_progress' }) },

  // Monitors
  'POST /projects/{project_id}/monitors': { params: { project_id: 'projectId' }, foreign: 'path', body: () => ({ name: unique('sec monitor') }) },
  'GET /projects/{project_id}/monitors': { params: { project_id: 'projectId' }, foreign: 'path' },
  'GET /monitors/{monitor_id}': { params: { monitor_id: 'monitorId' }, foreign: 'path' },
  'PATCH /monitors/{monitor_id}': { params: { monitor_id: 'monitorId' }, foreign: 'path', body: () => ({ paused: true }) },
  'DELETE /monitors/{monitor_id}': { params: { monitor_id: 'monitorId' }, foreign: 'path', late: 1 },

  // Webhooks (the fixture's endpoint points at a name that never resolves: attempts fail fast, nothing leaves the machine)
  'POST /projects/{project_id}/webhooks': { params: { project_id: 'projectId' }, foreign: 'path', body: () => ({ url: 'https://hooks.sec-suite.invalid/in', events: ['issue.created'] }) },
  'GET /projects/{project_id}/webhooks': { params: { project_id: 'projectId' }, foreign: 'path' },
  'GET /webhooks/{webhook_id}': { params: { webhook_id: 'webhookId' }, foreign: 'path' },
  'PATCH /webhooks/{webhook_id}': { params: { webhook_id: 'webhookId' }, foreign: 'path', body: () => ({ description: 'sec edited' }) },
  'DELETE /webhooks/{webhook_id}': { params: { webhook_id: 'webhookId' }, foreign: 'path', late: 1 },
  'POST /webhooks/{webhook_id}/rotate-secret': { params: { webhook_id: 'webhookId' }, foreign: 'path' },
  'POST /webhooks/{webhook_id}/test': { params: { webhook_id: 'webhookId' }, foreign: 'path' },
  'GET /webhooks/{webhook_id}/deliveries': { params: { webhook_id: 'webhookId' }, foreign: 'path', query: () => ({ limit: '20' }) },

  // Metrics
  'POST /projects/{project_id}/metrics': { params: { project_id: 'projectId' }, foreign: 'path', body: () => ({ name: unique('sec metric'), collection_type: 'BINARY' }) },
  'GET /projects/{project_id}/metrics': { params: { project_id: 'projectId' }, foreign: 'path' },
  'GET /metrics/{metric_id}': { params: { metric_id: 'metricId' }, foreign: 'path' },
  'DELETE /metrics/{metric_id}': { params: { metric_id: 'metricId' }, foreign: 'path', late: 1 },
  'POST /metrics/{metric_id}/events': { params: { metric_id: 'metricId' }, foreign: 'path', body: (f) => ({ trace_id: f.traceId, value: 4 }) },

  // Code host
  'GET /projects/{project_id}/code-host/connection': { params: { project_id: 'projectId' }, foreign: 'path' },
  'PUT /projects/{project_id}/code-host/connection': { params: { project_id: 'projectId' }, foreign: 'path', body: (f) => ({ token: f.codeHostToken }) },
  'DELETE /projects/{project_id}/code-host/connection': { params: { project_id: 'projectId' }, foreign: 'path', late: 2 },
  'POST /projects/{project_id}/code-host/connection/check': { params: { project_id: 'projectId' }, foreign: 'path' },
  'PUT /projects/{project_id}/code-host/binding': { params: { project_id: 'projectId' }, foreign: 'path', body: () => ({ repository: 'octo/app' }) },
  'DELETE /projects/{project_id}/code-host/binding': { params: { project_id: 'projectId' }, foreign: 'path', late: 1 },
  'PUT /projects/{project_id}/code-host/feature': { params: { project_id: 'projectId' }, foreign: 'path', body: () => ({ enabled: true }) },

  // Agent understanding versions
  'POST /projects/{project_id}/artifacts/versions': { params: { project_id: 'projectId' }, foreign: 'path', body: (f) => ({ agent_name: f.agentName, expectations: 'e2' }) },
  'GET /projects/{project_id}/artifacts/versions': { params: { project_id: 'projectId' }, foreign: 'path', query: (f) => ({ agent_name: f.agentName }) },
  'GET /projects/{project_id}/artifacts/versions/{version_id}': { params: { project_id: 'projectId', version_id: 'versionId' }, foreign: 'path' },

  // Traces
  'GET /traces/agent-names': { params: {}, foreign: 'none' },
  'GET /traces/{trace_id}': { params: { trace_id: 'traceId' }, foreign: 'path' },
  'GET /projects/{project_id}/traces': { params: { project_id: 'projectId' }, foreign: 'path' },
};

/** The context-bundle form of GET /traces/{trace_id} names the project in its query: checked as an extra call. */
export const TRACE_CONTEXT_QUERY = (f: Fixture) => ({ expand: 'context', project_id: f.projectId });

export interface Operation {
  key: string;
  method: string;
  path: string;
  hasBody: boolean;
  queryParams: { name: string; type: string }[];
  case: RouteCase;
}

/** The operations of an OpenAPI document paired with their table entries; throws on any mismatch. */
export function operationsOf(doc: { paths: Record<string, Record<string, any>> }): Operation[] {
  const ops: Operation[] = [];
  const missing: string[] = [];
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      const key = `${method.toUpperCase()} ${path}`;
      const entry = ROUTES[key];
      if (!entry) {
        missing.push(key);
        continue;
      }
      const pathParams = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]).sort();
      const listed = Object.keys(entry.params).sort();
      if (JSON.stringify(pathParams) !== JSON.stringify(listed)) {
        throw new Error(`${key}: the table fills ${listed.join(',') || 'no'} path parameters, the path has ${pathParams.join(',') || 'none'}`);
      }
      const queryParams = ((op.parameters ?? []) as any[])
        .filter((p) => p.in === 'query')
        .map((p) => ({ name: p.name as string, type: String(p.schema?.type ?? (p.schema?.enum ? 'enum' : 'string')) }));
      ops.push({ key, method: method.toUpperCase(), path, hasBody: Boolean(op.requestBody), queryParams, case: entry });
    }
  }
  if (missing.length > 0) throw new Error(`Operations without a security table entry (add them to test/integration/security/route-table.ts): ${missing.join('; ')}`);
  const documented = new Set(ops.map((o) => o.key));
  const stale = Object.keys(ROUTES).filter((k) => !documented.has(k));
  if (stale.length > 0) throw new Error(`Security table entries for operations the OpenAPI document no longer has: ${stale.join('; ')}`);
  return ops;
}

/** The concrete request of an operation for a fixture (path ids substituted, query string, body). */
export function requestFor(op: Operation, f: Fixture, overrides: { query?: Record<string, string>; pathValues?: Record<string, string> } = {}): { path: string; body: unknown } {
  let path = op.path;
  for (const [param, source] of Object.entries(op.case.params)) {
    const value = overrides.pathValues?.[param] ?? String(f[source]);
    path = path.replace(`{${param}}`, encodeURIComponent(value));
  }
  const query = overrides.query ?? op.case.query?.(f);
  if (query && Object.keys(query).length > 0) path += `?${new URLSearchParams(query).toString()}`;
  return { path, body: op.case.body?.(f) };
}
