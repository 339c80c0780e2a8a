import type { Sql, SqlHandle } from '../../platform/postgres/postgres.js';
import type { Origin } from '../../spans/origin.js';
import { traceKeyString, type TraceKey } from '../../spans/stored-spans.js';
import { isUuidKey, traceKeyParams } from '../../spans/trace-key-params.js';

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
  /**
   * Epoch ms (this process's clock) at or before which no span of the trace was written, when the
   * stored-trace registry created the trace in this flush; absent or null: unknown (older spans may
   * exist). Kept by the queue row for its lifetime (sql/027); the settler's read-back is bounded by it.
   */
  storedSinceMs?: number | null;
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
  /** The queue row's stored_since_ms (QueueRecord.storedSinceMs): every stored span of the trace was written after it; null: unknown. */
  storedSinceMs: number | null;
}

export interface SettleTiming {
  settleMs: number;
  maxWaitMs: number;
}

/**
 * Records the traces of one flush. A trace becomes due `settleMs` after its latest spans once its
 * root is known, and `maxWaitMs` after its first spans in any case. One row per trace (a multi-row
 * upsert may not touch a row twice; traceKeyParams folds spellings and sorts, so flushes of several
 * processes lock shared rows in one order): roots OR-ed, the last origin kept, the earliest
 * storedSinceMs (unknown in any: unknown). A flush's few senders
 * are sent once each, like its tenants and projects (trace-key-params.ts). Answers every record, as
 * spelled.
 */
export async function recordTraces(sql: SqlHandle, records: QueueRecord[], timing: SettleTiming): Promise<RecordedRow[]> {
  const keys = traceKeyParams(
    records,
    (r): QueueRecord => ({ ...r }),
    (row, r) => {
      row.hasRoot ||= r.hasRoot;
      row.origin = r.origin;
      row.storedSinceMs = row.storedSinceMs == null || r.storedSinceMs == null ? null : Math.min(row.storedSinceMs, r.storedSinceMs);
    },
  );
  if (keys.rows.length === 0) return [];
  const originIndex = new Map<string, number>();
  const senders: Origin[] = [];
  const origins = keys.rows.map((r) => {
    const o = r.origin;
    const id = `${o.actor}\u0000${o.surface}\u0000${o.user_id}\u0000${o.api_key_id}`;
    let at = originIndex.get(id);
    if (at === undefined) {
      senders.push(o);
      at = senders.length;
      originIndex.set(id, at);
    }
    return at;
  });
  const result = await sql<{ i: number; row_id: string; seq: string; registrations: string | null }[]>`
    with v as (
      select (${keys.tenants}::uuid[])[v.g] as t, (${keys.projects}::uuid[])[v.g] as p, v.tr, v.r,
             (${senders.map((o) => o.actor)}::text[])[v.o] as a, (${senders.map((o) => o.surface)}::text[])[v.o] as s,
             (${senders.map((o) => o.user_id)}::text[])[v.o] as u, (${senders.map((o) => o.api_key_id)}::text[])[v.o] as k, v.ss, v.i
      from unnest(${keys.pairs}::int[], ${keys.traces}::uuid[], ${keys.rows.map((r) => (r.hasRoot ? 't' : 'f'))}::text[]::bool[], ${origins}::int[],
                  ${keys.rows.map((r) => (r.storedSinceMs == null ? null : String(Math.floor(r.storedSinceMs))))}::bigint[])
        with ordinality as v(g, tr, r, o, ss, i)
    ),
    up as (
      insert into settle_queue as q (tenant_id, project_id, trace_id, has_root, settle_after, actor, surface, user_id, api_key_id, stored_since_ms)
      select v.t, v.p, v.tr, v.r,
             case when v.r then now() + least(${timing.settleMs}::bigint, ${timing.maxWaitMs}::bigint) * interval '1 millisecond'
                  else now() + ${timing.maxWaitMs}::bigint * interval '1 millisecond' end,
             v.a, v.s, v.u, v.k, v.ss
      from v order by v.i
      on conflict (tenant_id, project_id, trace_id) do update set
        seq = q.seq + 1,
        last_span_at = now(),
        has_root = q.has_root or excluded.has_root,
        settle_after = case when q.has_root or excluded.has_root
                            then least(now() + ${timing.settleMs}::bigint * interval '1 millisecond', q.first_seen + ${timing.maxWaitMs}::bigint * interval '1 millisecond')
                            else q.first_seen + ${timing.maxWaitMs}::bigint * interval '1 millisecond' end,
        actor = excluded.actor, surface = excluded.surface, user_id = excluded.user_id, api_key_id = excluded.api_key_id
        -- stored_since_ms stays as the row's first flush set it: later spans were written after that.
      returning q.tenant_id, q.project_id, q.trace_id, q.row_id, q.seq
    )
    -- Each trace by its position, with its registry count as this statement sees it.
    select v.i::int4 as i, up.row_id::text as row_id, up.seq::text as seq, s.registrations::text as registrations
    from up join v on up.tenant_id = v.t and up.project_id = v.p and up.trace_id = v.tr
    left join stored_traces s on s.tenant_id = v.t and s.project_id = v.p and s.trace_id = v.tr`;
  const byRow: (typeof result)[number][] = [];
  for (const r of result) byRow[r.i - 1] = r;
  // One answer per record given, as spelled (a trace in several records: the same answer each time).
  return records.map((rec, i) => {
    const r = byRow[keys.rowOf[i]];
    return { tenantId: rec.tenantId, projectId: rec.projectId, traceId: rec.traceId, rowId: r.row_id, seq: r.seq, registrations: r.registrations === null ? null : Number(r.registrations) };
  });
}

interface ClaimRow {
  tenant_id: string;
  project_id: string;
  trace_id: string;
  row_id: string;
  seq: string;
  has_root: boolean;
  actor: string;
  surface: string;
  user_id: string;
  api_key_id: string;
  stored_since_ms: string | null;
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
  const { token, limit, leaseMs } = options;
  // A key that is not a UUID has no queue row (uuid keys, sql/023).
  const keys = options.keys && traceKeyParams(options.keys.filter(isUuidKey), (k): TraceKey => k);
  if (keys && keys.rows.length === 0) return { claims: [], versionMs: 0 };
  const due = keys
    ? sql`
        select q.tenant_id, q.project_id, q.trace_id from settle_queue q
        join (select (${keys.tenants}::uuid[])[k.g] as t, (${keys.projects}::uuid[])[k.g] as p, k.tr
              from unnest(${keys.pairs}::int[], ${keys.traces}::uuid[]) as k(g, tr)) k
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
      update settle_queue q set claim_token = ${token}, lease_until = now() + ${leaseMs}::bigint * interval '1 millisecond', claimed_seq = q.seq
      from due where q.tenant_id = due.tenant_id and q.project_id = due.project_id and q.trace_id = due.trace_id
      returning q.tenant_id, q.project_id, q.trace_id, q.row_id, q.seq, q.has_root, q.actor, q.surface, q.user_id, q.api_key_id, q.stored_since_ms
    ),
    clock as (
      update settle_clock set last_ms = greatest(last_ms + 1, (extract(epoch from clock_timestamp()) * 1000)::bigint)
      where id = 1 and exists (select 1 from claimed)
      returning last_ms
    )
    select claimed.tenant_id, claimed.project_id, claimed.trace_id, claimed.row_id::text as row_id, claimed.seq::text as seq,
           claimed.has_root, claimed.actor, claimed.surface, claimed.user_id, claimed.api_key_id, claimed.stored_since_ms::text as stored_since_ms,
           (select last_ms from clock)::text as version_ms
    from claimed`;
  if (rows.length === 0) return { claims: [], versionMs: 0 };
  return {
    versionMs: Number(rows[0].version_ms),
    claims: rows.map((r) => ({
      tenantId: r.tenant_id,
      projectId: r.project_id,
      traceId: r.trace_id,
      rowId: r.row_id,
      seq: r.seq,
      hasRoot: r.has_root,
      origin: { actor: r.actor, surface: r.surface, user_id: r.user_id, api_key_id: r.api_key_id },
      storedSinceMs: r.stored_since_ms === null ? null : Number(r.stored_since_ms),
    })),
  };
}

/**
 * Keeps a round's leases alive while it works (a slow round must not be taken over). The token's
 * rows are locked in key order first, as writers' upserts lock them (see finishClaims): a plain
 * `update … where claim_token` locks them in the order it finds them (heap order), and a flush
 * upserting two of them in key order meanwhile could deadlock with it.
 */
export async function extendLease(sql: SqlHandle, token: string, leaseMs: number): Promise<void> {
  await sql`
    with locked as (${lockedByToken(sql, token)})
    update settle_queue q set lease_until = now() + ${leaseMs}::bigint * interval '1 millisecond'
    where (select count(*) from locked) > 0 and q.claim_token = ${token}`;
}

/** The token's rows locked in key order, the order every writer locks queue rows in. */
function lockedByToken(sql: SqlHandle, token: string) {
  return sql`
      select 1 from settle_queue q
      where q.claim_token = ${token}
      order by q.tenant_id, q.project_id, q.trace_id
      for update of q`;
}

/**
 * Ends a round in one statement: of the rows its token still holds, deletes those whose `seq` did not
 * move since the claim (`claimed_seq`: settled with every span), and frees the others (a span came
 * meanwhile: they settle again when due). Only the token is sent; `claims` (the round's) turns the
 * finished rows back into keys, which it returns.
 *
 * The token's rows are locked first, in key order (`for update` after `order by`), as writers' upserts
 * lock them: deleting or freeing them in another order could deadlock with a flush. The delete runs
 * only once they are (the lock count is its one-time filter) and finds them by the claim token's
 * index. A row updated after this statement's snapshot is re-checked on its newest version: deleted
 * if its `seq` did not move (a lease renewal committing meanwhile), freed if it did (a span came).
 * The delete and the release see one snapshot, so the release leaves out what the delete returned.
 */
export async function finishClaims(sql: SqlHandle, token: string, claims: Claim[]): Promise<TraceKey[]> {
  const rows = await sql<{ row_id: string }[]>`
    with locked as (${lockedByToken(sql, token)}),
    finished as (
      delete from settle_queue q
      where (select count(*) from locked) > 0 and q.claim_token = ${token} and q.seq = q.claimed_seq
      returning q.row_id
    ),
    released as (
      update settle_queue q set claim_token = null, lease_until = null, claimed_seq = null
      where q.claim_token = ${token} and q.row_id not in (select row_id from finished)
    )
    select row_id::text as row_id from finished`;
  const finished = new Set(rows.map((r) => r.row_id));
  return claims.filter((c) => finished.has(c.rowId)).map((c) => ({ tenantId: c.tenantId, projectId: c.projectId, traceId: c.traceId }));
}

/**
 * Which of a round's claims it still holds (traceKeyString). A round that stalled past its lease may
 * have lost some to another settler, which writes a newer version and runs the hooks for it; this
 * round then skips them.
 */
export async function heldClaims(sql: SqlHandle, token: string, claims: Claim[]): Promise<Set<string>> {
  const rows = await sql<{ row_id: string }[]>`select row_id::text as row_id from settle_queue where claim_token = ${token}`;
  const held = new Set(rows.map((r) => r.row_id));
  return new Set(claims.filter((c) => held.has(c.rowId)).map(traceKeyString));
}

/** Frees every row still claimed by a round (shutdown, a failed round); locks them in key order as extendLease does. */
export async function releaseClaims(sql: SqlHandle, token: string): Promise<void> {
  await sql`
    with locked as (${lockedByToken(sql, token)})
    update settle_queue q set claim_token = null, lease_until = null, claimed_seq = null
    where (select count(*) from locked) > 0 and q.claim_token = ${token}`;
}

/** Rows waiting to settle (operators, tests). */
export async function queueDepth(sql: SqlHandle): Promise<number> {
  const [row] = await sql<{ n: bigint | string }[]>`select count(*) as n from settle_queue`;
  return Number(row.n);
}
