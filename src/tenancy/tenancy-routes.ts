import crypto from 'node:crypto';
import { Router, type Request } from 'express';
import type { AppDeps } from '../app/app-deps.js';
import { defineRoute } from '../app/route.js';
import { NotFoundError, UnauthorizedError, ValidationError } from '../platform/http/errors.js';
import { bearerToken } from './auth.js';
import { errorResponse } from '../platform/http/openapi.js';
import { assertStorableStrings } from '../platform/http/validation.js';
import { SCOPES, type Scope } from './keys.js';
import { TenancyService } from './tenancy-service.js';

function sameSecret(given: string, expected: string): boolean {
  const a = crypto.createHash('sha256').update(given).digest();
  const b = crypto.createHash('sha256').update(expected).digest();
  return crypto.timingSafeEqual(a, b);
}

export function tenancyRoutes(deps: AppDeps): Router {
  const router = Router();
  const tenancy = new TenancyService(deps);
  const User = deps.openapi.addSchema('User', {
    type: 'object', required: ['id', 'name', 'email', 'created_at'],
    properties: { id: { type: 'string' }, name: { type: 'string' }, email: { type: ['string', 'null'] }, created_at: { type: 'string' } },
  });
  const ApiKey = deps.openapi.addSchema('ApiKey', {
    type: 'object',
    required: ['id', 'name', 'scope', 'project_id', 'user_id', 'created_at', 'last_used_at', 'revoked_at'],
    properties: {
      id: { type: 'string' }, name: { type: 'string' }, scope: { enum: [...SCOPES] },
      project_id: { type: ['string', 'null'] }, user_id: { type: ['string', 'null'] },
      created_at: { type: 'string' }, last_used_at: { type: ['string', 'null'] }, revoked_at: { type: ['string', 'null'] },
    },
  });

  defineRoute<{ name: string; email?: string | null }>(router, deps, {
    method: 'post', path: '/users', tag: 'tenancy', scope: 'admin', tenantWide: true, summary: 'Create a user of the tenant',
    body: {
      type: 'object', additionalProperties: false, required: ['name'],
      properties: { name: { type: 'string', minLength: 1, maxLength: 200 }, email: { type: ['string', 'null'], format: 'email', maxLength: 320 } },
    },
    responses: { 201: { description: 'Created', schema: User } },
    handler: async ({ tenantId, body }) => ({ status: 201, body: await tenancy.createUser(tenantId, body.name, body.email ?? null) }),
  });

  defineRoute(router, deps, {
    method: 'get', path: '/users', tag: 'tenancy', scope: 'admin', tenantWide: true, summary: 'List the users of the tenant',
    responses: { 200: { description: 'Users', schema: { type: 'object', properties: { users: { type: 'array', items: User } } } } },
    handler: async ({ tenantId }) => ({ users: await tenancy.listUsers(tenantId) }),
  });

  defineRoute<{ name: string; scope: Scope; project_id?: string | null; user_id?: string | null }>(router, deps, {
    method: 'post', path: '/api-keys', tag: 'tenancy', scope: 'admin',
    summary: 'Create an API key; the secret `key` is returned only here',
    body: {
      type: 'object', additionalProperties: false, required: ['name', 'scope'],
      properties: {
        name: { type: 'string', minLength: 1, maxLength: 200 },
        scope: { enum: [...SCOPES] },
        project_id: { type: ['string', 'null'] },
        user_id: { type: ['string', 'null'] },
      },
    },
    responses: { 201: { description: 'Created (with the secret key)', schema: { allOf: [ApiKey, { type: 'object', properties: { key: { type: 'string' } } }] } } },
    handler: async ({ body, principal }) => ({ status: 201, body: await tenancy.createApiKey(principal, body) }),
  });

  defineRoute(router, deps, {
    method: 'get', path: '/api-keys', tag: 'tenancy', scope: 'admin',
    summary: 'List API keys (never their secrets); a project-limited key sees only the keys limited to its project',
    responses: { 200: { description: 'Keys', schema: { type: 'object', properties: { api_keys: { type: 'array', items: ApiKey } } } } },
    handler: async ({ principal }) => ({ api_keys: await tenancy.listApiKeys(principal) }),
  });

  defineRoute(router, deps, {
    method: 'delete', path: '/api-keys/{key_id}', tag: 'tenancy', scope: 'admin',
    summary: 'Revoke an API key (a project-limited key can revoke only keys limited to its project)',
    responses: { 204: { description: 'Revoked' } },
    handler: async ({ params, principal }) => {
      await tenancy.revokeApiKey(principal, params.key_id);
      return { status: 204 };
    },
  });

  // Operator route: takes the system credential, not a tenant key; absent entirely when LOOKOUT_SYSTEM_KEY is unset.
  deps.openapi.addOperation('/tenants', 'post', {
    summary: 'Create a tenant with its admin user and admin key (operator credential LOOKOUT_SYSTEM_KEY)',
    tags: ['operator'],
    requestBody: { required: true, content: { 'application/json': { schema: { type: 'object', required: ['name'], additionalProperties: false, properties: { name: { type: 'string', minLength: 1, maxLength: 200 } } } } } },
    responses: { 201: { description: 'Created' }, '4XX': errorResponse },
  });
  /** The bound of every name in the API (projects, users, keys, monitors, metrics). */
  const TENANT_NAME_MAX = 200;
  router.post('/tenants', async (req: Request, res) => {
    const systemKey = deps.config.systemKey;
    if (!systemKey) throw new NotFoundError(`No route for POST ${req.path}`);
    const token = bearerToken(req);
    if (!token || !sameSecret(token, systemKey)) throw new UnauthorizedError('The operator route needs the system key');
    const body = req.body as Record<string, unknown> | undefined;
    if (!body || typeof body !== 'object' || Array.isArray(body)) throw new ValidationError('body: must be object');
    const extra = Object.keys(body).find((k) => k !== 'name');
    if (extra) throw new ValidationError(`body: unknown key '${extra}'`);
    if (typeof body.name !== 'string' || !body.name.trim()) throw new ValidationError('name is required');
    if (body.name.length > TENANT_NAME_MAX) throw new ValidationError(`name: must be at most ${TENANT_NAME_MAX} characters`);
    assertStorableStrings(body, 'body');
    res.status(201).json(await tenancy.provisionTenant(body.name));
  });

  return router;
}
