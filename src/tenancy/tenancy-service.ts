import type { AppDeps } from '../app/app-deps.js';
import { NotFoundError, ValidationError } from '../platform/http/errors.js';
import { findProject } from './project-store.js';
import {
  createApiKey,
  createUser,
  listApiKeys,
  listUsers,
  provisionTenant,
  revokeApiKey,
  userExists,
  type ApiKeyRecord,
  type Principal,
  type Tenant,
  type User,
} from './tenancy-store.js';
import type { NewApiKey } from './tenancy-shapes.js';

/** The create-key body (tenancy-shapes.ts). */
export type ApiKeyInput = NewApiKey;

/** A new key as it is shown once: without the usage fields, with the secret. */
export type CreatedApiKey = Omit<ApiKeyRecord, 'last_used_at' | 'revoked_at'> & { key: string };

/**
 * Users, API keys and tenants as the routes see them: route → this service → tenancy-store and
 * project-store. It owns the rules of a project-limited key (it mints, lists and revokes
 * only keys limited to its own project) and the checks of the ids a key names.
 */
export class TenancyService {
  constructor(private readonly deps: AppDeps) {}

  async createUser(tenantId: string, name: string, email: string | null): Promise<User> {
    if (!name.trim()) throw new ValidationError('name: must not be blank');
    try {
      return await createUser(this.deps.sql, tenantId, name.trim(), email);
    } catch (error) {
      if ((error as { code?: string }).code === '23505') throw new ValidationError('email: a user with this email exists');
      throw error;
    }
  }

  listUsers(tenantId: string): Promise<User[]> {
    return listUsers(this.deps.sql, tenantId);
  }

  async createApiKey(principal: Principal, input: ApiKeyInput): Promise<CreatedApiKey> {
    const tenantId = principal.tenantId;
    const projectId = input.project_id ?? principal.projectId ?? null;
    // A project-limited admin key can only mint keys for its own project.
    if (principal.projectId && projectId !== principal.projectId) throw new ValidationError('project_id: outside this key');
    if (projectId && !(await findProject(this.deps.sql, tenantId, projectId))) throw new ValidationError('project_id: unknown project');
    const userId = input.user_id ?? principal.userId;
    if (input.user_id && !(await userExists(this.deps.sql, tenantId, input.user_id).catch(() => false))) {
      throw new ValidationError('user_id: unknown user');
    }
    const key = await createApiKey(this.deps.sql, tenantId, { name: input.name, scope: input.scope, projectId, userId });
    const { last_used_at: _u, revoked_at: _r, ...shown } = key;
    return shown;
  }

  /** A key limited to one project must not learn about the tenant's other projects. */
  listApiKeys(principal: Principal): Promise<ApiKeyRecord[]> {
    return listApiKeys(this.deps.sql, principal.tenantId, principal.projectId);
  }

  /** Outside a project-limited key, a key is not found: it must not revoke the tenant's admin key. */
  async revokeApiKey(principal: Principal, keyId: string): Promise<void> {
    const revoked = /^[0-9a-f-]{36}$/i.test(keyId) && (await revokeApiKey(this.deps.sql, principal.tenantId, keyId, principal.projectId));
    if (!revoked) throw new NotFoundError('API key not found');
  }

  /** A new tenant with its admin user and admin key (the operator route). */
  async provisionTenant(name: string): Promise<{ tenant: Tenant; admin_key: string }> {
    const created = await provisionTenant(this.deps.sql, name.trim());
    return { tenant: created.tenant, admin_key: created.adminKey };
  }
}
