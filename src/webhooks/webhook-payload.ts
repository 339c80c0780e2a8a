import type { SqlHandle } from '../stores/postgres.js';
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

async function projectOf(sql: SqlHandle, tenantId: string, projectId: string): Promise<{ id: string; name: string } | null> {
  const [row] = await sql<{ id: string; name: string }[]>`select id, name from projects where tenant_id = ${tenantId} and id = ${projectId}`;
  return row ?? null;
}

/** The envelope of an outbox event, or null when its project, issue or monitor no longer exists. */
export async function envelopeFor(sql: SqlHandle, event: OutboxEvent, publicUrl: string | null): Promise<WebhookEnvelope | null> {
  const project = await projectOf(sql, event.tenant_id, event.project_id);
  if (!project) return null;
  const base = { id: event.event_id, type: event.name, occurred_at: event.occurred_at.toISOString(), project_id: event.project_id };
  if (event.issue_id) {
    const [issue] = await sql<{ id: string; title: string; status: string; fingerprint: string | null; occurrence_count: number; first_seen_at: Date | null; last_seen_at: Date | null; created_at: Date }[]>`
      select id, title, status, fingerprint, occurrence_count, first_seen_at, last_seen_at, created_at from issues
      where tenant_id = ${event.tenant_id} and id = ${event.issue_id}`;
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
    const [monitor] = await sql<{ id: string; name: string; kind: string; exploration_status: string; activated_at: Date | null }[]>`
      select id, name, kind, exploration_status, activated_at from monitors where tenant_id = ${event.tenant_id} and id = ${event.monitor_id}`;
    if (!monitor) return null;
    return {
      ...base,
      data: {
        project,
        monitor: { ...monitor, activated_at: iso(monitor.activated_at), url: link(publicUrl, `/p/${event.project_id}/issues`) },
      },
    };
  }
  return null;
}

/** The webhook.test envelope for an endpoint. */
export async function testEnvelope(sql: SqlHandle, tenantId: string, projectId: string, endpointId: string, eventId: string, now: Date): Promise<WebhookEnvelope> {
  const project = (await projectOf(sql, tenantId, projectId)) ?? { id: projectId, name: '' };
  return {
    id: eventId,
    type: TEST_EVENT,
    occurred_at: now.toISOString(),
    project_id: projectId,
    data: { project, webhook: { id: endpointId }, message: 'A test event sent from Lookout on request. Nothing happened in the project.' },
  };
}
