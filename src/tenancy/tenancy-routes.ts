import crypto from 'node:crypto';
import { Router, type Request } from 'express';
import type { AppDeps } from '../app/app-deps.js';
import { defineRoute } from '../app/route.js';
import { NotFoundError, UnauthorizedError, ValidationError } from '../platform/http/errors.js';
import { bearerToken } from './auth.js';
import { errorResponse } from '../platform/http/openapi.js';
import { assertStorableStrings } from '../platform/http/validation.js';
import { TenancyService } from './tenancy-service.js';
import { ApiKey, ApiKeyList, CreatedApiKey, NewApiKey, NewTenant, NewUser, TENANT_NAME_MAX, User, UserList } from './tenancy-shapes.js';

function sameSecret(given: string, expected: string): boolean {
  const a = crypto.createHash('sha256').update(given).digest();
  const b = crypto.createHash('sha256').update(expected).digest();
  return crypto.timingSafeEqual(a, b);
}

export function tenancyRoutes(deps: AppDeps): Router {
  const router = Router();
  const tenancy = new TenancyService(deps);
  const UserRef = deps.openapi.addSchema('User', User);
  deps.openapi.addSchema('ApiKey', ApiKey);

  defineRoute<NewUser>(router, deps, {
    method: 'post', path: '/users', tag: 'tenancy', scope: 'admin', tenantWide: true, summary: 'Create a user of the tenant',
    body: NewUser,
    responses: { 201: { description: 'Created', schema: UserRef } },
    handler: async ({ tenantId, body }) => ({ status: 201, body: await tenancy.createUser(tenantId, body.name, body.email ?? null) }),
  });

  defineRoute(router, deps, {
    method: 'get', path: '/users', tag: 'tenancy', scope: 'admin', tenantWide: true, summary: 'List the users of the tenant',
    responses: { 200: { description: 'Users', schema: UserList } },
    handler: async ({ tenantId }) => ({ users: await tenancy.listUsers(tenantId) }),
  });

  defineRoute<NewApiKey>(router, deps, {
    method: 'post', path: '/api-keys', tag: 'tenancy', scope: 'admin',
    summary: 'Create an API key; the secret `key` is returned only here',
    body: NewApiKey,
    responses: { 201: { description: 'Created (with the secret key)', schema: CreatedApiKey } },
    handler: async ({ body, principal }) => ({ status: 201, body: await tenancy.createApiKey(principal, body) }),
  });

  defineRoute(router, deps, {
    method: 'get', path: '/api-keys', tag: 'tenancy', scope: 'admin',
    summary: 'List API keys (never their secrets); a project-limited key sees only the keys limited to its project',
    responses: { 200: { description: 'Keys', schema: ApiKeyList } },
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
    requestBody: { required: true, content: { 'application/json': { schema: NewTenant } } },
    responses: { 201: { description: 'Created' }, '4XX': errorResponse },
  });
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
