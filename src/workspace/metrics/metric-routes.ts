import { Router } from 'express';
import type { AppDeps } from '../../app/app-deps.js';
import { defineRoute } from '../../app/route.js';
import { metricService } from './metric-service.js';
import { Metric, MetricEventInput, MetricEventResult, MetricInput, MetricList } from './metric-schemas.js';

export function metricRoutes(deps: AppDeps): Router {
  const router = Router();
  const service = metricService(deps);
  const MetricRef = deps.openapi.addSchema('Metric', Metric);
  const MetricInputSchema = deps.openapi.addSchema('MetricInput', MetricInput);
  const EventResult = deps.openapi.addSchema('MetricEventResult', MetricEventResult);

  defineRoute<MetricInput>(router, deps, {
    method: 'post', path: '/projects/{project_id}/metrics', tag: 'metrics', scope: 'admin', projectParam: true,
    summary: 'Create a metric that takes events (SYNTHETIC by default)', body: MetricInputSchema,
    responses: { 201: { description: 'Created', schema: MetricRef } },
    handler: async ({ tenantId, project, body }) => ({ status: 201, body: await service.create(tenantId, project.id, body) }),
  });

  defineRoute(router, deps, {
    method: 'get', path: '/projects/{project_id}/metrics', tag: 'metrics', scope: 'read', projectParam: true,
    summary: "List the project's metrics: presets first, then its own",
    responses: { 200: { description: 'Metrics', schema: MetricList } },
    handler: async ({ tenantId, project }) => ({ metrics: await service.list(tenantId, project.id) }),
  });

  defineRoute(router, deps, {
    method: 'get', path: '/metrics/{metric_id}', tag: 'metrics', scope: 'read',
    summary: 'Get a metric with its latest events and monitor state', responses: { 200: { description: 'Metric', schema: MetricRef } },
    handler: async ({ principal, params }) => service.get(principal, params.metric_id),
  });

  defineRoute(router, deps, {
    method: 'delete', path: '/metrics/{metric_id}', tag: 'metrics', scope: 'admin',
    summary: 'Delete a metric and its events (presets cannot be deleted)', responses: { 204: { description: 'Deleted' } },
    handler: async ({ principal, params }) => {
      await service.remove(principal, params.metric_id);
      return { status: 204 };
    },
  });

  defineRoute<MetricEventInput>(router, deps, {
    method: 'post', path: '/metrics/{metric_id}/events', tag: 'metrics', scope: 'admin',
    summary: "Record a metric's value for a trace (validated against collection_type; SYNTHETIC metrics keep only sampled traces)",
    body: MetricEventInput,
    responses: {
      201: { description: 'Recorded (a repeat for the same trace replaces the value)', schema: EventResult },
      200: { description: 'Not in the sample: nothing stored', schema: EventResult },
    },
    handler: async ({ principal, params, body }) => {
      const outcome = await service.record(principal, params.metric_id, body.trace_id, body.value);
      return { status: outcome.sampled ? 201 : 200, body: outcome };
    },
  });

  return router;
}
