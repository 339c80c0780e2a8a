/**
 * The agent understanding versions' requests and answers, declared once as TypeBox schemas: the
 * JSON Schema the OpenAPI document carries and ajv validates with, and the types (`Static`) the
 * service and store use. This file imports nothing of the server, so the dashboard's type check can
 * read it; the routes register the schemas.
 */
import { Type, type Static } from 'typebox';
import { componentRef, dateTime, nullable } from '../../platform/http/shape-kit.js';

/** A file may be large (a whole understanding document) but stays under the JSON body limit. */
const FILE_MAX = 500_000;

/** An agent understanding version: the identity a write answers with. */
export const ArtifactVersionIdentity = Type.Object({
  artifact_version_id: Type.String({ format: 'uuid' }),
  version: Type.Integer({ minimum: 1 }),
  agent_name: Type.String(),
  created_at: dateTime,
  updated_at: dateTime,
});
export type ArtifactVersionIdentity = Static<typeof ArtifactVersionIdentity>;
const identityRef = componentRef('AgentUnderstandingVersion', ArtifactVersionIdentity);

/** The read route adds the two files of the version (`understanding` and `expectations`). */
export const ArtifactVersion = Type.Intersect([identityRef, Type.Object({ understanding: Type.String(), expectations: Type.String() })]);
export type ArtifactVersion = Static<typeof ArtifactVersion>;

/** POST /projects/{project_id}/artifacts/versions: {agent_name, understanding?, expectations?, based_on_version?}. */
export const ArtifactVersionInput = Type.Object(
  {
    agent_name: Type.String({ minLength: 1, maxLength: 200 }),
    understanding: Type.Optional(Type.String({ maxLength: FILE_MAX })),
    expectations: Type.Optional(Type.String({ maxLength: FILE_MAX })),
    based_on_version: Type.Optional(nullable(Type.Integer({ minimum: 0 }))),
  },
  { additionalProperties: false },
);
export type ArtifactVersionInput = Static<typeof ArtifactVersionInput>;

/** GET /projects/{project_id}/artifacts/versions: the query string. */
export const ArtifactVersionsQuery = Type.Object({ agent_name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })) }, { additionalProperties: false });
export type ArtifactVersionsQuery = Static<typeof ArtifactVersionsQuery>;

export const ArtifactVersionList = Type.Object({ versions: Type.Array(identityRef) });
