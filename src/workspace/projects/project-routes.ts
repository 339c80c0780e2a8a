import { Router } from 'express';
import type { AppDeps } from '../../app-deps.js';
import { publishEvent } from '../../stores/shared-events.js';
import { defineRoute } from '../../http/route.js';
import { NotFoundError, ValidationError } from '../../http/errors.js';
import {
  createProject,
  deleteProject,
  getDiagnostics,
  PROJECT_DELETED_TOPIC,
  listProjects,
  reorderProjects,
  setDiagnostics,
  updateProject,
} from './project-store.js';

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

/** SPEC.md: {name string required, description string or null optional}; no other keys allowed. */
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

function cleanName(name: string): string {
  const trimmed = name.trim();
  if (!trimmed) throw new ValidationError('name: must not be blank');
  return trimmed;
}

export function projectRoutes(deps: AppDeps): Router {
  const router = Router();
  const Project = deps.openapi.addSchema('Project', projectSchema);
  const ProjectInput = deps.openapi.addSchema('ProjectInput', projectInput);

  defineRoute(router, deps, {
    method: 'get', path: '/projects', tag: 'projects', scope: 'read',
    summary: 'List the projects of the tenant (a project-limited key sees only its project)',
    responses: { 200: { description: 'Projects', schema: { type: 'object', properties: { projects: { type: 'array', items: Project } } } } },
    handler: async ({ tenantId, principal }) => ({ projects: await listProjects(deps.sql, tenantId, principal.projectId) }),
  });

  defineRoute<{ name: string; description?: string | null }>(router, deps, {
    method: 'post', path: '/projects', tag: 'projects', scope: 'admin',
    summary: 'Create a project', body: ProjectInput,
    responses: { 201: { description: 'Created', schema: Project } },
    handler: async ({ tenantId, body, principal }) => {
      if (principal.projectId) throw new ValidationError('A project-limited key cannot create projects');
      return { status: 201, body: await createProject(deps.sql, tenantId, cleanName(body.name), body.description ?? null) };
    },
  });

  defineRoute<{ ordered_ids?: string[]; orderedIds?: string[] }>(router, deps, {
    method: 'post', path: '/projects/reorder', tag: 'projects', scope: 'admin',
    summary: 'Reorder projects: listed ids first, the rest keep their relative order after them',
    body: reorderInput,
    responses: { 204: { description: 'Reordered' } },
    handler: async ({ tenantId, body, principal }) => {
      const ids = body.ordered_ids ?? body.orderedIds;
      if (!ids) throw new ValidationError('ordered_ids is required');
      if (body.ordered_ids && body.orderedIds && JSON.stringify(body.ordered_ids) !== JSON.stringify(body.orderedIds)) {
        throw new ValidationError('ordered_ids and orderedIds disagree');
      }
      const duplicate = ids.find((id, i) => ids.indexOf(id) !== i);
      if (duplicate !== undefined) throw new ValidationError(`ordered_ids: duplicate id ${duplicate}`);
      const outside = principal.projectId ? ids.filter((id) => id !== principal.projectId) : [];
      const foreign = outside.length > 0 ? outside : await reorderProjects(deps.sql, tenantId, ids.map((id) => id.toLowerCase()));
      if (foreign.length > 0) throw new ValidationError(`ordered_ids: unknown project id ${foreign[0]}`);
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
    handler: async ({ tenantId, project, body }) => {
      const updated = await updateProject(deps.sql, tenantId, project.id, { name: cleanName(body.name), description: body.description });
      if (!updated) throw new NotFoundError('Project not found');
      return updated;
    },
  });

  defineRoute(router, deps, {
    method: 'delete', path: '/projects/{project_id}', tag: 'projects', scope: 'admin', projectParam: true,
    summary: 'Delete a project and its workspace records', responses: { 204: { description: 'Deleted' } },
    handler: async ({ tenantId, project }) => {
      await deleteProject(deps.sql, tenantId, project.id);
      // Every process drops the project from its caches (the ingest project cache).
      await publishEvent(deps.sql, PROJECT_DELETED_TOPIC, { tenant_id: tenantId, project_id: project.id });
      return { status: 204 };
    },
  });

  const Diagnostics = deps.openapi.addSchema('InstrumentationDiagnostics', {
    type: 'object', required: ['enabled', 'chat_connected'],
    properties: { enabled: { type: 'boolean' }, chat_connected: { type: 'boolean' } },
  });

  // chat_connected says whether diagnostics can reach a chat channel; Lookout has no chat integration, so it is false.
  const diagnosticsOf = async (tenantId: string, projectId: string) => {
    const settings = await getDiagnostics(deps.sql, tenantId, projectId);
    if (!settings) throw new NotFoundError('Project not found');
    return { enabled: settings.enabled, chat_connected: false };
  };

  defineRoute(router, deps, {
    method: 'get', path: '/projects/{project_id}/instrumentation-diagnostics', tag: 'projects', scope: 'read', projectParam: true,
    summary: 'Instrumentation diagnostics settings', responses: { 200: { description: 'Settings', schema: Diagnostics } },
    handler: async ({ tenantId, project }) => diagnosticsOf(tenantId, project.id),
  });

  defineRoute<{ enabled: boolean }>(router, deps, {
    method: 'put', path: '/projects/{project_id}/instrumentation-diagnostics', tag: 'projects', scope: 'admin', projectParam: true,
    summary: 'Turn instrumentation diagnostics on or off',
    body: { type: 'object', additionalProperties: false, required: ['enabled'], properties: { enabled: { type: 'boolean' } } },
    responses: { 200: { description: 'Settings', schema: Diagnostics } },
    handler: async ({ tenantId, project, body }) => {
      await setDiagnostics(deps.sql, tenantId, project.id, body.enabled);
      return diagnosticsOf(tenantId, project.id);
    },
  });

  return router;
}
