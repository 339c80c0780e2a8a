import crypto from 'node:crypto';
import type { ISSUE_EVENTS } from '../../analytics/catalog.js';
import { dateTime64 } from '../../platform/clickhouse/clickhouse-time.js';
import type { SqlHandle } from '../../platform/postgres/postgres.js';
import type { Origin } from '../../spans/origin.js';

/**
 * One of the eight issue lifecycle events; they share ClickHouse table
 * event_issue, so the analytics catalog's list is the one list of them.
 */
export type IssueEventName = (typeof ISSUE_EVENTS)[number];

export interface IssueEventInput {
  tenantId: string;
  projectId: string;
  issueId: string;
  name: IssueEventName;
  actor: Origin;
  /** Defaults to now; millisecond precision, because that is what the ClickHouse column keeps. */
  occurredAt?: Date;
}

/**
 * Writes one issue.* event into the outbox. Call it with the transaction that makes the change, so
 * the event exists exactly when the change does (no event lost or invented).
 */
export async function recordIssueEvent(tx: SqlHandle, event: IssueEventInput): Promise<string> {
  const [eventId] = await recordIssueEvents(tx, [event]);
  return eventId;
}

/**
 * recordIssueEvent for several events in one statement, in the caller's transaction. The outbox ids
 * (the relay's and the fan-out's order) follow the order of `events`, as one recordIssueEvent after another would.
 */
export async function recordIssueEvents(tx: SqlHandle, events: IssueEventInput[]): Promise<string[]> {
  if (events.length === 0) return [];
  const ids = events.map(() => crypto.randomUUID());
  const now = new Date();
  const column = <T>(pick: (e: IssueEventInput) => T) => events.map(pick);
  await tx`
    insert into issue_event_outbox (event_id, tenant_id, project_id, issue_id, name, occurred_at, actor, surface, user_id, api_key_id)
    select e.event_id, e.tenant_id, e.project_id, e.issue_id, e.name, e.occurred_at, e.actor, e.surface, e.user_id, e.api_key_id
    from unnest(${ids}::uuid[], ${column((e) => e.tenantId)}::uuid[], ${column((e) => e.projectId)}::uuid[], ${column((e) => e.issueId)}::uuid[],
      ${column((e) => e.name)}::text[], ${column((e) => (e.occurredAt ?? now).toISOString())}::timestamptz[],
      ${column((e) => e.actor.actor)}::text[], ${column((e) => e.actor.surface)}::text[], ${column((e) => e.actor.user_id)}::text[], ${column((e) => e.actor.api_key_id)}::text[])
      with ordinality as e(event_id, tenant_id, project_id, issue_id, name, occurred_at, actor, surface, user_id, api_key_id, n)
    order by e.n`;
  return ids;
}

export interface OutboxRow {
  id: string;
  event_id: string;
  tenant_id: string;
  project_id: string;
  issue_id: string;
  name: IssueEventName;
  occurred_at: Date;
  actor: string;
  surface: string;
  user_id: string;
  api_key_id: string;
  created_at: Date;
}

/**
 * The event_issue row for an outbox row. Every column, inserted_at included, comes from the outbox
 * row, so relaying the same row twice inserts byte-identical rows that ReplacingMergeTree collapses
 * (key: tenant_id, project_id, timestamp, event_id).
 */
export function eventIssueRow(row: OutboxRow): Record<string, string> {
  return {
    tenant_id: row.tenant_id,
    project_id: row.project_id,
    timestamp: dateTime64(row.occurred_at),
    actor: row.actor,
    surface: row.surface,
    user_id: row.user_id,
    api_key_id: row.api_key_id,
    name: row.name,
    issue_id: row.issue_id,
    event_id: row.event_id,
    inserted_at: dateTime64(row.created_at),
  };
}
