/**
 * The monitor routes' requests and answers, declared once as TypeBox schemas: the JSON Schema the
 * OpenAPI document carries and ajv validates with, and the types (`Static`) the service and store
 * use. This file imports nothing of the server, so the dashboard's type check can read it; the
 * routes register the schemas.
 */
import { Type, type Static } from 'typebox';
import { componentRef, nullable, stringEnum } from '../../platform/http/shape-kit.js';

export const MONITOR_KINDS = ['signal', 'tool'] as const;
export type MonitorKind = (typeof MONITOR_KINDS)[number];
export const EXPLORATION_STATUSES = ['learning', 'active', 'paused'] as const;
export type ExplorationStatus = (typeof EXPLORATION_STATUSES)[number];

/** A monitor as the API answers it: exactly these fields; guidance and criteria are never returned. */
export const Monitor = Type.Object({
  id: Type.String({ format: 'uuid' }),
  project_id: Type.String({ format: 'uuid' }),
  kind: stringEnum(MONITOR_KINDS),
  name: Type.String(),
  exploration_status: stringEnum(EXPLORATION_STATUSES),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
});
export type Monitor = Static<typeof Monitor>;

const guidance = (description: string) => nullable(Type.String({ maxLength: 5000, description }));

/**
 * issue_criteria of a tool monitor: an object `{error?, output_patterns?}` or a string of phrases
 * (monitor-definition.ts reads both).
 */
export const IssueCriteria = Type.Object(
  {
    error: Type.Optional(Type.Boolean()),
    output_patterns: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 500 }), { maxItems: 50 })),
  },
  { additionalProperties: false },
);
export type IssueCriteriaInput = string | Static<typeof IssueCriteria>;

/** POST /projects/{project_id}/monitors: name required; kind signal (default) or tool; tool needs tool_name and issue_criteria. */
export const MonitorInput = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    kind: Type.Optional(stringEnum(MONITOR_KINDS, { default: 'signal' })),
    seed_hint: Type.Optional(guidance('Guidance used while learning, never returned. Clauses: phrases, key=value, key~value, key? (docs/monitors.md)')),
    expected_behavior: Type.Optional(guidance('What normal looks like, same clauses; used while learning, never returned')),
    tool_name: Type.Optional(nullable(Type.String({ minLength: 1, maxLength: 200, description: 'tool monitors: the tool whose calls are counted' }))),
    issue_criteria: Type.Optional(
      Type.Unsafe<IssueCriteriaInput | null>({
        description: 'tool monitors: how a call is recognized as an issue — {error (default true), output_patterns} or a string of phrases',
        oneOf: [Type.String({ minLength: 1, maxLength: 5000 }), IssueCriteria, { type: 'null' }],
      }),
    ),
  },
  { additionalProperties: false },
);
export type MonitorInput = Static<typeof MonitorInput>;

/** PATCH /monitors/{monitor_id}. */
export const MonitorPatch = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    exploration_status: Type.Optional(stringEnum(EXPLORATION_STATUSES)),
    paused: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export type MonitorPatch = Static<typeof MonitorPatch>;

export const MonitorList = Type.Object({ monitors: Type.Array(componentRef('Monitor', Monitor)) });
