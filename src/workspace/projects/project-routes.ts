import { Router } from 'express';
import type { AppDeps } from '../../app/app-deps.js';
import { defineRoute } from '../../app/route.js';
import { ValidationError } from '../../platform/http/errors.js';
import { ProjectService } from './project-service.js';
import { Deletion } from '../../lifecycle/deletion-schemas.js';
import { Project } from '../../tenancy/tenancy-shapes.js';
import { DiagnosticsInput, InstrumentationDiagnostics, ProjectInput, ProjectList, ProjectReorder } from './project-schemas.js';

export function projectRoutes(deps: AppDeps): Router {
  const router = Router();
  const projects = new ProjectService(deps);
  const ProjectRef = deps.openapi.addSchema('Project', Project);
  const ProjectInputRef = deps.openapi.addSchema('ProjectInput', ProjectInput);
  const DeletionSchema = deps.openapi.addSchema('Deletion', Deletion);

  defineRoute(router, deps, {
    method: 'get', path: '/projects', tag: 'projects', scope: 'read',
    summary: 'List the projects of the tenant (a project-limited key sees only its project)',
    responses: { 200: { description: 'Projects', schema: ProjectList } },
    handler: async ({ principal }) => ({ projects: await projects.list(principal) }),
  });

  defineRoute<ProjectInput>(router, deps, {
    method: 'post', path: '/projects', tag: 'projects', scope: 'admin',
    summary: 'Create a project', body: ProjectInputRef,
    responses: { 201: { description: 'Created', schema: ProjectRef } },
    handler: async ({ body, principal }) => ({ status: 201, body: await projects.create(principal, body) }),
  });

  defineRoute<ProjectReorder>(router, deps, {
    method: 'post', path: '/projects/reorder', tag: 'projects', scope: 'admin',
    summary: 'Reorder projects: listed ids first, the rest keep their relative order after them',
    body: ProjectReorder,
    responses: { 204: { description: 'Reordered' } },
    handler: async ({ body, principal }) => {
      const ids = body.ordered_ids ?? body.orderedIds;
      if (!ids) throw new ValidationError('ordered_ids is required');
      if (body.ordered_ids && body.orderedIds && JSON.stringify(body.ordered_ids) !== JSON.stringify(body.orderedIds)) {
        throw new ValidationError('ordered_ids and orderedIds disagree');
      }
      await projects.reorder(principal, ids);
      return { status: 204 };
    },
  });

  defineRoute(router, deps, {
    method: 'get', path: '/projects/{project_id}', tag: 'projects', scope: 'read', projectParam: true,
    summary: 'Get a project', responses: { 200: { description: 'Project', schema: ProjectRef } },
    handler: async ({ project }) => project,
  });

  defineRoute<ProjectInput>(router, deps, {
    method: 'patch', path: '/projects/{project_id}', tag: 'projects', scope: 'admin', projectParam: true,
    summary: 'Update a project (name required)', body: ProjectInputRef,
    responses: { 200: { description: 'Project', schema: ProjectRef } },
    handler: ({ tenantId, project, body }) => projects.update(tenantId, project.id, body),
  });

  defineRoute(router, deps, {
    method: 'delete', path: '/projects/{project_id}', tag: 'projects', scope: 'admin', projectParam: true,
    summary: 'Delete a project: its workspace records at once, its stored traces by the deletion job this answers (202; follow it at GET /deletions/{deletion_id})',
    responses: { 202: { description: 'Deleted; the deletion job of its stored data', schema: DeletionSchema } },
    handler: async ({ tenantId, project, actor }) => ({ status: 202, body: await projects.delete(tenantId, project.id, actor) }),
  });

  const Diagnostics = deps.openapi.addSchema('InstrumentationDiagnostics', InstrumentationDiagnostics);

  defineRoute(router, deps, {
    method: 'get', path: '/projects/{project_id}/instrumentation-diagnostics', tag: 'projects', scope: 'read', projectParam: true,
    summary: 'Instrumentation diagnostics settings', responses: { 200: { description: 'Settings', schema: Diagnostics } },
    handler: ({ tenantId, project }) => projects.diagnostics(tenantId, project.id),
  });

  defineRoute<DiagnosticsInput>(router, deps, {
    method: 'put', path: '/projects/{project_id}/instrumentation-diagnostics', tag: 'projects', scope: 'admin', projectParam: true,
    summary: 'Turn instrumentation diagnostics on or off',
    body: DiagnosticsInput,
    responses: { 200: { description: 'Settings', schema: Diagnostics } },
    handler: ({ tenantId, project, body }) => projects.setDiagnostics(tenantId, project.id, body.enabled),
  });

  return router;
}
