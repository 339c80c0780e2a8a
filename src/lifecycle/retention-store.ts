/**
 * Retention settings in PostgreSQL (sql/026_retention.sql): a tenant's default and each project's own.
 * What a project keeps is its own setting, else its tenant's default, else 90 days; the API answers
 * these rows and read paths hide expired content by them.
 */
import type { SqlHandle } from '../platform/postgres/postgres.js';
import { MAX_RETENTION_DAYS, type Retention, type RetentionInput } from './retention-schemas.js';

interface SettingRow {
  analytics_days: number;
  content_days: number;
  updated_at: Date;
}

const DEFAULT_RETENTION: Retention = { analytics_days: MAX_RETENTION_DAYS, content_days: MAX_RETENTION_DAYS, source: 'default', updated_at: null };

const answer = (row: SettingRow | undefined, source: 'project' | 'tenant'): Retention | null =>
  row ? { analytics_days: row.analytics_days, content_days: row.content_days, source, updated_at: row.updated_at.toISOString() } : null;

/** The tenant's default: its own row, else 90 days. */
export async function tenantRetention(sql: SqlHandle, tenantId: string): Promise<Retention> {
  const [row] = await sql<SettingRow[]>`
    select analytics_days, content_days, updated_at from tenant_retention where tenant_id = ${tenantId}`;
  return answer(row, 'tenant') ?? DEFAULT_RETENTION;
}

/** What the project keeps: its own setting, else the tenant's default, else 90 days. */
export async function projectRetention(sql: SqlHandle, tenantId: string, projectId: string): Promise<Retention> {
  const [row] = await sql<SettingRow[]>`
    select analytics_days, content_days, updated_at from project_retention where tenant_id = ${tenantId} and project_id = ${projectId}`;
  return answer(row, 'project') ?? tenantRetention(sql, tenantId);
}

/**
 * Sets the tenant's default, holding its row locked until the caller's transaction ends, and returns
 * the ids of the tenant's projects that have a setting of their own (the default does not reach them).
 */
export async function upsertTenantRetention(tx: SqlHandle, tenantId: string, input: RetentionInput): Promise<{ retention: Retention; ownSettings: string[] }> {
  const [row] = await tx<SettingRow[]>`
    insert into tenant_retention (tenant_id, analytics_days, content_days)
    values (${tenantId}, ${input.analytics_days}, ${input.content_days})
    on conflict (tenant_id) do update set analytics_days = excluded.analytics_days, content_days = excluded.content_days, updated_at = now()
    returning analytics_days, content_days, updated_at`;
  const own = await tx<{ project_id: string }[]>`select project_id from project_retention where tenant_id = ${tenantId} order by project_id`;
  return { retention: answer(row, 'tenant') as Retention, ownSettings: own.map((r) => r.project_id) };
}

/** Sets the project's own retention, holding its row locked until the caller's transaction ends. */
export async function upsertProjectRetention(tx: SqlHandle, tenantId: string, projectId: string, input: RetentionInput): Promise<Retention> {
  const [row] = await tx<SettingRow[]>`
    insert into project_retention (project_id, tenant_id, analytics_days, content_days)
    values (${projectId}, ${tenantId}, ${input.analytics_days}, ${input.content_days})
    on conflict (project_id) do update set analytics_days = excluded.analytics_days, content_days = excluded.content_days, updated_at = now()
    returning analytics_days, content_days, updated_at`;
  return answer(row, 'project') as Retention;
}
