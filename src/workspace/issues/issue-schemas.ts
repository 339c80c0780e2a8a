/**
 * The issue routes' requests and answers (issues, tags, chat, occurrences), declared once as
 * TypeBox schemas: the JSON Schema the OpenAPI document carries and ajv validates with, and the
 * types (`Static`) the services return and the dashboard imports. This file imports nothing of the
 * server, so the dashboard's type check can read it; the routes register the schemas.
 */
import { Type, type Static } from 'typebox';
import { bareEnum, componentRef, dateTime, nullable } from '../../platform/http/shape-kit.js';

/** Days of an issue's occurrence_trend, today (UTC) the last. */
export const OCCURRENCE_TREND_DAYS = 14;

/** The four issue states; resolved and dismissed are terminal. */
export const ISSUE_STATUSES = ['open', 'in_progress', 'resolved', 'dismissed'] as const;
export type IssueStatus = (typeof ISSUE_STATUSES)[number];

const nullableDateTime = nullable(dateTime);
const status = bareEnum(ISSUE_STATUSES);

export const IssueTag = Type.Object({ id: Type.String(), name: Type.String(), color: Type.String() });
export type IssueTag = Static<typeof IssueTag>;
const issueTagRef = componentRef('IssueTag', IssueTag);

/** The issue record the issue routes answer (docs/issues.md lists the fields). */
export const Issue = Type.Object({
  id: Type.String({ format: 'uuid' }),
  project_id: Type.String({ format: 'uuid' }),
  title: Type.String(),
  description: nullable(Type.String()),
  status,
  assignee_user_id: nullable(Type.String()),
  fingerprint: nullable(Type.String({ description: 'Set for issues opened by extraction; null for issues created by hand' })),
  flagged: Type.Boolean(),
  first_seen_at: nullableDateTime,
  last_seen_at: nullableDateTime,
  occurrence_count: Type.Integer(),
  occurrences_deleted_at: nullable(Type.String({ format: 'date-time', description: 'When a deletion removed the last of its occurrences (their traces are gone); null otherwise' })),
  created_at: dateTime,
  updated_at: dateTime,
  tags: Type.Array(issueTagRef),
  agent_names: Type.Optional(
    Type.Array(Type.String(), {
      description:
        'Only in the list with include_agents=true: the agents (sorted) of the traces the issue\'s occurrences were seen in, among the traces still stored; a trace without an agent name adds none',
    }),
  ),
  occurrence_trend: Type.Optional(
    Type.Array(Type.Object({ date: Type.String({ format: 'date' }), count: Type.Integer() }), {
      description: `Only in the list with include_trend=true: the issue's occurrences per UTC day by when they happened, for the last ${OCCURRENCE_TREND_DAYS} days (today included, oldest first, days without any at 0)`,
    }),
  ),
});
export type Issue = Static<typeof Issue>;
const issueRef = componentRef('Issue', Issue);

export const IssueList = Type.Object({ issues: Type.Array(issueRef), next_cursor: nullable(Type.String()) });
export type IssueList = Static<typeof IssueList>;

/** PATCH /issues/{issue_id}/start-review answers the state after the call. */
export const IssueStartReview = Type.Object({ project_id: Type.String(), status, assignee_user_id: nullable(Type.String()) });
export type IssueStartReview = Static<typeof IssueStartReview>;

export const IssueChatMessage = Type.Object({
  id: Type.String(),
  issue_id: Type.String(),
  user_id: nullable(Type.String()),
  api_key_id: nullable(Type.String()),
  message: Type.String(),
  created_at: dateTime,
});
export type IssueChatMessage = Static<typeof IssueChatMessage>;
const chatMessageRef = componentRef('IssueChatMessage', IssueChatMessage);
export const IssueChatMessages = Type.Object({ messages: Type.Optional(Type.Array(chatMessageRef)) });

/** One occurrence of an issue: where in which trace it was seen. */
export const IssueOccurrence = Type.Object({
  trace_id: Type.String(),
  otel_trace_id: Type.String(),
  span_id: Type.String(),
  occurred_at: dateTime,
  error_type: Type.String(),
  span_name: Type.String(),
  tool_name: Type.String(),
  message: Type.String(),
});
export type IssueOccurrence = Static<typeof IssueOccurrence>;
export const IssueOccurrenceList = Type.Object({ occurrences: Type.Array(IssueOccurrence), next_cursor: nullable(Type.String()) });
export type IssueOccurrenceList = Static<typeof IssueOccurrenceList>;

const title = Type.String({ minLength: 1, maxLength: 500 });
const description = nullable(Type.String({ maxLength: 20000 }));
const userId = nullable(Type.String({ format: 'uuid' }));

/** GET /projects/{project_id}/issues: the query string. */
export const IssueListQuery = Type.Object(
  {
    status: Type.Optional(Type.String()),
    tag: Type.Optional(Type.String()),
    assignee: Type.Optional(Type.String()),
    flagged: Type.Optional(Type.Boolean()),
    include_agents: Type.Optional(Type.Boolean({ description: 'Add agent_names to each issue: read from the traces of its occurrences, so the cost grows with the occurrences of the issues on the page' })),
    include_trend: Type.Optional(Type.Boolean({ description: `Add occurrence_trend to each issue: occurrences per UTC day over the last ${OCCURRENCE_TREND_DAYS} days` })),
    cursor: Type.Optional(Type.String({ maxLength: 200 })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
  },
  { additionalProperties: false },
);
/** The query as the handler sees it: ajv filled the default limit in. */
export type IssueListQuery = Static<typeof IssueListQuery> & { limit: number };

/** POST /projects/{project_id}/issues. */
export const NewIssue = Type.Object(
  { title, description: Type.Optional(description), assignee_user_id: Type.Optional(userId), flagged: Type.Optional(Type.Boolean()) },
  { additionalProperties: false },
);
export type NewIssue = Static<typeof NewIssue>;

/** PATCH /issues/{issue_id}: any of the fields, at least one. */
export const IssuePatch = Type.Object(
  {
    title: Type.Optional(title),
    description: Type.Optional(description),
    assignee_user_id: Type.Optional(userId),
    flagged: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type IssuePatch = Static<typeof IssuePatch>;

/** POST /issues/{issue_id}/chat. */
export const NewChatMessage = Type.Object({ message: Type.String({ minLength: 1, maxLength: 20000 }) }, { additionalProperties: false });
export type NewChatMessage = Static<typeof NewChatMessage>;

/** GET /issues/{issue_id}/occurrences: the query string. */
export const OccurrencesQuery = Type.Object(
  { cursor: Type.Optional(Type.String({ maxLength: 200 })), limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 100 })) },
  { additionalProperties: false },
);
export type OccurrencesQuery = Static<typeof OccurrencesQuery> & { limit: number };

/** A CSS-style hex colour (#rgb or #rrggbb) or a plain colour word such as `red`. */
const color = Type.String({ pattern: '^(#[0-9a-fA-F]{3}|#[0-9a-fA-F]{6}|[a-z]{1,32})$' });

/** POST /issues/tags. */
export const NewIssueTag = Type.Object(
  { project_id: Type.String(), name: Type.String({ minLength: 1, maxLength: 100 }), color },
  { additionalProperties: false },
);
export type NewIssueTag = Static<typeof NewIssueTag>;

/** GET /issues/tags: the query string. */
export const IssueTagsQuery = Type.Object({ project_id: Type.Optional(Type.String()) }, { additionalProperties: false });
export type IssueTagsQuery = Static<typeof IssueTagsQuery>;

export const IssueTagList = Type.Object({ tags: Type.Array(issueTagRef) });
/** The tags of an issue after attaching or detaching one. */
export const TagsOfIssue = Type.Object({ issue_id: Type.String(), tags: Type.Array(issueTagRef) });
export type TagsOfIssue = Static<typeof TagsOfIssue>;
