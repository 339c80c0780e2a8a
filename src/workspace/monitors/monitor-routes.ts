import { Router } from 'express';
import type { AppDeps } from '../../app/app-deps.js';
import { defineRoute } from '../../app/route.js';
import { monitorService, type MonitorInput, type MonitorPatch } from './monitor-service.js';

const monitorSchema = {
  type: 'object',
  required: ['id', 'project_id', 'kind', 'name', 'exploration_status', 'created_at', 'updated_at'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    project_id: { type: 'string', format: 'uuid' },
    kind: { type: 'string', enum: ['signal', 'tool'] },
    name: { type: 'string' },
    exploration_status: { type: 'string', enum: ['learning', 'active', 'paused'] },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
  },
};

const guidance = { type: ['string', 'null'], maxLength: 5000 };

/** name required; kind signal (default) or tool; tool needs tool_name and issue_criteria. */
const monitorInput = {
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 200 },
    kind: { type: 'string', enum: ['signal', 'tool'], default: 'signal' },
    seed_hint: { ...guidance, description: 'Guidance used while learning, never returned. Clauses: phrases, key=value, key~value, key? (docs/monitors.md)' },
    expected_behavior: { ...guidance, description: 'What normal looks like, same clauses; used while learning, never returned' },
    tool_name: { type: ['string', 'null'], minLength: 1, maxLength: 200, description: 'tool monitors: the tool whose calls are counted' },
    issue_criteria: {
      description: 'tool monitors: how a call is recognized as an issue — {error (default true), output_patterns} or a string of phrases',
      oneOf: [
        { type: 'string', minLength: 1, maxLength: 5000 },
        {
          type: 'object',
          additionalProperties: false,
          properties: {
            error: { type: 'boolean' },
            output_patterns: { type: 'array', maxItems: 50, items: { type: 'string', minLength: 1, maxLength: 500 } },
          },
        },
        { type: 'null' },
      ],
    },
  },
};

const monitorPatch = {
  type: 'object',
  additionalProperties: false,
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 200 },
    exploration_status: { type: 'string', enum: ['learning', 'active', 'paused'] },
    paused: { type: 'boolean' },
  },
};

export function monitorRoutes(deps: AppDeps): Router {
  const router = Router();
  const service = monitorService(deps);
  const Monitor = deps.openapi.addSchema('Monitor', monitorSchema);
  const MonitorInputSchema = deps.openapi.addSchema('MonitorInput', monitorInput);
  const MonitorPatchSchema = deps.openapi.addSchema('MonitorPatch', monitorPatch);

  defineRoute<MonitorInput>(router, deps, {
    method: 'post', path: '/projects/{project_id}/monitors', tag: 'monitors', scope: 'admin', projectParam: true,
    summary: 'Create a signal or tool monitor; it starts learning', body: MonitorInputSchema,
    responses: { 201: { description: 'Created', schema: Monitor } },
    handler: async ({ tenantId, project, body }) => ({ status: 201, body: await service.create(tenantId, project.id, body) }),
  });

  defineRoute(router, deps, {
    method: 'get', path: '/projects/{project_id}/monitors', tag: 'monitors', scope: 'read', projectParam: true,
    summary: "List the project's monitors, oldest first",
    responses: { 200: { description: 'Monitors', schema: { type: 'object', required: ['monitors'], properties: { monitors: { type: 'array', items: Monitor } } } } },
    handler: async ({ tenantId, project }) => ({ monitors: await service.list(tenantId, project.id) }),
  });

  defineRoute(router, deps, {
    method: 'get', path: '/monitors/{monitor_id}', tag: 'monitors', scope: 'read',
    summary: 'Get a monitor', responses: { 200: { description: 'Monitor', schema: Monitor } },
    handler: async ({ principal, params }) => service.get(principal, params.monitor_id),
  });

  defineRoute<MonitorPatch>(router, deps, {
    method: 'patch', path: '/monitors/{monitor_id}', tag: 'monitors', scope: 'admin',
    summary: "Rename, pause (exploration_status 'paused' or paused true), resume (paused false) or relearn (exploration_status 'learning')",
    body: MonitorPatchSchema,
    responses: { 200: { description: 'Monitor', schema: Monitor } },
    handler: async ({ principal, params, body }) => service.patch(principal, params.monitor_id, body),
  });

  defineRoute(router, deps, {
    method: 'delete', path: '/monitors/{monitor_id}', tag: 'monitors', scope: 'admin',
    summary: 'Delete a monitor and its observations', responses: { 204: { description: 'Deleted' } },
    handler: async ({ principal, params }) => {
      await service.remove(principal, params.monitor_id);
      return { status: 204 };
    },
  });

  return router;
}
