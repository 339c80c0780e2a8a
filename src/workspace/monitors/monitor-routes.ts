import { Router } from 'express';
import type { AppDeps } from '../../app/app-deps.js';
import { defineRoute } from '../../app/route.js';
import { monitorService } from './monitor-service.js';
import { Monitor, MonitorInput, MonitorList, MonitorPatch } from './monitor-schemas.js';

export function monitorRoutes(deps: AppDeps): Router {
  const router = Router();
  const service = monitorService(deps);
  const MonitorRef = deps.openapi.addSchema('Monitor', Monitor);
  const MonitorInputSchema = deps.openapi.addSchema('MonitorInput', MonitorInput);
  const MonitorPatchSchema = deps.openapi.addSchema('MonitorPatch', MonitorPatch);

  defineRoute<MonitorInput>(router, deps, {
    method: 'post', path: '/projects/{project_id}/monitors', tag: 'monitors', scope: 'admin', projectParam: true,
    summary: 'Create a signal or tool monitor; it starts learning', body: MonitorInputSchema,
    responses: { 201: { description: 'Created', schema: MonitorRef } },
    handler: async ({ tenantId, project, body }) => ({ status: 201, body: await service.create(tenantId, project.id, body) }),
  });

  defineRoute(router, deps, {
    method: 'get', path: '/projects/{project_id}/monitors', tag: 'monitors', scope: 'read', projectParam: true,
    summary: "List the project's monitors, oldest first",
    responses: { 200: { description: 'Monitors', schema: MonitorList } },
    handler: async ({ tenantId, project }) => ({ monitors: await service.list(tenantId, project.id) }),
  });

  defineRoute(router, deps, {
    method: 'get', path: '/monitors/{monitor_id}', tag: 'monitors', scope: 'read',
    summary: 'Get a monitor', responses: { 200: { description: 'Monitor', schema: MonitorRef } },
    handler: async ({ principal, params }) => service.get(principal, params.monitor_id),
  });

  defineRoute<MonitorPatch>(router, deps, {
    method: 'patch', path: '/monitors/{monitor_id}', tag: 'monitors', scope: 'admin',
    summary: "Rename, pause (exploration_status 'paused' or paused true), resume (paused false) or relearn (exploration_status 'learning')",
    body: MonitorPatchSchema,
    responses: { 200: { description: 'Monitor', schema: MonitorRef } },
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
