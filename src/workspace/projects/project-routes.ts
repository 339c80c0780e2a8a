import { Router } from 'express';
import type { AppDeps } from '../../app/app-deps.js';
import { defineRoute } from '../../app/route.js';
import { ValidationError } from '../../platform/http/errors.js';
import { ProjectService } from './project-service.js';
import { Deletion } from '../../lifecycle/deletion-schemas.js';

const projectSchema = {
  type: 'object',
  required: ['id', 'name', 'description', 'sort_order', 'created_at', 'updated_at', 'mcp_activated_at'],
  properties: {
    id: { type: 'string' },
    name: { type: 'string' },
    description: { type: ['string', 'null'] },
    sort_order: { type: 'number' },
    created_at: { type: ['string', 'null'], format: 'date-time' },
    updated_at: { type: ['string', 'null'], format: 'date-time' },
    mcp_activated_at: { type: ['string', 'null'], format: 'date-time' },
  },
};

/** {name string required, description string or null optional}; no other keys allowed. */
const projectInput = {
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 200 },
    description: { type: ['string', 'null'], maxLength: 5000 },
  },
};

const reorderInput = {
  type: 'object',
  additionalProperties: false,
  properties: {
    ordered_ids: { type: 'array', items: { type: 'string' }, maxItems: 10000 },
    orderedIds: { type: 'array', items: { type: 'string' }, maxItems: 10000 },
  },
};

export function projectRoutes(deps: AppDeps): Router {
  const router = Router();
  const projects = new ProjectService(deps);
  const Project = deps.openapi.addSchema('Project', projectSchema);
  const ProjectInput = deps.openapi.addSchema('ProjectInput', projectInput);
  const DeletionSchema = deps.openapi.addSchema('Deletion', Deletion);

  defineRoute(router, deps, {
    method: 'get', path: '/projects', tag: 'projects', scope: 'read',
    summary: 'List the projects of the tenant (a project-limited key sees only its project)',
    responses: { 200: { description: 'Projects', schema: { type: 'object', properties: { projects: { type: 'array', items: Project } } } } },
    handler: async ({ principal }) => ({ projects: await projects.list(principal) }),
  });

  defineRoute<{ name: string; description?: string | null }>(router, deps, {
    method: 'post', path: '/projects', tag: 'projects', scope: 'admin',
    summary: 'Create a project', body: ProjectInput,
    responses: { 201: { description: 'Created', schema: Project } },
    handler: async ({ body, principal }) => ({ status: 201, body: await projects.create(principal, body) }),
  });

  defineRoute<{ ordered_ids?: string[]; orderedIds?: string[] }>(router, deps, {
    method: 'post', path: '/projects/reorder', tag: 'projects', scope: 'admin',
    summary: 'Reorder projects: listed ids first, the rest keep their relative order after them',
    body: reorderInput,
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
    summary: 'Get a project', responses: { 200: { description: 'Project', schema: Project } },
    handler: async ({ project }) => project,
  });

  defineRoute<{ name: string; description?: string | null }>(router, deps, {
    method: 'patch', path: '/projects/{project_id}', tag: 'projects', scope: 'admin', projectParam: true,
    summary: 'Update a project (name required)', body: ProjectInput,
    responses: { 200: { description: 'Project', schema: Project } },
    handler: ({ tenantId, project, body }) => projects.update(tenantId, project.id, body),
  });

  defineRoute(router, deps, {
    method: 'delete', path: '/projects/{project_id}', tag: 'projects', scope: 'admin', projectParam: true,
    summary: 'Delete a project: its workspace records at once, its stored traces by the deletion job this answers (202; follow it at GET /deletions/{deletion_id})',
    responses: { 202: { description: 'Deleted; the deletion job of its stored data', schema: DeletionSchema } },
    handler: async ({ tenantId, project, actor }) => ({ status: 202, body: await projects.delete(tenantId, project.id, actor) }),
  });

  const Diagnostics = deps.openapi.addSchema('InstrumentationDiagnostics', {
    type: 'object', required: ['enabled', 'chat_connected'],
    properties: { enabled: { type: 'boolean' }, chat_connected: { type: 'boolean' } },
  });

  defineRoute(router, deps, {
    method: 'get', path: '/projects/{project_id}/instrumentation-diagnostics', tag: 'projects', scope: 'read', projectParam: true,
    summary: 'Instrumentation diagnostics settings', responses: { 200: { description: 'Settings', schema: Diagnostics } },
    handler: ({ tenantId, project }) => projects.diagnostics(tenantId, project.id),
  });

  defineRoute<{ enabled: boolean }>(router, deps, {
    method: 'put', path: '/projects/{project_id}/instrumentation-diagnostics', tag: 'projects', scope: 'admin', projectParam: true,
    summary: 'Turn instrumentation diagnostics on or off',
    body: { type: 'object', additionalProperties: false, required: ['enabled'], properties: { enabled: { type: 'boolean' } } },
    responses: { 200: { description: 'Settings', schema: Diagnostics } },
    handler: ({ tenantId, project, body }) => projects.setDiagnostics(tenantId, project.id, body.enabled),
  });

  return router;
}
