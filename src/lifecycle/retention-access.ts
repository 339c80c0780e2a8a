/**
 * What read paths use of retention: the instant before which each project's raw content counts as
 * expired (src/spans/content-expiry.ts), from the settings in force now.
 */
import type { SqlHandle } from '../platform/postgres/postgres.js';
import { cutoffMs, type ContentCutoff } from '../spans/content-expiry.js';
import { MAX_RETENTION_DAYS } from './retention-schemas.js';

/** The content cutoffs of a tenant's projects at `nowMs`: those with a setting of their own, and the default for the rest. */
export async function contentCutoff(sql: SqlHandle, tenantId: string, nowMs = Date.now()): Promise<ContentCutoff> {
  const rows = await sql<{ project_id: string | null; content_days: number }[]>`
    select null::uuid as project_id, content_days from tenant_retention where tenant_id = ${tenantId}
    union all
    select project_id, content_days from project_retention where tenant_id = ${tenantId}`;
  const tenantDays = rows.find((r) => r.project_id === null)?.content_days ?? MAX_RETENTION_DAYS;
  const projects: Record<string, number> = {};
  for (const r of rows) if (r.project_id !== null) projects[r.project_id] = cutoffMs(r.content_days, nowMs);
  return { defaultMs: cutoffMs(tenantDays, nowMs), projects };
}
