/**
 * A retention setting's ClickHouse side (clickhouse/015_retention.sql): every row of a project carries
 * the project's analytics_days and content_days, and the tables' TTL reads them. A change:
 *
 *  1. writes the new values to `retention_settings`, a Join table on every node, so every row
 *     inserted from then on carries them (the columns' DEFAULT looks them up there);
 *  2. updates the two columns of the project's rows already stored, in every table (ALTER … UPDATE,
 *     where the rows live: mutateWhereRowsLive). A mutation of columns a TTL reads also runs the TTL
 *     on the parts it rewrites: a shorter setting removes what it expires when the mutation applies.
 *
 * Both steps can run again with the same values. The update names every row of the target, not only
 * those that differ: a part written before clickhouse/015 computes the columns from the current
 * setting when read, so comparing would skip exactly the rows whose TTL still needs the change.
 */
import type { ClickHouseStore } from '../platform/clickhouse/clickhouse.js';
import { mutateWhereRowsLive } from '../platform/clickhouse/lightweight-delete.js';
import { param, raw, sql, type Fragment } from '../platform/clickhouse/sql/fragment.js';
import { tenantGuard } from '../platform/clickhouse/sql/tenant-guard.js';
import { PROJECT_ONLY_TABLES, TRACE_TABLES } from '../platform/clickhouse/trace-tables.js';
import type { RetentionInput } from './retention-schemas.js';

/** Every table that holds a project's rows, each with the two retention columns (clickhouse/015). */
export const RETENTION_TABLES: readonly string[] = Object.freeze([...Object.keys(TRACE_TABLES), ...PROJECT_ONLY_TABLES]);

/** Whose rows a change reaches: one project, or a tenant's projects but those with a setting of their own. */
export type RetentionTarget = { tenantId: string; projectId: string } | { tenantId: string; projectId: null; except: readonly string[] };

/** The retention_settings key of a target: the project, or '' for the tenant's default. */
const settingsKey = (target: RetentionTarget) => target.projectId ?? '';

/** The new values, where every insert's defaults read them (a Join table on every node: the next insert carries them). */
async function writeSettings(ch: ClickHouseStore, target: RetentionTarget, values: RetentionInput): Promise<void> {
  await ch.insertEverywhere('retention_settings', [
    { tenant_id: target.tenantId, project_id: settingsKey(target), analytics_days: values.analytics_days, content_days: values.content_days },
  ]);
}

/** The rows a change reaches, as a condition (tenant guard, then the projects). */
function targetCondition(target: RetentionTarget): Fragment {
  if (target.projectId !== null) return tenantGuard({ tenantId: target.tenantId, projectId: target.projectId });
  const guard = tenantGuard({ tenantId: target.tenantId });
  return target.except.length === 0 ? guard : sql`${guard} AND project_id NOT IN ${param('Array(String)', target.except)}`;
}

/**
 * Applies `values` to the target's future and stored rows; true when the engine applied the update of
 * stored rows within `waitMs` (else it goes on in the background: mutations are kept by the engine).
 */
export async function applyRetention(ch: ClickHouseStore, target: RetentionTarget, values: RetentionInput, waitMs: number): Promise<boolean> {
  await writeSettings(ch, target, values);
  const analytics = param('UInt8', values.analytics_days);
  const content = param('UInt8', values.content_days);
  const submitted = await mutateWhereRowsLive(
    ch,
    RETENTION_TABLES.map((table) => ({
      table,
      statement: (at, marker) =>
        sql`ALTER TABLE ${raw(at)} UPDATE analytics_days = ${analytics}, content_days = ${content}
            WHERE ${targetCondition(target)} AND ${marker} != ''
            SETTINGS mutations_sync = 0`,
    })),
    { lane: 'system', waitMs },
  );
  return submitted.applied;
}
