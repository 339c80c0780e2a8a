import crypto from 'node:crypto';
import type { SqlHandle } from '../platform/postgres/postgres.js';
import { generateApiKey, hashApiKey, type Scope } from './keys.js';
import type { ApiKey, User } from './tenancy-shapes.js';

export interface Tenant {
  id: string;
  name: string;
}

export type { User };
/** An API key as the list answers it (tenancy-shapes.ts). */
export type ApiKeyRecord = ApiKey;

/** What a request knows about its caller once the bearer key is verified. */
export interface Principal {
  tenantId: string;
  keyId: string;
  scope: Scope;
  projectId: string | null;
  userId: string | null;
}

const iso = (value: Date | null): string | null => (value ? value.toISOString() : null);

export async function createTenant(sql: SqlHandle, name: string): Promise<Tenant> {
  const id = crypto.randomUUID();
  await sql`insert into tenants (id, name) values (${id}, ${name})`;
  return { id, name };
}

export async function createUser(sql: SqlHandle, tenantId: string, name: string, email: string | null): Promise<User> {
  const [row] = await sql<{ id: string; name: string; email: string | null; created_at: Date }[]>`
    insert into users (id, tenant_id, name, email) values (${crypto.randomUUID()}, ${tenantId}, ${name}, ${email})
    returning id, name, email, created_at`;
  return { ...row, created_at: row.created_at.toISOString() };
}

export async function listUsers(sql: SqlHandle, tenantId: string): Promise<User[]> {
  const rows = await sql<{ id: string; name: string; email: string | null; created_at: Date }[]>`
    select id, name, email, created_at from users where tenant_id = ${tenantId} order by created_at, id`;
  return rows.map((r) => ({ ...r, created_at: r.created_at.toISOString() }));
}

export async function userExists(sql: SqlHandle, tenantId: string, userId: string): Promise<boolean> {
  const rows = await sql`select 1 from users where tenant_id = ${tenantId} and id = ${userId}`;
  return rows.length > 0;
}

export async function createApiKey(
  sql: SqlHandle,
  tenantId: string,
  input: { name: string; scope: Scope; projectId: string | null; userId: string | null; key?: string },
): Promise<ApiKeyRecord & { key: string }> {
  const key = input.key ?? generateApiKey();
  const [row] = await sql<{ id: string; created_at: Date }[]>`
    insert into api_keys (id, tenant_id, name, scope, project_id, user_id, key_hash, key_prefix)
    values (${crypto.randomUUID()}, ${tenantId}, ${input.name}, ${input.scope}, ${input.projectId}, ${input.userId},
            ${hashApiKey(key)}, ${key.slice(0, 7)})
    returning id, created_at`;
  return {
    id: row.id,
    name: input.name,
    scope: input.scope,
    project_id: input.projectId,
    user_id: input.userId,
    created_at: row.created_at.toISOString(),
    last_used_at: null,
    revoked_at: null,
    key,
  };
}

/** Keys of the tenant; `onlyProjectId` (a project-limited caller) narrows to keys limited to that project. */
export async function listApiKeys(sql: SqlHandle, tenantId: string, onlyProjectId: string | null = null): Promise<ApiKeyRecord[]> {
  const rows = await sql<
    { id: string; name: string; scope: Scope; project_id: string | null; user_id: string | null; created_at: Date; last_used_at: Date | null; revoked_at: Date | null }[]
  >`select id, name, scope, project_id, user_id, created_at, last_used_at, revoked_at
    from api_keys where tenant_id = ${tenantId} ${onlyProjectId ? sql`and project_id = ${onlyProjectId}` : sql``}
    order by created_at, id`;
  return rows.map((r) => ({ ...r, created_at: r.created_at.toISOString(), last_used_at: iso(r.last_used_at), revoked_at: iso(r.revoked_at) }));
}

/**
 * Revokes a key of the tenant; false when no such live key exists. `onlyProjectId` (a project-limited
 * caller) reaches only keys limited to that project, so it cannot revoke tenant-wide or other projects' keys.
 */
export async function revokeApiKey(sql: SqlHandle, tenantId: string, keyId: string, onlyProjectId: string | null = null): Promise<boolean> {
  const rows = await sql`update api_keys set revoked_at = now()
    where tenant_id = ${tenantId} and id = ${keyId} and revoked_at is null
      ${onlyProjectId ? sql`and project_id = ${onlyProjectId}` : sql``}
    returning id`;
  return rows.length > 0;
}


/**
 * Resolves a bearer key to its principal. last_used_at is written at most once a minute per key
 * so a busy ingest key does not turn every request into a write.
 */
export async function authenticateKey(sql: SqlHandle, key: string): Promise<Principal | null> {
  const [row] = await sql<{ id: string; tenant_id: string; scope: Scope; project_id: string | null; user_id: string | null; stale: boolean }[]>`
    select id, tenant_id, scope, project_id, user_id,
           (last_used_at is null or last_used_at < now() - interval '1 minute') as stale
    from api_keys where key_hash = ${hashApiKey(key)} and revoked_at is null`;
  if (!row) return null;
  if (row.stale) await sql`update api_keys set last_used_at = now() where id = ${row.id}`;
  return { tenantId: row.tenant_id, keyId: row.id, scope: row.scope, projectId: row.project_id, userId: row.user_id };
}

export async function tenantCount(sql: SqlHandle): Promise<number> {
  const [row] = await sql<{ n: number }[]>`select count(*)::int as n from tenants`;
  return row.n;
}

/** A new tenant with its user `admin` and an admin key, in one transaction. */
export async function provisionTenant(
  sql: SqlHandle & { begin?: unknown },
  name: string,
  key?: string,
): Promise<{ tenant: Tenant; user: User; adminKey: string }> {
  const run = async (tx: SqlHandle) => {
    const tenant = await createTenant(tx, name);
    const user = await createUser(tx, tenant.id, 'admin', null);
    const created = await createApiKey(tx, tenant.id, { name: 'admin', scope: 'admin', projectId: null, userId: user.id, key });
    return { tenant, user, adminKey: created.key };
  };
  const begin = (sql as { begin?: (fn: (tx: SqlHandle) => Promise<unknown>) => Promise<unknown> }).begin;
  if (typeof begin === 'function') {
    return (await begin.call(sql, run)) as { tenant: Tenant; user: User; adminKey: string };
  }
  return run(sql);
}
