import type { Router } from 'express';
import type { AppDeps } from '../../app/app-deps.js';
import { defineRoute, projectForPrincipal } from '../../app/route.js';
import { ValidationError } from '../../platform/http/errors.js';
import { TagService } from './tag-service.js';
import { IssueTagList, IssueTagsQuery, NewIssueTag, TagsOfIssue } from './issue-schemas.js';

/**
 * Tag routes. Registered before the `/issues/{issue_id}` routes so `/issues/tags` is never
 * read as an issue id.
 */
export function tagRoutes(router: Router, deps: AppDeps): void {
  const IssueTag = { $ref: '#/components/schemas/IssueTag' };
  const tags = new TagService(deps);

  defineRoute<NewIssueTag>(router, deps, {
    method: 'post', path: '/issues/tags', tag: 'issues', scope: 'admin',
    summary: 'Create a project-scoped issue tag; names are unique per project by their trimmed, lower-cased form (409 conflict)',
    body: NewIssueTag,
    responses: { 201: { description: 'Created', schema: IssueTag } },
    handler: async ({ principal, tenantId, body }) => {
      if (!body.name.trim()) throw new ValidationError('name: must not be blank');
      const project = await projectForPrincipal(deps, principal, body.project_id);
      return { status: 201, body: await tags.create(tenantId, project.id, body.name, body.color) };
    },
  });

  defineRoute<unknown, IssueTagsQuery>(router, deps, {
    method: 'get', path: '/issues/tags', tag: 'issues', scope: 'read',
    summary: "A project's issue tags in normalized (trimmed, lower-cased) name order; a project-limited key may omit project_id",
    query: IssueTagsQuery,
    responses: { 200: { description: 'Tags', schema: IssueTagList } },
    handler: async ({ principal, tenantId, query }) => {
      const projectId = query.project_id ?? principal.projectId;
      if (!projectId) throw new ValidationError('project_id is required');
      const project = await projectForPrincipal(deps, principal, projectId);
      return { tags: await tags.list(tenantId, project.id) };
    },
  });

  const attachOrDetach = (method: 'put' | 'delete') =>
    defineRoute(router, deps, {
      method, path: '/issues/{issue_id}/tags/{tag_id}', tag: 'issues', scope: 'admin',
      summary: method === 'put' ? 'Attach a tag of the issue\'s project (idempotent)' : 'Detach a tag (idempotent: detaching a tag that is not attached succeeds)',
      responses: { 200: { description: "The issue's tags after the call", schema: TagsOfIssue } },
      handler: ({ principal, params }) => tags.setAttached(principal, params.issue_id, params.tag_id, method === 'put'),
    });
  attachOrDetach('put');
  attachOrDetach('delete');
}
