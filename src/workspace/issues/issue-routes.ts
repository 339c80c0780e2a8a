import type { Router } from 'express';
import type { AppDeps } from '../../app/app-deps.js';
import { defineRoute } from '../../app/route.js';
import { ValidationError } from '../../platform/http/errors.js';
import { isUuid } from '../../platform/uuid.js';
import type { OpenApiDocument } from '../../platform/http/openapi.js';
import {
  Issue,
  IssueChatMessage,
  IssueChatMessages,
  IssueList,
  IssueListQuery,
  IssueOccurrenceList,
  IssuePatch,
  IssueStartReview,
  IssueTag,
  NewChatMessage,
  NewIssue,
  OccurrencesQuery,
} from './issue-schemas.js';
import { issueService } from './issue-service.js';
import type { TransitionName } from './issue-transitions.js';
import { ISSUE_STATUSES, type IssueStatus } from './issue-types.js';

/** Opaque list cursors: the list position of the last issue on the page. */
export function encodeCursor(seq: bigint): string {
  return Buffer.from(`issues:${seq}`).toString('base64url');
}

export function decodeCursor(cursor: string): bigint {
  const match = /^issues:(\d{1,19})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!match) throw new ValidationError('cursor: not a cursor returned by this list');
  return BigInt(match[1]);
}

function parseStatuses(raw: string | undefined): IssueStatus[] | null {
  if (raw === undefined || raw === '') return null;
  const statuses = raw.split(',').map((s) => s.trim());
  for (const s of statuses) {
    if (!(ISSUE_STATUSES as readonly string[]).includes(s)) throw new ValidationError(`status: must be one of ${ISSUE_STATUSES.join(', ')} (comma-separated)`);
  }
  return statuses as IssueStatus[];
}

/** Registers the issue components once per OpenAPI document and returns their $refs. */
export function registerIssueSchemas(openapi: OpenApiDocument) {
  return {
    IssueTag: openapi.addSchema('IssueTag', IssueTag),
    Issue: openapi.addSchema('Issue', Issue),
    IssueList: openapi.addSchema('IssueList', IssueList),
    StartReview: openapi.addSchema('IssueStartReview', IssueStartReview),
    ChatMessage: openapi.addSchema('IssueChatMessage', IssueChatMessage),
  };
}

export function issueRoutes(router: Router, deps: AppDeps): void {
  const s = registerIssueSchemas(deps.openapi);
  const issues = issueService(deps);

  defineRoute<unknown, IssueListQuery>(router, deps, {
    method: 'get', path: '/projects/{project_id}/issues', tag: 'issues', scope: 'read', projectParam: true,
    summary: 'List the issues of a project, newest first; filters status (comma list), tag (tag id), assignee (user id or `none`), flagged; include_agents and include_trend add agent_names and occurrence_trend',
    query: IssueListQuery,
    responses: { 200: { description: 'A page of issues', schema: s.IssueList } },
    handler: async ({ tenantId, project, query }) => {
      if (query.tag !== undefined && !isUuid(query.tag)) throw new ValidationError('tag: must be a tag id');
      if (query.assignee !== undefined && query.assignee !== 'none' && !isUuid(query.assignee)) throw new ValidationError('assignee: must be a user id or none');
      const page = await issues.list(tenantId, project.id, {
        statuses: parseStatuses(query.status),
        tagId: query.tag ?? null,
        assignee: query.assignee ?? null,
        flagged: query.flagged ?? null,
        beforeSeq: query.cursor ? decodeCursor(query.cursor) : null,
        limit: query.limit,
      }, { agents: query.include_agents ?? false, trend: query.include_trend ?? false });
      return { issues: page.issues, next_cursor: page.nextSeq === null ? null : encodeCursor(page.nextSeq) };
    },
  });

  defineRoute<NewIssue>(router, deps, {
    method: 'post', path: '/projects/{project_id}/issues', tag: 'issues', scope: 'admin', projectParam: true,
    summary: 'Create an issue by hand (records issue.created)',
    body: NewIssue,
    responses: { 201: { description: 'Created', schema: s.Issue } },
    handler: async ({ tenantId, project, body, actor }) => ({ status: 201, body: await issues.create(tenantId, project.id, body, actor) }),
  });

  defineRoute(router, deps, {
    method: 'get', path: '/issues/{issue_id}', tag: 'issues', scope: 'read',
    summary: 'Get an issue', responses: { 200: { description: 'Issue', schema: s.Issue } },
    handler: ({ principal, params }) => issues.get(principal, params.issue_id),
  });

  defineRoute<IssuePatch>(router, deps, {
    method: 'patch', path: '/issues/{issue_id}', tag: 'issues', scope: 'admin',
    summary: 'Edit title, description, assignee or flagged (flagged changes record issue.flagged / issue.unflagged); status changes use the transition routes',
    body: IssuePatch,
    responses: { 200: { description: 'Issue', schema: s.Issue } },
    handler: ({ principal, params, body, actor }) => issues.edit(principal, params.issue_id, body, actor),
  });

  defineRoute(router, deps, {
    method: 'patch', path: '/issues/{issue_id}/start-review', tag: 'issues', scope: 'admin',
    summary: 'Start reviewing an issue: open → in_progress, assignee set to the acting user only when unassigned (one atomic write); in_progress is returned unchanged; a terminal issue answers 409 issue_terminal_conflict',
    responses: { 200: { description: 'The issue after the call', schema: s.StartReview } },
    handler: ({ principal, params, actor }) => issues.startReview(principal, params.issue_id, actor),
  });

  const transitions: [TransitionName, string][] = [
    ['resolve', 'Resolve an issue (open or in_progress → resolved; records issue.resolved)'],
    ['dismiss', 'Dismiss an issue (open or in_progress → dismissed; records issue.dismissed)'],
    ['reopen', 'Reopen a resolved or dismissed issue (→ open; records issue.reopened)'],
    ['flag', 'Flag an issue (records issue.flagged)'],
    ['unflag', 'Remove the flag (records issue.unflagged)'],
  ];
  for (const [name, summary] of transitions) {
    defineRoute(router, deps, {
      method: 'patch', path: `/issues/{issue_id}/${name}`, tag: 'issues', scope: 'admin',
      summary: `${summary}. Repeating it returns the issue unchanged and records nothing.`,
      responses: { 200: { description: 'Issue', schema: s.Issue } },
      handler: ({ principal, params, actor }) => issues.transition(principal, params.issue_id, name, actor),
    });
  }

  defineRoute<NewChatMessage>(router, deps, {
    method: 'post', path: '/issues/{issue_id}/chat', tag: 'issues', scope: 'admin',
    summary: 'Post a message on an issue (records issue.chat_sent)',
    body: NewChatMessage,
    responses: { 201: { description: 'Message', schema: s.ChatMessage } },
    handler: async ({ principal, params, body, actor }) => ({ status: 201, body: await issues.postChat(principal, params.issue_id, body.message, actor) }),
  });

  defineRoute(router, deps, {
    method: 'get', path: '/issues/{issue_id}/chat', tag: 'issues', scope: 'read',
    summary: 'Messages on an issue, oldest first',
    responses: { 200: { description: 'Messages', schema: IssueChatMessages } },
    handler: async ({ principal, params }) => ({ messages: await issues.chat(principal, params.issue_id) }),
  });

  defineRoute<unknown, OccurrencesQuery>(router, deps, {
    method: 'get', path: '/issues/{issue_id}/occurrences', tag: 'issues', scope: 'read',
    summary: 'Occurrences of an issue (trace id, span id, time), newest first',
    query: OccurrencesQuery,
    responses: { 200: { description: 'A page of occurrences', schema: IssueOccurrenceList } },
    handler: ({ principal, params, query }) => issues.occurrences(principal, params.issue_id, query.limit, query.cursor ?? null),
  });

}
