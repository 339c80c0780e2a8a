import crypto from 'node:crypto';
import type { SqlHandle } from '../../platform/postgres/postgres.js';
import { publishEvent } from '../../platform/postgres/shared-events.js';
import { isUuid } from '../../platform/uuid.js';
import type { Baseline, WindowCounts } from './monitor-baseline.js';
import type { MonitorDefinition } from './monitor-signal.js';
import type { ExplorationStatus, Monitor, MonitorKind } from './monitor-schemas.js';

export type { ExplorationStatus, Monitor, MonitorKind };

export interface MonitorRow {
  id: string;
  tenant_id: string;
  project_id: string;
  kind: MonitorKind;
  name: string;
  seed_hint: string | null;
  expected_behavior: string | null;
  tool_name: string | null;
  issue_criteria: unknown;
  signal: MonitorDefinition;
  exploration_status: ExplorationStatus;
  baseline: Baseline | null;
  activated_at: Date | null;
  last_triggered_at: Date | null;
  last_issue_id: string | null;
  created_at: Date;
  updated_at: Date;
}

export function toMonitor(row: MonitorRow): Monitor {
  return {
    id: row.id,
    project_id: row.project_id,
    kind: row.kind,
    name: row.name,
    exploration_status: row.exploration_status,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

export interface NewMonitor {
  kind: MonitorKind;
  name: string;
  seedHint: string | null;
  expectedBehavior: string | null;
  toolName: string | null;
  issueCriteria: unknown;
  definition: MonitorDefinition;
}

/** null when the name is taken in the project (unique, case-insensitive). */
export async function insertMonitor(sql: SqlHandle, tenantId: string, projectId: string, input: NewMonitor): Promise<MonitorRow | null> {
  const [row] = await sql<MonitorRow[]>`
    insert into monitors (id, tenant_id, project_id, kind, name, seed_hint, expected_behavior, tool_name, issue_criteria, signal)
    values (${crypto.randomUUID()}, ${tenantId}, ${projectId}, ${input.kind}, ${input.name}, ${input.seedHint},
            ${input.expectedBehavior}, ${input.toolName},
            ${input.issueCriteria === null ? null : sql.json(input.issueCriteria as never)}, ${sql.json(input.definition as never)})
    on conflict do nothing
    returning *`;
  await monitorsChanged(sql);
  return row ?? null;
}

export async function findMonitor(sql: SqlHandle, tenantId: string, monitorId: string, options: { forUpdate?: boolean } = {}): Promise<MonitorRow | null> {
  if (!isUuid(monitorId)) return null;
  const [row] = await sql<MonitorRow[]>`
    select * from monitors where tenant_id = ${tenantId} and id = ${monitorId} ${options.forUpdate ? sql`for update` : sql``}`;
  return row ?? null;
}

export async function listMonitors(sql: SqlHandle, tenantId: string, projectId: string): Promise<MonitorRow[]> {
  return sql<MonitorRow[]>`
    select * from monitors where tenant_id = ${tenantId} and project_id = ${projectId} order by created_at, id`;
}

/** Monitors that observe traces: learning and active ones (paused monitors skip traces). */
export async function watchingMonitors(sql: SqlHandle, tenantId: string, projectId: string): Promise<MonitorRow[]> {
  return sql<MonitorRow[]>`
    select * from monitors where tenant_id = ${tenantId} and project_id = ${projectId}
      and exploration_status in ('learning', 'active') order by created_at, id`;
}

/**
 * The watching monitors of a project, as the evaluator asks for them on every processed trace
 * (one query per trace is a large share of ingest's database work at volume). Held for
 * WATCHING_CACHE_MS and dropped by every monitor write (insert, update, delete): at once in the
 * writing process, and in every other process when the write's NOTIFY arrives (at commit). A change
 * committed after an entry was filled, or a missed notification, reaches the evaluator within
 * WATCHING_CACHE_MS: a new or resumed monitor may miss the traces processed in that second.
 * The evaluator re-reads each monitor under its row lock before acting, so a stale entry never
 * makes a deleted or paused monitor act.
 */
const WATCHING_CACHE_MS = 1000;
let monitorWrites = 0;
const watchingCache = new Map<string, { until: number; generation: number; rows: Promise<MonitorRow[]> }>();

/** Drops this process's cached monitor lists (also on another process's change, via LISTEN/NOTIFY). */
export function forgetWatchingMonitors(): void {
  monitorWrites++;
  watchingCache.clear();
}

export const MONITORS_CHANGED_TOPIC = 'monitors_changed';

/** Clears the local cache now and tells every other process (at commit when `sql` is a transaction). */
async function monitorsChanged(sql: SqlHandle): Promise<void> {
  forgetWatchingMonitors();
  await publishEvent(sql, MONITORS_CHANGED_TOPIC);
}

export async function cachedWatchingMonitors(sql: SqlHandle, tenantId: string, projectId: string): Promise<MonitorRow[]> {
  const key = `${tenantId}\u0000${projectId}`;
  const now = Date.now();
  const hit = watchingCache.get(key);
  if (hit && hit.until > now && hit.generation === monitorWrites) return hit.rows;
  const generation = monitorWrites;
  const rows = watchingMonitors(sql, tenantId, projectId);
  const entry = { until: now + WATCHING_CACHE_MS, generation, rows };
  watchingCache.set(key, entry);
  // A failed read is not remembered.
  rows.catch(() => {
    if (watchingCache.get(key) === entry) watchingCache.delete(key);
  });
  if (watchingCache.size > 10_000) {
    for (const [k, v] of watchingCache) if (v.until <= now) watchingCache.delete(k);
  }
  return rows;
}

export interface MonitorChange {
  name?: string;
  exploration_status?: ExplorationStatus;
  /** undefined: keep; null: clear. */
  baseline?: Baseline | null;
  activated_at?: Date | null;
  last_triggered_at?: Date;
  last_issue_id?: string;
}

/** Applies a change; returns null when the new name is taken. */
export async function updateMonitor(sql: SqlHandle, tenantId: string, monitorId: string, change: MonitorChange): Promise<MonitorRow | null> {
  // updated_at tracks the record a client sees (name, state); trigger bookkeeping does not move it.
  const visible = change.name !== undefined || change.exploration_status !== undefined || change.baseline !== undefined;
  const values: Record<string, unknown> = visible ? { updated_at: new Date() } : {};
  if (change.name !== undefined) values.name = change.name;
  if (change.exploration_status !== undefined) values.exploration_status = change.exploration_status;
  if (change.baseline !== undefined) values.baseline = change.baseline === null ? null : sql.json(change.baseline as never);
  if (change.activated_at !== undefined) values.activated_at = change.activated_at;
  if (change.last_triggered_at !== undefined) values.last_triggered_at = change.last_triggered_at;
  if (change.last_issue_id !== undefined) values.last_issue_id = change.last_issue_id;
  if (Object.keys(values).length === 0) return findMonitor(sql, tenantId, monitorId);
  try {
    const [row] = await sql<MonitorRow[]>`
      update monitors set ${sql(values as Record<string, never>, ...(Object.keys(values) as never[]))}
      where tenant_id = ${tenantId} and id = ${monitorId} returning *`;
    // Pausing, resuming or relearning changes which monitors watch traces (see cachedWatchingMonitors).
    if (change.exploration_status !== undefined) await monitorsChanged(sql);
    return row ?? null;
  } catch (error) {
    if ((error as { code?: string }).code === '23505') return null;
    throw error;
  }
}

export async function deleteMonitor(sql: SqlHandle, tenantId: string, monitorId: string): Promise<void> {
  await sql`delete from monitors where tenant_id = ${tenantId} and id = ${monitorId}`;
  await monitorsChanged(sql);
}

export async function clearObservations(sql: SqlHandle, monitorId: string): Promise<void> {
  await sql`delete from monitor_observations where monitor_id = ${monitorId}`;
}

/** A monitor's observation of one trace, as stored. */
export interface ObservationRow {
  trace_id: string;
  phase: 'learning' | 'active';
  calls: number;
  matches: number;
}

/** The stored observations of some traces by a monitor. */
export async function observationsOf(sql: SqlHandle, monitorId: string, traceIds: string[]): Promise<ObservationRow[]> {
  return sql<ObservationRow[]>`
    select trace_id, phase, calls, matches from monitor_observations where monitor_id = ${monitorId} and trace_id = any(${traceIds}::text[])`;
}

/**
 * Records what a monitor saw in some traces, in one statement. Re-processing a trace (a late span)
 * replaces its counts but keeps the phase and time of the first observation, so a trace is counted
 * once. New observations are stamped in the order given, each later than the one before and than
 * every observation already stored (ActiveWindow relies on a new trace being the newest): from a
 * base read once, the later of this clock reading and a microsecond past the monitor's latest
 * stamp. The clock alone is not enough: an earlier writer stamped up to a group's length in
 * microseconds ahead of its own clock, and a clock can step back. The caller holds the monitor's
 * row lock, so every earlier writer of this monitor has committed and the latest stamp is final.
 */
export async function upsertObservations(sql: SqlHandle, monitorId: string, rows: ObservationRow[]): Promise<void> {
  if (rows.length === 0) return;
  // The latest stamp per phase: two reads of the (monitor, phase, observed_at) index, not a scan of the monitor's rows.
  await sql`
    with base as materialized (
      select greatest(clock_timestamp(),
        (select max(observed_at) from monitor_observations where monitor_id = ${monitorId}::uuid and phase = 'learning') + interval '1 microsecond',
        (select max(observed_at) from monitor_observations where monitor_id = ${monitorId}::uuid and phase = 'active') + interval '1 microsecond') as at
    )
    insert into monitor_observations (monitor_id, trace_id, phase, calls, matches, matched, observed_at)
    select ${monitorId}::uuid, o.trace_id, o.phase, o.calls, o.matches, o.matches > 0, base.at + (o.n - 1) * interval '1 microsecond'
    from unnest(${rows.map((r) => r.trace_id)}::text[], ${rows.map((r) => r.phase)}::text[], ${rows.map((r) => r.calls)}::int[], ${rows.map((r) => r.matches)}::int[])
      with ordinality as o(trace_id, phase, calls, matches, n)
      cross join base
    order by o.n
    on conflict (monitor_id, trace_id) do update set calls = excluded.calls, matches = excluded.matches, matched = excluded.matched`;
}

export async function learningTotals(sql: SqlHandle, monitorId: string): Promise<WindowCounts> {
  const [row] = await sql<{ traces: number; calls: number; matches: number }[]>`
    select count(*)::int as traces, coalesce(sum(calls), 0)::int as calls, coalesce(sum(matches), 0)::int as matches
    from monitor_observations where monitor_id = ${monitorId} and phase = 'learning'`;
  return row;
}

/** The latest `size` traces observed while active, newest first: the window a trigger looks at. */
export async function activeWindowRows(sql: SqlHandle, monitorId: string, size: number): Promise<ObservationRow[]> {
  return sql<ObservationRow[]>`
    select trace_id, phase, calls, matches from monitor_observations
    where monitor_id = ${monitorId} and phase = 'active'
    order by observed_at desc, trace_id desc limit ${size}`;
}
