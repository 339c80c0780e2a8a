/**
 * The retention routes' requests and answers, declared once as TypeBox schemas: the JSON Schema the
 * OpenAPI document carries and ajv validates bodies with, and the TypeScript types derived from them
 * that the service returns and the dashboard imports. This file imports nothing of the server; the
 * routes register the schemas.
 */
import { Type, type Static } from 'typebox';
import { dateTime, nullable, stringEnum } from '../platform/http/shape-kit.js';

/** The longest any data is kept, and every project's retention until someone sets a shorter one. */
export const MAX_RETENTION_DAYS = 90;

const days = (description: string) => Type.Integer({ minimum: 1, maximum: MAX_RETENTION_DAYS, description });

/** PUT /projects/{project_id}/retention and PUT /retention: both values; content_days at most analytics_days (the service checks). */
export const RetentionInput = Type.Object(
  {
    analytics_days: days('Days every row of the project is kept: figures, durations, tokens, models, costs, statuses, ids (1-90)'),
    content_days: days('Days the raw content is kept: span attributes and events, inputs and outputs, messages, tool arguments and results, log records, search text (1-analytics_days)'),
  },
  { additionalProperties: false },
);
export type RetentionInput = Static<typeof RetentionInput>;

export const RETENTION_SOURCES = ['project', 'tenant', 'default'] as const;

/** A retention as the routes answer it: the values in force and where they come from. */
export const Retention = Type.Object({
  analytics_days: Type.Integer({ minimum: 1, maximum: MAX_RETENTION_DAYS }),
  content_days: Type.Integer({ minimum: 1, maximum: MAX_RETENTION_DAYS }),
  source: stringEnum([...RETENTION_SOURCES], {
    description: "project: set on the project; tenant: the tenant's default (PUT /retention); default: nothing set, 90 days",
  }),
  updated_at: nullable(dateTime),
});
export type Retention = Static<typeof Retention>;
