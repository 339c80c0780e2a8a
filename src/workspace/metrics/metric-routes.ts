import { Router } from 'express';
import type { AppDeps } from '../../app/app-deps.js';
import { defineRoute } from '../../app/route.js';
import { metricService, type MetricInput } from './metric-service.js';

const eventValue = { description: 'BINARY: boolean (or 1/0); VALUE: number; FLAG: true or a reason string', type: ['boolean', 'number', 'string'] };

const metricSchema = {
  type: 'object',
  required: [
    'id', 'name', 'description', 'type', 'collection_type', 'project_id', 'project_name', 'preset', 'agent_name',
    'sampling_rate', 'created_at', 'total_events', 'recent_events', 'monitor', 'collection_config',
  ],
  properties: {
    id: { type: 'string' },
    name: { type: 'string' },
    description: { type: ['string', 'null'] },
    type: { type: 'string', enum: ['SYNTHETIC', 'OBSERVED'] },
    collection_type: { type: ['string', 'null'], enum: ['BINARY', 'VALUE', 'FLAG', null] },
    project_id: { type: 'string' },
    project_name: { type: 'string' },
    preset: { type: 'boolean' },
    agent_name: { type: ['string', 'null'] },
    sampling_rate: { type: ['number', 'null'] },
    created_at: { type: ['string', 'null'], format: 'date-time' },
    total_events: { type: 'number' },
    recent_events: {
      type: 'array',
      maxItems: 10,
      items: {
        type: 'object',
        required: ['id', 'trace_id', 'created_at', 'value'],
        properties: { id: { type: 'string' }, trace_id: { type: 'string' }, created_at: { type: 'string', format: 'date-time' }, value: eventValue },
      },
    },
    monitor: {
      type: 'object',
      required: ['threshold', 'interval_value', 'latest_status', 'latest_value'],
      properties: {
        threshold: { type: 'number' },
        interval_value: { type: 'number', description: 'Interval length in hours' },
        latest_status: { type: 'string', enum: ['ok', 'breached', 'no_data'] },
        latest_value: { type: ['number', 'null'] },
      },
    },
    collection_config: { type: 'null' },
  },
};

const metricInput = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'collection_type'],
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 200 },
    description: { type: ['string', 'null'], maxLength: 5000 },
    type: { type: 'string', enum: ['SYNTHETIC', 'OBSERVED'], description: 'Default SYNTHETIC' },
    collection_type: { type: 'string', enum: ['BINARY', 'VALUE', 'FLAG'] },
    agent_name: { type: ['string', 'null'], maxLength: 200 },
    sampling_rate: { type: ['number', 'null'], minimum: 0, maximum: 1, description: 'SYNTHETIC only; default 1' },
    monitor: {
      type: 'object',
      additionalProperties: false,
      properties: {
        threshold: { type: 'number' },
        interval_value: { type: 'number', exclusiveMinimum: 0, maximum: 2160, description: 'Hours; default 24' },
      },
    },
  },
};

const TRACE_ID = '^([0-9a-fA-F]{32}|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})$';

export function metricRoutes(deps: AppDeps): Router {
  const router = Router();
  const service = metricService(deps);
  const Metric = deps.openapi.addSchema('Metric', metricSchema);
  const MetricInputSchema = deps.openapi.addSchema('MetricInput', metricInput);
  const EventResult = deps.openapi.addSchema('MetricEventResult', {
    type: 'object',
    required: ['id', 'trace_id', 'created_at', 'value', 'sampled'],
    properties: {
      id: { type: ['string', 'null'] },
      trace_id: { type: 'string' },
      created_at: { type: ['string', 'null'], format: 'date-time' },
      value: eventValue,
      sampled: { type: 'boolean', description: 'false: the trace is outside the metric sample and nothing was stored' },
    },
  });

  defineRoute<MetricInput>(router, deps, {
    method: 'post', path: '/projects/{project_id}/metrics', tag: 'metrics', scope: 'admin', projectParam: true,
    summary: 'Create a metric that takes events (SYNTHETIC by default)', body: MetricInputSchema,
    responses: { 201: { description: 'Created', schema: Metric } },
    handler: async ({ tenantId, project, body }) => ({ status: 201, body: await service.create(tenantId, project.id, body) }),
  });

  defineRoute(router, deps, {
    method: 'get', path: '/projects/{project_id}/metrics', tag: 'metrics', scope: 'read', projectParam: true,
    summary: "List the project's metrics: presets first, then its own",
    responses: { 200: { description: 'Metrics', schema: { type: 'object', required: ['metrics'], properties: { metrics: { type: 'array', items: Metric } } } } },
    handler: async ({ tenantId, project }) => ({ metrics: await service.list(tenantId, project.id) }),
  });

  defineRoute(router, deps, {
    method: 'get', path: '/metrics/{metric_id}', tag: 'metrics', scope: 'read',
    summary: 'Get a metric with its latest events and monitor state', responses: { 200: { description: 'Metric', schema: Metric } },
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

  defineRoute<{ trace_id: string; value: unknown }>(router, deps, {
    method: 'post', path: '/metrics/{metric_id}/events', tag: 'metrics', scope: 'admin',
    summary: "Record a metric's value for a trace (validated against collection_type; SYNTHETIC metrics keep only sampled traces)",
    body: {
      type: 'object', additionalProperties: false, required: ['trace_id', 'value'],
      properties: { trace_id: { type: 'string', pattern: TRACE_ID, description: 'Lookout trace UUID or OpenTelemetry trace id (32 hex)' }, value: eventValue },
    },
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
