/**
 * The code-host routes' requests and answers, declared once as TypeBox schemas: the JSON Schema the
 * OpenAPI document carries and ajv validates with, and the types (`Static`) the service and store
 * use. This file imports nothing of the server, so the dashboard's type check can read it; the
 * routes register the schemas.
 */
import { Type, type Static } from 'typebox';
import { dateTime, nullable, stringEnum } from '../../platform/http/shape-kit.js';

/**
 * Connection states (docs/code-host.md):
 * not_connected → connected | error (by the health check) → disconnected (DELETE), and back by PUT.
 * Binding states: none → active | error (repository check) → unbound (DELETE), and back by PUT.
 */
export const CONNECTION_STATUSES = ['not_connected', 'connected', 'error', 'disconnected'] as const;
export type ConnectionStatus = (typeof CONNECTION_STATUSES)[number];
export const BINDING_STATUSES = ['none', 'active', 'error', 'unbound'] as const;
export type BindingStatus = (typeof BINDING_STATUSES)[number];

const nullableString = nullable(Type.String());
const nullableDateTime = nullable(dateTime);

/** A project's code-host connection as the API answers it. */
export const CodeHostView = Type.Object({
  project_id: Type.String({ format: 'uuid' }),
  feature_enabled: Type.Boolean(),
  connection: Type.Object({
    status: stringEnum(CONNECTION_STATUSES),
    account_login: nullableString,
    account_html_url: nullableString,
    last_error_code: nullableString,
    last_error_at: nullableDateTime,
    connected_at: nullableDateTime,
    disconnected_at: nullableDateTime,
  }),
  binding: Type.Object({
    present: Type.Boolean(),
    status: stringEnum(BINDING_STATUSES),
    repository_owner: nullableString,
    repository_name: nullableString,
    commit_url_base: nullableString,
    unbound: Type.Boolean(),
  }),
});
export type CodeHostView = Static<typeof CodeHostView>;

/** PUT …/code-host/connection. */
export const CodeHostTokenInput = Type.Object({ token: Type.String({ minLength: 1, maxLength: 1000 }) }, { additionalProperties: false });
export type CodeHostTokenInput = Static<typeof CodeHostTokenInput>;

/** GitHub's account and repository name alphabet. */
const REPO_PART = '^[A-Za-z0-9_.-]{1,100}$';

/** PUT …/code-host/binding: {repository_owner, repository_name} or {repository: 'owner/name'} (the route checks which). */
export const CodeHostBindInput = Type.Object(
  {
    repository_owner: Type.Optional(Type.String({ pattern: REPO_PART })),
    repository_name: Type.Optional(Type.String({ pattern: REPO_PART })),
    repository: Type.Optional(Type.String({ maxLength: 201 })),
  },
  { additionalProperties: false },
);
export type CodeHostBindInput = Static<typeof CodeHostBindInput>;

/** PUT …/code-host/feature. */
export const CodeHostFeatureInput = Type.Object({ enabled: Type.Boolean() }, { additionalProperties: false });
export type CodeHostFeatureInput = Static<typeof CodeHostFeatureInput>;
