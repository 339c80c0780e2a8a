import type { Sql, SqlHandle } from '../stores/postgres.js';
import type { Origin } from '../origin.js';
import { UUID_PATTERN } from '../uuid.js';
import { traceKeyOf } from './encoded-rows.js';
import { traceKeyOrder, traceKeyString, type TraceKey } from './stored-spans.js';

/**
 * The settle queue in PostgreSQL (sql/014_settle_queue.sql): the one record of which traces got
 * spans and are not settled yet, shared by every Lookout process (docs/settling.md).
 *
 * - The ingest writer records the traces of each flush with one multi-row upsert, after ClickHouse
 *   acknowledged the spans and before the request is answered.
 * - A settler claims due rows with FOR UPDATE SKIP LOCKED in one short statement that sets a
 *   lease (claim_token, lease_until); the row lock is not held while the trace is summarized, so
 *   writers upsert a claimed row freely and only bump its `seq`. A crashed settler's lease runs out
 *   on PostgreSQL's clock and the row is due again for anyone.
 * - The same statement takes the settle version from `settle_clock`; its row lock orders claims,
 *   so a later claim of a trace always writes a larger version than an earlier one.
 * - A claim finishes (the row is deleted) only if `seq` is still what was claimed; otherwise a span
 *   came meanwhile and the row is released to settle again.
 */

export interface QueueRecord extends TraceKey {
  hasRoot: boolean;
  origin: Origin;
}

export interface RecordedRow extends TraceKey {
  /** Identity of the row's lifetime (a new row after the trace was settled and reopened). */
  rowId: string;
  seq: string;
  /**
   * The trace's registrations count in the stored-trace registry when the flush recorded it
   * (stored-traces.ts); null without a registry row. Only the writer's record returns it.
   */
  registrations?: number | null;
}

export interface Claim extends RecordedRow {
  hasRoot: boolean;
  origin: Origin;
}

export interface SettleTiming {
  settleMs: number;
  maxWaitMs: number;
}

/** One row per trace (a multi-row upsert may not touch a row twice): roots OR-ed, the last origin kept. */
function mergeRecords(records: QueueRecord[]): QueueRecord[] {
  const byKey = new Map<string, QueueRecord>();
  for (const r of records) {
    const key = traceKeyString(r);
    const seen = byKey.get(key);
    byKey.set(key, seen ? { ...r, hasRoot: seen.hasRoot || r.hasRoot } : r);
  }
  // Key order: concurrent flushes in several processes lock shared rows in one order (no deadlock).
  return [...byKey.values()].sort(traceKeyOrder);
}

interface QueueRow {
  tenant_id: string;
  project_id: string;
  trace_id: string;
  row_id: bigint | string;
  seq: bigint | string;
  registrations?: bigint | string | null;
}

/**
 * Records the traces of one flush. A trace becomes due `settleMs` after its latest spans once its
 * root is known, and `maxWaitMs` after its first spans in any case.
 */
export async function recordTraces(sql: SqlHandle, records: QueueRecord[], timing: SettleTiming): Promise<RecordedRow[]> {
  const rows = mergeRecords(records);
  if (rows.length === 0) return [];
  const col = <T>(pick: (r: QueueRecord) => T) => rows.map(pick);
  const result = await sql<QueueRow[]>`
    insert into settle_queue as q (tenant_id, project_id, trace_id, has_root, settle_after, actor, surface, user_id, api_key_id)
    select v.t, v.p, v.tr, v.r,
           case when v.r then now() + least(${timing.settleMs}::bigint, ${timing.maxWaitMs}::bigint) * interval '1 millisecond'
                else now() + ${timing.maxWaitMs}::bigint * interval '1 millisecond' end,
           v.a, v.s, v.u, v.k
    from unnest(${col((r) => r.tenantId)}::text[], ${col((r) => r.projectId)}::text[], ${col((r) => r.traceId)}::text[],
                ${col((r) => (r.hasRoot ? 'true' : 'false'))}::text[]::boolean[], ${col((r) => r.origin.actor)}::text[], ${col((r) => r.origin.surface)}::text[],
                ${col((r) => r.origin.user_id)}::text[], ${col((r) => r.origin.api_key_id)}::text[]) as v(t, p, tr, r, a, s, u, k)
    on conflict (tenant_id, project_id, trace_id) do update set
      seq = q.seq + 1,
      last_span_at = now(),
      has_root = q.has_root or excluded.has_root,
      settle_after = case when q.has_root or excluded.has_root
                          then least(now() + ${timing.settleMs}::bigint * interval '1 millisecond', q.first_seen + ${timing.maxWaitMs}::bigint * interval '1 millisecond')
                          else q.first_seen + ${timing.maxWaitMs}::bigint * interval '1 millisecond' end,
      actor = excluded.actor, surface = excluded.surface, user_id = excluded.user_id, api_key_id = excluded.api_key_id
    returning tenant_id, project_id, trace_id, row_id, seq,
      (select s.registrations from stored_traces s
       -- The registry's keys are uuid (sql/022); a key that is not one has no row there (CASE, not
       -- AND: only CASE keeps PostgreSQL from casting it).
       where s.tenant_id = case when q.tenant_id ~* ${UUID_PATTERN} then q.tenant_id::uuid end
         and s.project_id = case when q.project_id ~* ${UUID_PATTERN} then q.project_id::uuid end
         and s.trace_id = case when q.trace_id ~* ${UUID_PATTERN} then q.trace_id::uuid end) as registrations`;
  return result.map((r) => ({
    tenantId: r.tenant_id,
    projectId: r.project_id,
    traceId: r.trace_id,
    rowId: String(r.row_id),
    seq: String(r.seq),
    registrations: r.registrations === null || r.registrations === undefined ? null : Number(r.registrations),
  }));
}

interface ClaimRow extends QueueRow {
  has_root: boolean;
  actor: string;
  surface: string;
  user_id: string;
  api_key_id: string;
  version_ms: bigint | string;
}

export interface ClaimRound {
  claims: Claim[];
  /** The settle version: processed_at of every row this round writes, in epoch milliseconds. */
  versionMs: number;
}

export interface ClaimOptions {
  token: string;
  limit: number;
  leaseMs: number;
  /** Claim these traces whether due or not (graceful shutdown); still never a leased row. */
  keys?: TraceKey[];
}

/**
 * Claims up to `limit` due, unleased traces and takes the settle version, in one statement (one
 * round trip, its own transaction). The version is bumped only when something was claimed; the
 * clock row's lock, held to the statement's commit, orders claims, so a later claim of a trace
 * (possible only after this one finished, was released or expired) reads a larger version.
 */
export async function claimDue(sql: Sql, options: ClaimOptions): Promise<ClaimRound> {
  const { token, limit, leaseMs, keys } = options;
  if (keys && keys.length === 0) return { claims: [], versionMs: 0 };
  const sorted = keys ? [...keys].sort(traceKeyOrder) : [];
  const due = keys
    ? sql`
        select q.tenant_id, q.project_id, q.trace_id from settle_queue q
        join unnest(${sorted.map((k) => k.tenantId)}::text[], ${sorted.map((k) => k.projectId)}::text[], ${sorted.map((k) => k.traceId)}::text[]) as k(t, p, tr)
          on q.tenant_id = k.t and q.project_id = k.p and q.trace_id = k.tr
        where q.lease_until is null or q.lease_until < now()
        limit ${limit}
        for update of q skip locked`
    : sql`
        select tenant_id, project_id, trace_id from settle_queue
        where settle_after <= now() and (lease_until is null or lease_until < now())
        order by settle_after
        limit ${limit}
        for update skip locked`;
  const rows = await sql<ClaimRow[]>`
    with due as (${due}),
    claimed as (
      update settle_queue q set claim_token = ${token}, lease_until = now() + ${leaseMs}::bigint * interval '1 millisecond'
      from due where q.tenant_id = due.tenant_id and q.project_id = due.project_id and q.trace_id = due.trace_id
      returning q.tenant_id, q.project_id, q.trace_id, q.row_id, q.seq, q.has_root, q.actor, q.surface, q.user_id, q.api_key_id
    ),
    clock as (
      update settle_clock set last_ms = greatest(last_ms + 1, (extract(epoch from clock_timestamp()) * 1000)::bigint)
      where id = 1 and exists (select 1 from claimed)
      returning last_ms
    )
    select claimed.*, (select last_ms from clock) as version_ms from claimed`;
  if (rows.length === 0) return { claims: [], versionMs: 0 };
  return {
    versionMs: Number(rows[0].version_ms),
    claims: rows.map((r) => ({
      tenantId: r.tenant_id,
      projectId: r.project_id,
      traceId: r.trace_id,
      rowId: String(r.row_id),
      seq: String(r.seq),
      hasRoot: r.has_root,
      origin: { actor: r.actor, surface: r.surface, user_id: r.user_id, api_key_id: r.api_key_id },
    })),
  };
}

/** Keeps a round's leases alive while it works (a slow round must not be taken over). */
export async function extendLease(sql: SqlHandle, token: string, leaseMs: number): Promise<void> {
  await sql`update settle_queue set lease_until = now() + ${leaseMs}::bigint * interval '1 millisecond' where claim_token = ${token}`;
}

/**
 * Ends a round: deletes the claimed rows whose `seq` did not move (settled with every span), and
 * frees the others (a span came meanwhile: they settle again when due). Returns the finished keys.
 */
export async function finishClaims(sql: SqlHandle, token: string, claims: Claim[]): Promise<TraceKey[]> {
  let finished: TraceKey[] = [];
  if (claims.length > 0) {
    const sorted = [...claims].sort(traceKeyOrder);
    const rows = await sql<{ tenant_id: string; project_id: string; trace_id: string }[]>`
      delete from settle_queue q
      using unnest(${sorted.map((c) => c.tenantId)}::text[], ${sorted.map((c) => c.projectId)}::text[], ${sorted.map((c) => c.traceId)}::text[],
                   ${sorted.map((c) => c.seq)}::text[]::bigint[]) as f(t, p, tr, s)
      where q.tenant_id = f.t and q.project_id = f.p and q.trace_id = f.tr and q.seq = f.s and q.claim_token = ${token}
      returning q.tenant_id, q.project_id, q.trace_id`;
    finished = rows.map((r) => ({ tenantId: r.tenant_id, projectId: r.project_id, traceId: r.trace_id }));
  }
  await releaseClaims(sql, token);
  return finished;
}

/**
 * The traces a round still holds. A round that stalled past its lease may have lost some to another
 * settler, which writes a newer version and runs the hooks for it; this round then skips them.
 */
export async function heldClaims(sql: SqlHandle, token: string): Promise<Set<string>> {
  const rows = await sql<{ tenant_id: string; project_id: string; trace_id: string }[]>`
    select tenant_id, project_id, trace_id from settle_queue where claim_token = ${token}`;
  return new Set(rows.map(traceKeyOf));
}

/** Frees every row still claimed by a round (shutdown, a failed round). */
export async function releaseClaims(sql: SqlHandle, token: string): Promise<void> {
  await sql`update settle_queue set claim_token = null, lease_until = null where claim_token = ${token}`;
}

/** Rows waiting to settle (operators, tests). */
export async function queueDepth(sql: SqlHandle): Promise<number> {
  const [row] = await sql<{ n: bigint | string }[]>`select count(*) as n from settle_queue`;
  return Number(row.n);
}
