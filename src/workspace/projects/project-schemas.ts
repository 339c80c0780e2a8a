/**
 * The project routes' requests and answers, declared once as TypeBox schemas (the project record
 * itself is tenancy's): what the OpenAPI document carries, what ajv validates with, and the types
 * the service and the dashboard use. This file imports nothing of the server, so the dashboard's
 * type check can read it; the routes register the schemas.
 */
import { Type, type Static } from 'typebox';
import { componentRef, nullable } from '../../platform/http/shape-kit.js';
import { Project } from '../../tenancy/tenancy-shapes.js';

/** POST /projects and PATCH /projects/{project_id}: {name required, description string or null optional}; no other keys. */
export const ProjectInput = Type.Object(
  { name: Type.String({ minLength: 1, maxLength: 200 }), description: Type.Optional(nullable(Type.String({ maxLength: 5000 }))) },
  { additionalProperties: false },
);
export type ProjectInput = Static<typeof ProjectInput>;

const ids = Type.Array(Type.String(), { maxItems: 10000 });
/** POST /projects/reorder: the ids in their new order, under either spelling. */
export const ProjectReorder = Type.Object({ ordered_ids: Type.Optional(ids), orderedIds: Type.Optional(ids) }, { additionalProperties: false });
export type ProjectReorder = Static<typeof ProjectReorder>;

/** What a project's instrumentation sends, as the diagnostics route answers it. */
export const InstrumentationDiagnostics = Type.Object({ enabled: Type.Boolean(), chat_connected: Type.Boolean() });
export type InstrumentationDiagnostics = Static<typeof InstrumentationDiagnostics>;

/** PUT /projects/{project_id}/instrumentation-diagnostics. */
export const DiagnosticsInput = Type.Object({ enabled: Type.Boolean() }, { additionalProperties: false });
export type DiagnosticsInput = Static<typeof DiagnosticsInput>;

/** GET /projects. */
export const ProjectList = Type.Object({ projects: Type.Optional(Type.Array(componentRef('Project', Project))) });
