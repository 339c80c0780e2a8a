/**
 * Tenancy's requests and answers (projects, users, API keys, the operator's tenant route), declared
 * once as TypeBox schemas: the JSON Schema the OpenAPI document carries and ajv validates with, and
 * the types (`Static`) the stores return and the dashboard imports. This file imports nothing of the
 * server, so the dashboard's type check can read it; the routes register the schemas.
 */
import { Type, type Static } from 'typebox';
import { bareEnum, componentRef, nullable } from '../platform/http/shape-kit.js';

export const SCOPES = ['read', 'admin', 'ingest'] as const;
export type Scope = (typeof SCOPES)[number];

const nullableDateTime = nullable(Type.String({ format: 'date-time' }));

export const Project = Type.Object({
  id: Type.String(),
  name: Type.String(),
  description: nullable(Type.String()),
  sort_order: Type.Number(),
  created_at: nullableDateTime,
  updated_at: nullableDateTime,
  mcp_activated_at: nullableDateTime,
});
export type Project = Static<typeof Project>;

export const User = Type.Object({ id: Type.String(), name: Type.String(), email: nullable(Type.String()), created_at: Type.String() });
export type User = Static<typeof User>;

/** An API key as the list answers it: never its secret. */
export const ApiKey = Type.Object({
  id: Type.String(),
  name: Type.String(),
  scope: bareEnum(SCOPES),
  project_id: nullable(Type.String()),
  user_id: nullable(Type.String()),
  created_at: Type.String(),
  last_used_at: nullable(Type.String()),
  revoked_at: nullable(Type.String()),
});
export type ApiKey = Static<typeof ApiKey>;

/** GET /users and GET /api-keys. */
export const UserList = Type.Object({ users: Type.Optional(Type.Array(componentRef('User', User))) });
export const ApiKeyList = Type.Object({ api_keys: Type.Optional(Type.Array(componentRef('ApiKey', ApiKey))) });

/** POST /api-keys answers the key with its secret, shown only there. */
export const CreatedApiKey = Type.Intersect([componentRef('ApiKey', ApiKey), Type.Object({ key: Type.Optional(Type.String()) })]);

/** POST /users. */
export const NewUser = Type.Object(
  { name: Type.String({ minLength: 1, maxLength: 200 }), email: Type.Optional(nullable(Type.String({ format: 'email', maxLength: 320 }))) },
  { additionalProperties: false },
);
export type NewUser = Static<typeof NewUser>;

/** POST /api-keys. */
export const NewApiKey = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    scope: bareEnum(SCOPES),
    project_id: Type.Optional(nullable(Type.String())),
    user_id: Type.Optional(nullable(Type.String())),
  },
  { additionalProperties: false },
);
export type NewApiKey = Static<typeof NewApiKey>;

/** The bound of every name in the API (projects, users, keys, monitors, metrics). */
export const TENANT_NAME_MAX = 200;

/** POST /tenants (the operator route, which checks its body by hand: see tenancy-routes.ts). */
export const NewTenant = Type.Object({ name: Type.String({ minLength: 1, maxLength: TENANT_NAME_MAX }) }, { additionalProperties: false });
