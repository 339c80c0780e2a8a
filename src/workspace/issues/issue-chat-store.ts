import crypto from 'node:crypto';
import type { Sql, SqlHandle } from '../../platform/postgres/postgres.js';
import { recordIssueEvent } from './issue-event-outbox.js';
import type { Origin } from '../../spans/origin.js';
import type { IssueChatMessage } from './issue-schemas.js';

export type ChatMessage = IssueChatMessage;

type ChatRow = Omit<ChatMessage, 'created_at'> & { created_at: Date };

const toMessage = (r: ChatRow): ChatMessage => ({ ...r, created_at: r.created_at.toISOString() });

/** Posts a message on an issue and records issue.chat_sent in the same transaction. */
export async function postChatMessage(sql: Sql, tenantId: string, issue: { id: string; project_id: string }, message: string, actor: Origin): Promise<ChatMessage> {
  return sql.begin(async (tx) => {
    const [row] = await tx<ChatRow[]>`
      insert into issue_chat_messages (id, tenant_id, issue_id, user_id, api_key_id, message)
      values (${crypto.randomUUID()}, ${tenantId}, ${issue.id}, ${actor.user_id || null}, ${actor.api_key_id || null}, ${message})
      returning id, issue_id, user_id, api_key_id, message, created_at`;
    await recordIssueEvent(tx, { tenantId, projectId: issue.project_id, issueId: issue.id, name: 'issue.chat_sent', actor, occurredAt: row.created_at });
    return toMessage(row);
  });
}

export async function listChatMessages(sql: SqlHandle, tenantId: string, issueId: string): Promise<ChatMessage[]> {
  const rows = await sql<ChatRow[]>`
    select id, issue_id, user_id, api_key_id, message, created_at from issue_chat_messages
    where tenant_id = ${tenantId} and issue_id = ${issueId} order by seq`;
  return rows.map(toMessage);
}
