import type { Sql } from '../platform/postgres/postgres.js';
import { provisionTenant, tenantCount } from '../tenancy/tenancy-store.js';

/**
 * A store with no tenant gets tenant `default`, user `admin` and an admin key: LOOKOUT_BOOTSTRAP_KEY
 * when set, else a random one returned to the caller to print once. Runs under an advisory lock so
 * two processes starting together create one tenant.
 */
export async function bootstrapTenant(sql: Sql, bootstrapKey: string | null): Promise<{ tenantId: string; adminKey: string; generated: boolean } | null> {
  return sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(72818)`;
    if ((await tenantCount(tx)) > 0) return null;
    const created = await provisionTenant(tx, 'default', bootstrapKey ?? undefined);
    return { tenantId: created.tenant.id, adminKey: created.adminKey, generated: !bootstrapKey };
  });
}
