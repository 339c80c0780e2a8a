import type { SqlHandle } from '../../platform/postgres/postgres.js';
import { TEST_EVENT } from './webhook-types.js';

/**
 * The JSON body of a webhook (docs/webhooks.md "Payload"): `{id, type, occurred_at, project_id,
 * data}`. `data` holds the project and the issue or monitor as they stand when the event is fanned
 * out (normally within a second of the change), with a dashboard link when LOOKOUT_PUBLIC_URL is set.
 */
export interface WebhookEnvelope {
  id: string;
  type: string;
  occurred_at: string;
  project_id: string;
  data: {
    project: { id: string; name: string };
    issue?: IssueData;
    monitor?: MonitorData;
    webhook?: { id: string };
    message?: string;
  };
}

export interface IssueData {
  id: string;
  title: string;
  status: string;
  fingerprint: string | null;
  occurrence_count: number;
  first_seen_at: string | null;
  last_seen_at: string | null;
  created_at: string;
  url: string | null;
}

export interface MonitorData {
  id: string;
  name: string;
  kind: string;
  exploration_status: string;
  activated_at: string | null;
  url: string | null;
}

/** An outbox row as the fan-out reads it. */
export interface OutboxEvent {
  event_id: string;
  tenant_id: string;
  project_id: string;
  issue_id: string | null;
  monitor_id: string | null;
  name: string;
  occurred_at: Date;
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);
const link = (publicUrl: string | null, path: string) => (publicUrl ? `${publicUrl}${path}` : null);

interface ProjectSubject { id: string; tenant_id: string; name: string }
interface IssueSubject { id: string; tenant_id: string; title: string; status: string; fingerprint: string | null; occurrence_count: number; first_seen_at: Date | null; last_seen_at: Date | null; created_at: Date }
interface MonitorSubject { id: string; tenant_id: string; name: string; kind: string; exploration_status: string; activated_at: Date | null }

/** Rows of `table` by (tenant, id) pairs, in one statement; keyed `tenant id`. */
async function byTenantAndId<Row extends { id: string; tenant_id: string }>(sql: SqlHandle, table: 'projects' | 'issues' | 'monitors', pairs: [string, string][]): Promise<Map<string, Row>> {
  const unique = [...new Map(pairs.map((p) => [`${p[0]} ${p[1]}`, p])).values()];
  if (unique.length === 0) return new Map();
  const keys = sql`unnest(${unique.map((p) => p[0])}::uuid[], ${unique.map((p) => p[1])}::uuid[]) as k(tenant_id, id)`;
  const rows =
    table === 'projects' ? await sql<Row[]>`select p.id, p.tenant_id, p.name from projects p join ${keys} on p.tenant_id = k.tenant_id and p.id = k.id`
    : table === 'issues' ? await sql<Row[]>`
        select i.id, i.tenant_id, i.title, i.status, i.fingerprint, i.occurrence_count, i.first_seen_at, i.last_seen_at, i.created_at
        from issues i join ${keys} on i.tenant_id = k.tenant_id and i.id = k.id`
    : await sql<Row[]>`
        select m.id, m.tenant_id, m.name, m.kind, m.exploration_status, m.activated_at
        from monitors m join ${keys} on m.tenant_id = k.tenant_id and m.id = k.id`;
  return new Map(rows.map((r) => [`${r.tenant_id} ${r.id}`, r]));
}

/**
 * The envelope of each outbox event (by event id), or null when its project, issue or monitor no
 * longer exists. Three statements for any number of events: the projects, the issues, the monitors.
 */
export async function envelopesFor(sql: SqlHandle, events: OutboxEvent[], publicUrl: string | null): Promise<Map<string, WebhookEnvelope | null>> {
  const projects = await byTenantAndId<ProjectSubject>(sql, 'projects', events.map((e) => [e.tenant_id, e.project_id]));
  const issues = await byTenantAndId<IssueSubject>(sql, 'issues', events.filter((e) => e.issue_id).map((e) => [e.tenant_id, e.issue_id!]));
  const monitors = await byTenantAndId<MonitorSubject>(sql, 'monitors', events.filter((e) => !e.issue_id && e.monitor_id).map((e) => [e.tenant_id, e.monitor_id!]));
  const envelopes = new Map<string, WebhookEnvelope | null>();
  for (const event of events) {
    const p = projects.get(`${event.tenant_id} ${event.project_id}`);
    const project = p ? { id: p.id, name: p.name } : null;
    const issue = event.issue_id ? issues.get(`${event.tenant_id} ${event.issue_id}`) : undefined;
    const monitor = !event.issue_id && event.monitor_id ? monitors.get(`${event.tenant_id} ${event.monitor_id}`) : undefined;
    envelopes.set(event.event_id, project ? envelope(event, project, issue ?? null, monitor ?? null, publicUrl) : null);
  }
  return envelopes;
}

/** The envelope of an outbox event from the rows it names (docs/webhooks.md "Payload"); null when its issue or monitor is gone. */
function envelope(event: OutboxEvent, project: { id: string; name: string }, issue: IssueSubject | null, monitor: MonitorSubject | null, publicUrl: string | null): WebhookEnvelope | null {
  const base = { id: event.event_id, type: event.name, occurred_at: event.occurred_at.toISOString(), project_id: event.project_id };
  if (event.issue_id) {
    if (!issue) return null;
    return {
      ...base,
      data: {
        project,
        issue: {
          id: issue.id, title: issue.title, status: issue.status, fingerprint: issue.fingerprint, occurrence_count: issue.occurrence_count,
          first_seen_at: iso(issue.first_seen_at), last_seen_at: iso(issue.last_seen_at), created_at: issue.created_at.toISOString(),
          url: link(publicUrl, `/p/${event.project_id}/issues/${issue.id}`),
        },
      },
    };
  }
  if (event.monitor_id) {
    if (!monitor) return null;
    return {
      ...base,
      data: {
        project,
        monitor: {
          id: monitor.id, name: monitor.name, kind: monitor.kind, exploration_status: monitor.exploration_status,
          activated_at: iso(monitor.activated_at), url: link(publicUrl, `/p/${event.project_id}/issues`),
        },
      },
    };
  }
  return null;
}

/** The webhook.test envelope for an endpoint. */
export async function testEnvelope(sql: SqlHandle, tenantId: string, projectId: string, endpointId: string, eventId: string, now: Date): Promise<WebhookEnvelope> {
  const found = (await byTenantAndId<ProjectSubject>(sql, 'projects', [[tenantId, projectId]])).get(`${tenantId} ${projectId}`);
  const project = found ? { id: found.id, name: found.name } : { id: projectId, name: '' };
  return {
    id: eventId,
    type: TEST_EVENT,
    occurred_at: now.toISOString(),
    project_id: projectId,
    data: { project, webhook: { id: endpointId }, message: 'A test event sent from Lookout on request. Nothing happened in the project.' },
  };
}
