import type { Router } from 'express';
import type { AppDeps } from '../app/app-deps.js';
import { defineRoute } from '../app/route.js';
import { Type } from 'typebox';
import { Deletion, DeletionListQuery, NewDeletion } from './deletion-schemas.js';
import { DeletionService } from './deletion-service.js';

/**
 * Deletion jobs (docs/data-lifecycle.md "Deletion"): an admin asks for a project's traces, a thread
 * or everything before an instant to be deleted and gets 202 with the job; the job runs in the
 * background of a worker process, and anyone who may read the project follows and lists them.
 * DELETE /projects/{project_id} starts a job for the whole project (workspace/projects).
 */
export function deletionRoutes(router: Router, deps: AppDeps): void {
  const DeletionSchema = deps.openapi.addSchema('Deletion', Deletion);
  const ListSchema = deps.openapi.addSchema('DeletionList', Type.Object({ deletions: Type.Array(Type.Unsafe<Deletion>(DeletionSchema)) }));
  const deletions = new DeletionService(deps);

  defineRoute<NewDeletion>(router, deps, {
    method: 'post', path: '/projects/{project_id}/deletions', tag: 'data lifecycle', scope: 'admin', projectParam: true,
    summary: 'Delete traces from every store: exactly one of trace_ids, thread_id or before. Answers 202 with the job; follow it at GET /deletions/{deletion_id}',
    body: NewDeletion,
    responses: { 202: { description: 'Accepted: the deletion job', schema: DeletionSchema } },
    handler: async ({ tenantId, project, body, actor }) => ({ status: 202, body: await deletions.create(tenantId, project.id, body, actor) }),
  });

  defineRoute<unknown, { limit?: number }>(router, deps, {
    method: 'get', path: '/projects/{project_id}/deletions', tag: 'data lifecycle', scope: 'read', projectParam: true,
    summary: "The project's deletion jobs, newest first: who asked, when, what, and how far each got",
    query: DeletionListQuery,
    responses: { 200: { description: 'Deletion jobs', schema: ListSchema } },
    handler: async ({ tenantId, project, query }) => ({ deletions: await deletions.list(tenantId, project.id, query.limit ?? 50) }),
  });

  defineRoute(router, deps, {
    method: 'get', path: '/deletions/{deletion_id}', tag: 'data lifecycle', scope: 'read',
    summary: 'A deletion job: status and counts (also of a deleted project)',
    responses: { 200: { description: 'Deletion job', schema: DeletionSchema } },
    handler: ({ principal, params }) => deletions.get(principal, params.deletion_id),
  });
}
