import type { TestService } from '../../helpers/service.js';
import type { OutboxRelay } from '../../../src/workspace/issues/outbox-relay.js';

export interface IssueEventRow {
  name: string;
  issue_id: string;
  event_id: string;
  actor: string;
  surface: string;
  user_id: string;
  api_key_id: string;
  tenant_id: string;
  project_id: string;
}

export function relayOf(svc: TestService): OutboxRelay {
  return svc.service.deps.services.issueOutboxRelay!;
}

/** issue.* rows in ClickHouse for some issues; `final` reads as analytics does (ReplacingMergeTree FINAL). */
export async function issueEvents(svc: TestService, issueIds: string[], options: { final?: boolean } = {}): Promise<IssueEventRow[]> {
  const ch = svc.service.deps.ch;
  const result = await ch.client.query({
    query: `SELECT name, issue_id, event_id, actor, surface, user_id, api_key_id, tenant_id, project_id
            FROM ${ch.table('event_issue')} ${options.final === false ? '' : 'FINAL'}
            WHERE issue_id IN {ids:Array(String)} ORDER BY timestamp, name`,
    query_params: { ids: issueIds },
    format: 'JSONEachRow',
  });
  return result.json<IssueEventRow>();
}

/** Waits until the relay has delivered everything in the outbox, then returns the events. */
export async function settledIssueEvents(svc: TestService, issueIds: string[]): Promise<IssueEventRow[]> {
  await relayOf(svc).drain();
  return issueEvents(svc, issueIds);
}

export async function pendingOutboxCount(svc: TestService): Promise<number> {
  const [row] = await svc.service.deps.sql<{ n: number }[]>`select count(*)::int as n from issue_event_outbox where relayed_at is null`;
  return row.n;
}

/** A user of the tenant with an admin key owned by that user (the acting user of start-review). */
export async function userWithKey(svc: TestService, name: string, options: { key?: string; projectId?: string; scope?: 'admin' | 'read' } = {}): Promise<{ userId: string; key: string; keyId: string }> {
  const user = await svc.call('POST', '/users', { key: options.key, body: { name } });
  if (user.status !== 201) throw new Error(`user create failed: ${user.status} ${JSON.stringify(user.body)}`);
  const key = await svc.call('POST', '/api-keys', {
    key: options.key,
    body: { name: `${name} key`, scope: options.scope ?? 'admin', user_id: user.body.id, project_id: options.projectId ?? null },
  });
  if (key.status !== 201) throw new Error(`key create failed: ${key.status} ${JSON.stringify(key.body)}`);
  return { userId: user.body.id, key: key.body.key, keyId: key.body.id };
}

export async function newIssue(svc: TestService, projectId: string, body: Record<string, unknown> = {}, key?: string): Promise<any> {
  const res = await svc.call('POST', `/projects/${projectId}/issues`, { key, body: { title: 'Something broke', ...body } });
  if (res.status !== 201) throw new Error(`issue create failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}
