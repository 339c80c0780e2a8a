/**
 * The deletion routes' requests and answers, declared once as TypeBox schemas: the JSON Schema the
 * OpenAPI document carries and ajv validates bodies with, and the TypeScript types derived from
 * them (`Static`) that the service returns and the dashboard can import. This file imports nothing
 * of the server; the routes register the schemas.
 */
import { Type, type Static } from 'typebox';
import { dateTime, nullable } from '../platform/http/shape-kit.js';

export const DELETION_KINDS = ['traces', 'thread', 'before', 'project'] as const;
export const DELETION_STATUSES = ['queued', 'running', 'succeeded'] as const;
/** The most trace ids one request may name. */
export const MAX_DELETION_TRACE_IDS = 1000;

/** A Lookout trace id (UUID) or an OpenTelemetry trace id (32 hex characters), in any letter case. */
const TRACE_ID_PATTERN = '^([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}|[0-9a-fA-F]{32})$';

const nullableDateTime = nullable(dateTime);

/** POST /projects/{project_id}/deletions: exactly one of the three selections (the service checks "exactly"). */
export const NewDeletion = Type.Object(
  {
    trace_ids: Type.Optional(
      Type.Array(Type.String({ pattern: TRACE_ID_PATTERN }), {
        minItems: 1,
        maxItems: MAX_DELETION_TRACE_IDS,
        description: 'Traces to delete: Lookout trace ids (UUID) or OpenTelemetry trace ids (32 hex)',
      }),
    ),
    thread_id: Type.Optional(Type.String({ minLength: 1, maxLength: 1000, description: 'Every trace of this thread (conversation)' })),
    before: Type.Optional(Type.String({ format: 'date-time', description: 'Every trace that started before this instant' })),
  },
  { additionalProperties: false },
);
export type NewDeletion = Static<typeof NewDeletion>;

/** A deletion job as the routes answer it. */
export const Deletion = Type.Object({
  id: Type.String({ format: 'uuid' }),
  project_id: Type.String({ format: 'uuid' }),
  kind: Type.Enum([...DELETION_KINDS], { description: 'traces, thread, before (the request\'s selection) or project (DELETE /projects/{project_id})' }),
  trace_ids: nullable(Type.Array(Type.String(), { description: 'kind traces: the Lookout trace ids' })),
  thread_id: nullable(Type.String()),
  before: nullableDateTime,
  status: Type.Enum([...DELETION_STATUSES], { description: 'queued, running (a failed attempt is retried: see last_error), succeeded' }),
  requested_by: Type.Object({
    actor: Type.String(),
    surface: Type.String(),
    user_id: Type.String({ description: "The key owner's user id; '' when none" }),
    api_key_id: Type.String(),
  }),
  created_at: dateTime,
  started_at: nullableDateTime,
  finished_at: nullableDateTime,
  traces_deleted: Type.Integer({ description: 'Traces whose data was removed so far' }),
  rows_deleted: Type.Record(Type.String(), Type.Integer(), { description: 'Rows removed so far, per table (ClickHouse tables by name, PostgreSQL ones prefixed pg.)' }),
  issues_emptied: Type.Integer({ description: 'Issues left with no occurrence (they now carry occurrences_deleted_at)' }),
  attempts: Type.Integer(),
  last_error: nullable(Type.String({ description: 'Why the last attempt failed; the job is retried' })),
});
export type Deletion = Static<typeof Deletion>;

export const DeletionList = Type.Object({ deletions: Type.Array(Deletion) });
export type DeletionList = Static<typeof DeletionList>;

/** GET /projects/{project_id}/deletions: the query string. */
export const DeletionListQuery = Type.Object({ limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })) }, { additionalProperties: false });
