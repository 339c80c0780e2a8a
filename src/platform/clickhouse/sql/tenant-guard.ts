/**
 * The tenant guard, written once (every query filters by
 * tenant). Modules never write a `tenant_id` condition: they take one from here, and they name the
 * tables they read with `scopedTable`. The runner refuses a scoped read whose statement names more
 * tables than it carries guards of the caller's tenant (statement-runner.ts), the way HogQL's
 * printer cannot print a table without its team guard.
 */
import { param, raw, sql, type Fragment } from './fragment.js';

export interface TenantScope {
  tenantId: string;
  /** Absent: the guard covers every project of the tenant (a tenant-wide read). */
  projectId?: string | null;
}

const ALIAS = /^[a-z_][a-z0-9_]*$/;

/** A marked fragment, so the runner can count guards and tables without parsing SQL. */
export interface GuardFragment extends Fragment {
  readonly mark: 'guard';
  readonly tenantId: string;
}

export interface TableFragment extends Fragment {
  readonly mark: 'table';
}

function prefix(alias?: string): string {
  if (alias === undefined) return '';
  if (!ALIAS.test(alias)) throw new Error(`refusing the table alias ${JSON.stringify(alias)}`);
  return `${alias}.`;
}

/**
 * `tenant_id = … AND project_id = …` (or only the tenant for a tenant-wide scope), qualified by
 * `alias` when the statement joins; the values are bound.
 */
export function tenantGuard(scope: TenantScope, alias?: string): GuardFragment {
  const p = prefix(alias);
  // Quoted like the analytics printer quotes every identifier.
  const tenant = sql`${raw(`${p}\`tenant_id\` = `)}${param('String', scope.tenantId)}`;
  const body = scope.projectId ? sql`${tenant}${raw(` AND ${p}\`project_id\` = `)}${param('String', scope.projectId)}` : tenant;
  return Object.freeze({ ...body, mark: 'guard', tenantId: scope.tenantId });
}

/** A qualified table name (ClickHouseStore.table) marked as read under a guard. */
export function scopedTable(qualified: string): TableFragment {
  return Object.freeze({ kind: 'Fragment', parts: Object.freeze([qualified]), mark: 'table' });
}

/** Guards of `tenantId` and guarded tables in a statement, for the runner's check. */
export function countGuards(fragment: Fragment, tenantId: string): { guards: number; foreignGuards: number; tables: number } {
  const counts = { guards: 0, foreignGuards: 0, tables: 0 };
  const visit = (node: Fragment) => {
    const mark = (node as Partial<GuardFragment | TableFragment>).mark;
    if (mark === 'guard') {
      if ((node as GuardFragment).tenantId === tenantId) counts.guards++;
      else counts.foreignGuards++;
    } else if (mark === 'table') {
      counts.tables++;
    }
    for (const part of node.parts) if (typeof part !== 'string' && part.kind === 'Fragment') visit(part);
  };
  visit(fragment);
  return counts;
}

export interface TraceKeyLike {
  tenantId: string;
  projectId: string;
  traceId: string;
}

/**
 * The rows of a set of traces across tenants (ingest and settling work on many tenants' traces in
 * one statement): tenant, project and trace each in its set. The sets over-select when keys mix
 * tenants; callers keep only rows whose full key they asked for.
 */
export function traceKeysGuard(keys: readonly TraceKeyLike[]): Fragment {
  return sql`${projectKeysGuard(keys)} AND trace_id IN ${param('Array(String)', [...new Set(keys.map((k) => k.traceId))])}`;
}

/** The rows of a set of projects across tenants: tenant and project each in its set (over-selects like traceKeysGuard). */
export function projectKeysGuard(keys: readonly Omit<TraceKeyLike, 'traceId'>[]): Fragment {
  const set = (pick: (k: Omit<TraceKeyLike, 'traceId'>) => string) => param('Array(String)', [...new Set(keys.map(pick))]);
  return sql`tenant_id IN ${set((k) => k.tenantId)} AND project_id IN ${set((k) => k.projectId)}`;
}
