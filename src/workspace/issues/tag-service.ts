import type { AppDeps } from '../../app/app-deps.js';
import { NotFoundError } from '../../platform/http/errors.js';
import type { Principal } from '../../tenancy/tenancy-store.js';
import { issueForPrincipal } from './issue-access.js';
import { tagsOfIssues } from './issue-store.js';
import { attachTag, createTag, detachTag, findTag, listTags } from './tag-store.js';
import type { IssueTag } from './issue-types.js';

/** Tags as the routes see them: route → this service → tag-store and issue-store. */
export class TagService {
  constructor(private readonly deps: AppDeps) {}

  create(tenantId: string, projectId: string, name: string, color: string): Promise<IssueTag> {
    return createTag(this.deps.sql, tenantId, projectId, name, color);
  }

  list(tenantId: string, projectId: string): Promise<IssueTag[]> {
    return listTags(this.deps.sql, tenantId, projectId);
  }

  /**
   * Attaches (or detaches) a tag of the issue's project, idempotently, and answers the issue's tags
   * after the call. An issue outside the principal, or a tag of another project, is not found.
   */
  async setAttached(principal: Principal, issueId: string, tagId: string, attached: boolean): Promise<{ issue_id: string; tags: IssueTag[] }> {
    const issue = await issueForPrincipal(this.deps, principal, issueId);
    const tag = await findTag(this.deps.sql, principal.tenantId, issue.project_id, tagId);
    if (!tag) throw new NotFoundError('Tag not found in the issue\'s project');
    if (attached) await attachTag(this.deps.sql, principal.tenantId, issue.id, tag.id);
    else await detachTag(this.deps.sql, principal.tenantId, issue.id, tag.id);
    return { issue_id: issue.id, tags: (await tagsOfIssues(this.deps.sql, [issue.id])).get(issue.id) ?? [] };
  }
}
