import type { Router } from 'express';
import type { AppDeps } from '../app/app-deps.js';
import { defineRoute } from '../app/route.js';
import { Retention, RetentionInput } from './retention-schemas.js';
import { RetentionService } from './retention-service.js';

/**
 * Retention (docs/data-lifecycle.md "Retention"): how long a project keeps its figures
 * (analytics_days) and its raw content (content_days). A project's own setting is read with the
 * project and changed like its other settings (admin); the tenant's default, which every project
 * without a setting of its own follows, is a tenant-wide admin resource.
 */
export function retentionRoutes(router: Router, deps: AppDeps): void {
  const RetentionSchema = deps.openapi.addSchema('Retention', Retention);
  const InputSchema = deps.openapi.addSchema('RetentionInput', RetentionInput);
  const retention = new RetentionService(deps);

  defineRoute(router, deps, {
    method: 'get', path: '/projects/{project_id}/retention', tag: 'data lifecycle', scope: 'read', projectParam: true,
    summary: "The project's retention in force: its own setting, else the tenant's default, else 90 days",
    responses: { 200: { description: 'Retention', schema: RetentionSchema } },
    handler: ({ tenantId, project }) => retention.project(tenantId, project.id),
  });

  defineRoute<RetentionInput>(router, deps, {
    method: 'put', path: '/projects/{project_id}/retention', tag: 'data lifecycle', scope: 'admin', projectParam: true,
    summary: "Set the project's retention; applies to stored data too (a shorter one removes what it expires)",
    body: InputSchema,
    responses: { 200: { description: 'Retention', schema: RetentionSchema } },
    handler: ({ tenantId, project, body }) => retention.setProject(tenantId, project.id, body),
  });

  defineRoute(router, deps, {
    method: 'get', path: '/retention', tag: 'data lifecycle', scope: 'admin', tenantWide: true,
    summary: "The tenant's default retention, followed by every project without a setting of its own",
    responses: { 200: { description: 'Retention', schema: RetentionSchema } },
    handler: ({ tenantId }) => retention.tenant(tenantId),
  });

  defineRoute<RetentionInput>(router, deps, {
    method: 'put', path: '/retention', tag: 'data lifecycle', scope: 'admin', tenantWide: true,
    summary: "Set the tenant's default retention; applies to the stored data of every project without a setting of its own",
    body: InputSchema,
    responses: { 200: { description: 'Retention', schema: RetentionSchema } },
    handler: ({ tenantId, body }) => retention.setTenant(tenantId, body),
  });
}
