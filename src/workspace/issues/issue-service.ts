import type { AppDeps } from '../../app/app-deps.js';
import { NotFoundError, ValidationError } from '../../platform/http/errors.js';
import type { Origin } from '../../spans/origin.js';
import type { Principal } from '../../tenancy/tenancy-store.js';
import { userExists } from '../../tenancy/tenancy-store.js';
import { issueForPrincipal, kickRelay } from './issue-access.js';
import { listChatMessages, postChatMessage, type ChatMessage } from './issue-chat-store.js';
import { listOccurrences } from './issue-occurrence-store.js';
import { createIssue, editIssue, issueWithTags, listIssues, type IssueListFilters } from './issue-store.js';
import { applyTransition, startReview, transitionIn, type StartReviewResult, type TransitionName } from './issue-transitions.js';
import type { Issue } from './issue-types.js';
import { withListInsights, type IssueListInsights } from './issue-list-insights.js';

declare module '../../app/app-deps.js' {
  interface ServiceRegistry {
    issues?: IssueService;
  }
}

export interface NewIssueInput {
  title: string;
  description?: string | null;
  assignee_user_id?: string | null;
  flagged?: boolean;
}

export interface IssueEditInput {
  title?: string;
  description?: string | null;
  assignee_user_id?: string | null;
  flagged?: boolean;
}

/**
 * Issues as the REST routes see them: route → this service → the issue stores. It owns what
 * spans stores — the transaction around a lifecycle event and its row, the assignee check, the
 * access check by issue id — and wakes the outbox relay after every commit that recorded an event.
 */
export class IssueService {
  constructor(private readonly deps: AppDeps) {}

  /** A page of issues, with the optional triage columns asked for (issue-list-insights.ts). */
  async list(tenantId: string, projectId: string, filters: IssueListFilters, insights: IssueListInsights = { agents: false, trend: false }): Promise<{ issues: Issue[]; nextSeq: bigint | null }> {
    const page = await listIssues(this.deps.sql, tenantId, projectId, filters);
    return { ...page, issues: await withListInsights(this.deps, tenantId, projectId, page.issues, insights) };
  }

  async create(tenantId: string, projectId: string, input: NewIssueInput, actor: Origin): Promise<Issue> {
    const title = cleanTitle(input.title);
    await this.checkAssignee(tenantId, input.assignee_user_id);
    const row = await this.deps.sql.begin((tx) => createIssue(tx, {
      tenantId, projectId, title, description: input.description ?? null,
      assigneeUserId: input.assignee_user_id ?? null, flagged: input.flagged ?? false,
    }, actor));
    kickRelay(this.deps);
    return issueWithTags(this.deps.sql, row);
  }

  async get(principal: Principal, issueId: string): Promise<Issue> {
    return issueWithTags(this.deps.sql, await issueForPrincipal(this.deps, principal, issueId));
  }

  /** Title, description and assignee in one transaction with the flag change (its event) when asked. */
  async edit(principal: Principal, issueId: string, input: IssueEditInput, actor: Origin): Promise<Issue> {
    const issue = await issueForPrincipal(this.deps, principal, issueId);
    const edit = {
      title: input.title === undefined ? undefined : cleanTitle(input.title),
      description: input.description,
      assigneeUserId: input.assignee_user_id,
    };
    await this.checkAssignee(principal.tenantId, input.assignee_user_id);
    const row = await this.deps.sql.begin(async (tx) => {
      if (input.flagged !== undefined) await transitionIn(tx, principal.tenantId, issue.id, input.flagged ? 'flag' : 'unflag', actor);
      const edited = await editIssue(tx, principal.tenantId, issue.id, edit);
      if (!edited) throw new NotFoundError('Issue not found');
      return edited;
    });
    kickRelay(this.deps);
    return issueWithTags(this.deps.sql, row);
  }

  async startReview(principal: Principal, issueId: string, actor: Origin): Promise<StartReviewResult> {
    const issue = await issueForPrincipal(this.deps, principal, issueId);
    const result = await startReview(this.deps.sql, principal.tenantId, issue.id, actor, principal.userId);
    kickRelay(this.deps);
    return result;
  }

  async transition(principal: Principal, issueId: string, name: TransitionName, actor: Origin): Promise<Issue> {
    const issue = await issueForPrincipal(this.deps, principal, issueId);
    const { row } = await applyTransition(this.deps.sql, principal.tenantId, issue.id, name, actor);
    kickRelay(this.deps);
    return issueWithTags(this.deps.sql, row);
  }

  async postChat(principal: Principal, issueId: string, message: string, actor: Origin): Promise<ChatMessage> {
    if (!message.trim()) throw new ValidationError('message: must not be blank');
    const issue = await issueForPrincipal(this.deps, principal, issueId);
    const posted = await postChatMessage(this.deps.sql, principal.tenantId, issue, message, actor);
    kickRelay(this.deps);
    return posted;
  }

  async chat(principal: Principal, issueId: string): Promise<ChatMessage[]> {
    const issue = await issueForPrincipal(this.deps, principal, issueId);
    return listChatMessages(this.deps.sql, principal.tenantId, issue.id);
  }

  async occurrences(principal: Principal, issueId: string, limit: number, cursor: string | null): Promise<Awaited<ReturnType<typeof listOccurrences>>> {
    const issue = await issueForPrincipal(this.deps, principal, issueId);
    return listOccurrences(this.deps.sql, principal.tenantId, issue.id, limit, cursor);
  }

  private async checkAssignee(tenantId: string, assignee: string | null | undefined): Promise<void> {
    if (assignee && !(await userExists(this.deps.sql, tenantId, assignee))) throw new ValidationError('assignee_user_id: unknown user');
  }
}

function cleanTitle(value: string): string {
  const trimmed = value.trim();
  if (!trimmed) throw new ValidationError('title: must not be blank');
  return trimmed;
}

export function issueService(deps: AppDeps): IssueService {
  return (deps.services.issues ??= new IssueService(deps));
}
