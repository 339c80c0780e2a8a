import crypto from 'node:crypto';
import { isUuid } from '../platform/uuid.js';
import type { SqlHandle } from '../platform/postgres/postgres.js';
import type { Project } from './tenancy-shapes.js';

/** A project as the API answers it: every field always present. */
export type { Project };

interface ProjectRow {
  id: string;
  name: string;
  description: string | null;
  sort_order: number;
  created_at: Date | null;
  updated_at: Date | null;
  mcp_activated_at: Date | null;
}

function toProject(row: ProjectRow): Project {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    sort_order: row.sort_order,
    created_at: row.created_at?.toISOString() ?? null,
    updated_at: row.updated_at?.toISOString() ?? null,
    mcp_activated_at: row.mcp_activated_at?.toISOString() ?? null,
  };
}

/** Projects of a tenant in display order; `onlyId` narrows to one project (a project-limited key). */
export async function listProjects(sql: SqlHandle, tenantId: string, onlyId: string | null): Promise<Project[]> {
  const rows = await sql<ProjectRow[]>`
    select id, name, description, sort_order, created_at, updated_at, mcp_activated_at from projects
    where tenant_id = ${tenantId} ${onlyId ? sql`and id = ${onlyId}` : sql``}
    order by sort_order, created_at, id`;
  return rows.map(toProject);
}

export async function findProject(sql: SqlHandle, tenantId: string, projectId: string): Promise<Project | null> {
  if (!isUuid(projectId)) return null;
  const [row] = await sql<ProjectRow[]>`
    select id, name, description, sort_order, created_at, updated_at, mcp_activated_at from projects
    where tenant_id = ${tenantId} and id = ${projectId}`;
  return row ? toProject(row) : null;
}

/** A new project goes after the tenant's existing ones. */
export async function createProject(sql: SqlHandle, tenantId: string, name: string, description: string | null): Promise<Project> {
  const [row] = await sql<ProjectRow[]>`
    insert into projects (id, tenant_id, name, description, sort_order)
    values (${crypto.randomUUID()}, ${tenantId}, ${name}, ${description},
            (select coalesce(max(sort_order) + 1, 0) from projects where tenant_id = ${tenantId}))
    returning id, name, description, sort_order, created_at, updated_at, mcp_activated_at`;
  return toProject(row);
}

export async function updateProject(
  sql: SqlHandle,
  tenantId: string,
  projectId: string,
  change: { name: string; description?: string | null },
): Promise<Project | null> {
  if (!isUuid(projectId)) return null;
  const [row] = await sql<ProjectRow[]>`
    update projects set name = ${change.name},
      description = ${change.description === undefined ? sql`description` : change.description},
      updated_at = now()
    where tenant_id = ${tenantId} and id = ${projectId}
    returning id, name, description, sort_order, created_at, updated_at, mcp_activated_at`;
  return row ? toProject(row) : null;
}

/** Announced (LISTEN/NOTIFY) when a project is deleted, so every process drops it from its caches. */
export const PROJECT_DELETED_TOPIC = 'project_deleted';

export async function deleteProject(sql: SqlHandle, tenantId: string, projectId: string): Promise<boolean> {
  if (!isUuid(projectId)) return false;
  return (await sql`delete from projects where tenant_id = ${tenantId} and id = ${projectId} returning id`).length > 0;
}

/**
 * Puts `orderedIds` first, in that order; the tenant's other projects keep their relative order after
 * them. Returns the ids that are not the tenant's own projects (the caller answers 400 for them).
 */
export async function reorderProjects(sql: SqlHandle & { begin: unknown }, tenantId: string, orderedIds: string[]): Promise<string[]> {
  return (sql.begin as (fn: (tx: SqlHandle) => Promise<string[]>) => Promise<string[]>)(async (tx) => {
    const rows = await tx<{ id: string }[]>`
      select id from projects where tenant_id = ${tenantId} order by sort_order, created_at, id for update`;
    const own = new Set(rows.map((r) => r.id));
    const foreign = orderedIds.filter((id) => !own.has(id));
    if (foreign.length > 0) return foreign;
    const listed = new Set(orderedIds);
    const order = [...orderedIds, ...rows.map((r) => r.id).filter((id) => !listed.has(id))];
    await tx`
      update projects as p set sort_order = o.position, updated_at = now()
      from (select unnest(${order}::uuid[]) as id, generate_subscripts(${order}::uuid[], 1) - 1 as position) as o
      where p.id = o.id and p.tenant_id = ${tenantId}`;
    return [];
  });
}

export async function getDiagnostics(sql: SqlHandle, tenantId: string, projectId: string): Promise<{ enabled: boolean } | null> {
  const [row] = await sql<{ diagnostics_enabled: boolean }[]>`
    select diagnostics_enabled from projects where tenant_id = ${tenantId} and id = ${projectId}`;
  return row ? { enabled: row.diagnostics_enabled } : null;
}

export async function setDiagnostics(sql: SqlHandle, tenantId: string, projectId: string, enabled: boolean): Promise<void> {
  await sql`update projects set diagnostics_enabled = ${enabled}, updated_at = now()
    where tenant_id = ${tenantId} and id = ${projectId}`;
}

/** Set once, on the first MCP use of the project. */
export async function markMcpActivated(sql: SqlHandle, tenantId: string, projectId: string): Promise<void> {
  await sql`update projects set mcp_activated_at = now()
    where tenant_id = ${tenantId} and id = ${projectId} and mcp_activated_at is null`;
}
