import type { OpenApiDocument, JsonSchema } from '../../platform/http/openapi.js';
import { ISSUE_STATUSES } from './issue-types.js';

const dateTime = { type: 'string', format: 'date-time' };
const nullableDateTime = { type: ['string', 'null'], format: 'date-time' };

/** Registers the issue schemas once per OpenAPI document and returns their $refs. */
export function issueSchemas(openapi: OpenApiDocument): Record<'IssueTag' | 'Issue' | 'IssueList' | 'StartReview' | 'ChatMessage', JsonSchema> {
  const IssueTag = openapi.addSchema('IssueTag', {
    type: 'object', required: ['id', 'name', 'color'],
    properties: { id: { type: 'string' }, name: { type: 'string' }, color: { type: 'string' } },
  });
  const Issue = openapi.addSchema('Issue', {
    type: 'object',
    required: ['id', 'project_id', 'title', 'description', 'status', 'assignee_user_id', 'fingerprint', 'flagged',
      'first_seen_at', 'last_seen_at', 'occurrence_count', 'occurrences_deleted_at', 'created_at', 'updated_at', 'tags'],
    properties: {
      id: { type: 'string', format: 'uuid' },
      project_id: { type: 'string', format: 'uuid' },
      title: { type: 'string' },
      description: { type: ['string', 'null'] },
      status: { enum: [...ISSUE_STATUSES] },
      assignee_user_id: { type: ['string', 'null'] },
      fingerprint: { type: ['string', 'null'], description: 'Set for issues opened by extraction; null for issues created by hand' },
      flagged: { type: 'boolean' },
      first_seen_at: nullableDateTime,
      last_seen_at: nullableDateTime,
      occurrence_count: { type: 'integer' },
      occurrences_deleted_at: { ...nullableDateTime, description: 'When a deletion removed the last of its occurrences (their traces are gone); null otherwise' },
      created_at: dateTime,
      updated_at: dateTime,
      tags: { type: 'array', items: IssueTag },
    },
  });
  const IssueList = openapi.addSchema('IssueList', {
    type: 'object', required: ['issues', 'next_cursor'],
    properties: { issues: { type: 'array', items: Issue }, next_cursor: { type: ['string', 'null'] } },
  });
  const StartReview = openapi.addSchema('IssueStartReview', {
    type: 'object', required: ['project_id', 'status', 'assignee_user_id'],
    properties: { project_id: { type: 'string' }, status: { enum: [...ISSUE_STATUSES] }, assignee_user_id: { type: ['string', 'null'] } },
  });
  const ChatMessage = openapi.addSchema('IssueChatMessage', {
    type: 'object', required: ['id', 'issue_id', 'user_id', 'api_key_id', 'message', 'created_at'],
    properties: {
      id: { type: 'string' }, issue_id: { type: 'string' }, user_id: { type: ['string', 'null'] },
      api_key_id: { type: ['string', 'null'] }, message: { type: 'string' }, created_at: dateTime,
    },
  });
  return { IssueTag, Issue, IssueList, StartReview, ChatMessage };
}
