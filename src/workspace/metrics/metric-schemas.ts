/**
 * The metric routes' requests and answers, declared once as TypeBox schemas: the JSON Schema the
 * OpenAPI document carries and ajv validates with, and the types (`Static`) the service and store
 * use. This file imports nothing of the server, so the dashboard's type check can read it; the
 * routes register the schemas.
 */
import { Type, type Static } from 'typebox';
import { componentRef, dateTime, nullable, stringEnum } from '../../platform/http/shape-kit.js';

export const METRIC_TYPES = ['SYNTHETIC', 'OBSERVED'] as const;
export type MetricType = (typeof METRIC_TYPES)[number];
export const COLLECTION_TYPES = ['BINARY', 'VALUE', 'FLAG'] as const;
export type CollectionType = (typeof COLLECTION_TYPES)[number];
/** no_data: no event in the interval; breached: latest_value above threshold; ok otherwise. */
export const MONITOR_STATUSES = ['ok', 'breached', 'no_data'] as const;
export type MonitorStatus = (typeof MONITOR_STATUSES)[number];

/** A stored event value: BINARY → boolean, VALUE → number, FLAG → true or a reason string. */
const eventValue = Type.Unsafe<boolean | number | string>({ description: 'BINARY: boolean (or 1/0); VALUE: number; FLAG: true or a reason string', type: ['boolean', 'number', 'string'] });
export type EventValue = Static<typeof eventValue>;

/** A metric as the API answers it: every field, always present. */
export const Metric = Type.Object({
  id: Type.String(),
  name: Type.String(),
  description: nullable(Type.String()),
  type: stringEnum(METRIC_TYPES),
  collection_type: Type.Unsafe<CollectionType | null>({ type: ['string', 'null'], enum: [...COLLECTION_TYPES, null] }),
  project_id: Type.String(),
  project_name: Type.String(),
  preset: Type.Boolean(),
  agent_name: nullable(Type.String()),
  sampling_rate: nullable(Type.Number()),
  created_at: nullable(dateTime),
  total_events: Type.Number(),
  recent_events: Type.Array(Type.Object({ id: Type.String(), trace_id: Type.String(), created_at: dateTime, value: eventValue }), { maxItems: 10 }),
  monitor: Type.Object({
    threshold: Type.Number(),
    interval_value: Type.Number({ description: 'Interval length in hours' }),
    latest_status: stringEnum(MONITOR_STATUSES),
    latest_value: nullable(Type.Number()),
  }),
  collection_config: Type.Null(),
});
export type Metric = Static<typeof Metric>;

/** POST /projects/{project_id}/metrics. */
export const MetricInput = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    description: Type.Optional(nullable(Type.String({ maxLength: 5000 }))),
    type: Type.Optional(stringEnum(METRIC_TYPES, { description: 'Default SYNTHETIC' })),
    collection_type: stringEnum(COLLECTION_TYPES),
    agent_name: Type.Optional(nullable(Type.String({ maxLength: 200 }))),
    sampling_rate: Type.Optional(nullable(Type.Number({ minimum: 0, maximum: 1, description: 'SYNTHETIC only; default 1' }))),
    monitor: Type.Optional(
      Type.Object(
        {
          threshold: Type.Optional(Type.Number()),
          interval_value: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 2160, description: 'Hours; default 24' })),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);
export type MetricInput = Static<typeof MetricInput>;

/** What recording an event answers; id and created_at are null when the trace is outside the sample. */
export const MetricEventResult = Type.Object({
  id: nullable(Type.String()),
  trace_id: Type.String(),
  created_at: nullable(dateTime),
  value: eventValue,
  sampled: Type.Boolean({ description: 'false: the trace is outside the metric sample and nothing was stored' }),
});
export type MetricEventResult = Static<typeof MetricEventResult>;

const TRACE_ID = '^([0-9a-fA-F]{32}|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})$';

/** POST /metrics/{metric_id}/events. */
export const MetricEventInput = Type.Object(
  { trace_id: Type.String({ pattern: TRACE_ID, description: 'Lookout trace UUID or OpenTelemetry trace id (32 hex)' }), value: eventValue },
  { additionalProperties: false },
);
export type MetricEventInput = Static<typeof MetricEventInput>;

export const MetricList = Type.Object({ metrics: Type.Array(componentRef('Metric', Metric)) });
