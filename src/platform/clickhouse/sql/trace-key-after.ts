import { param, sql, type Fragment } from './fragment.js';

/** A type, not an interface: cursors are stored as JSON (an interface has no index signature). */
export type TraceKeyCursor = { tenant_id: string; project_id: string; trace_id: string };

/**
 * "Key after the cursor" for paging a table sorted by (tenant_id, project_id, trace_id) in key order.
 * Spelled out column by column because ClickHouse prunes the primary key for this form and not for
 * the tuple comparison `(tenant_id, project_id, trace_id) > (…)`, which selects every granule
 * (EXPLAIN indexes = 1, chdb 26.7): with the tuple every page reads all rows before its cursor, so a
 * pass over the table is quadratic in its size.
 */
export function traceKeyAfter(cursor: TraceKeyCursor): Fragment {
  const t = param('String', cursor.tenant_id);
  const p = param('String', cursor.project_id);
  return sql`(tenant_id > ${t} OR (tenant_id = ${t} AND (project_id > ${p} OR (project_id = ${p} AND trace_id > ${param('String', cursor.trace_id)}))))`;
}
