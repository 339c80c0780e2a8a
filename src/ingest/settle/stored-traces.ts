import type { SqlHandle } from '../../platform/postgres/postgres.js';
import { traceKeyString, type TraceKey } from '../../spans/stored-spans.js';
import { traceKeyParams } from '../../spans/trace-key-params.js';

/**
 * The stored-trace registry in PostgreSQL (sql/021_stored_traces.sql, 022_stored_traces_window.sql,
 * docs/settling.md "Which traces have spans"): a row for every trace that may have spans in
 * ClickHouse (under a window: every trace with a stored span starting inside the window).
 *
 * - The ingest writer registers each flush's traces with one upsert BEFORE its ClickHouse inserts.
 *   A trace the upsert creates had no row, hence no stored span (under a window: none starting
 *   inside it, so the flush's spans must all start inside it): its duplicate check, span count
 *   and root lookup need no ClickHouse read (nearly every trace of a flush is new, and that read
 *   grew with the table: one granule per trace per part). Only the other traces are checked there.
 * - The answer is trusted only once the registry covers spans stored before it existed
 *   (`complete`: the backfill job, stored-traces-jobs.ts, recorded that it copied every trace of
 *   the `spans` table); until then every trace is treated as known.
 */

/** shared_state row written when the backfill copied every trace of `spans` into the registry. */
export const REGISTRY_COMPLETE_STATE = 'stored_traces_backfill';

/**
 * A row's last_seen_at is refreshed by a flush only when older than this. Every flush of a known
 * trace updates its row anyway (`registrations + 1`), but an update that leaves last_seen_at's value
 * alone can stay on the row's heap page without new index entries (a HOT update), which a changing
 * indexed column would rule out. A day, or a quarter of the window when that is shorter: the
 * retention job's cutoff (the spans' lifetime, or the window) is longer, so a row a writer is using
 * is never a candidate (stored-traces-jobs.ts).
 */
export function refreshAfterMs(windowMs: number | null): number {
  const day = 24 * 60 * 60 * 1000;
  return windowMs === null ? day : Math.min(day, Math.floor(windowMs / 4));
}

/** A trace of a flush: its key and, when known, the earliest and latest start (epoch ms) of its spans in the flush. */
export type RegisteredTrace = TraceKey & { spanStartMs?: [number, number] };

/**
 * One row per trace (traceKeyParams: spellings folded, key order — concurrent flushes in several
 * processes lock shared rows in one order: no deadlock), the span starts of its notes merged
 * (unknown in any: unknown).
 */
function registeredRows(traces: readonly RegisteredTrace[]) {
  return traceKeyParams(
    traces,
    (t): TraceKey & { earliest: number; latest: number | null } => {
      const [earliest, latest] = t.spanStartMs ?? [-Infinity, null];
      return { tenantId: t.tenantId, projectId: t.projectId, traceId: t.traceId, earliest, latest };
    },
    (row, t) => {
      const [earliest, latest] = t.spanStartMs ?? [-Infinity, null];
      row.earliest = Math.min(row.earliest, earliest);
      row.latest = row.latest === null || latest === null ? null : Math.max(row.latest, latest);
    },
  );
}

export interface Registration {
  /**
   * traceKeyString of the traces this upsert created whose spans in the flush all start inside the
   * window (any, without one): no span of the flush was stored before, so none needs a ClickHouse check.
   */
  created: Set<string>;
  /** Per trace (traceKeyString), its registrations count after this upsert (every trace of the flush). */
  registrations: Map<string, number>;
  /** The registry covers every stored trace; when false, `created` must not be trusted (treat all as known). */
  complete: boolean;
  /**
   * Per trace (traceKeyString) whose row knows it (sql/028): epoch ms, on the clock of the writer that
   * created the row, before which no span of the trace was written. Absent: unknown (older spans may be stored).
   */
  storedSince: Map<string, number>;
}

/**
 * Registers a flush's traces in one statement: inserts the new ones; updates every known one, counting
 * a registration, raising latest_span_at to the flush's latest span start, and refreshing last_seen_at
 * when it is older than refreshAfterMs. A row that comes back with `registrations = 1` was inserted by
 * this statement (an update makes it at least 2; `xmax = 0` would say the same through undocumented
 * behaviour). The rows are locked in key order until the statement commits, which orders them
 * against the retention job's delete (which locks in key order too: no deadlock).
 *
 * `windowMs` (TRACE_REGISTRY_WINDOW_HOURS; null: the spans' lifetime) decides which created rows are
 * trusted. Under a window the retention job deletes a row once it was untouched for the window and
 * its latest_span_at is older than the window, spans still stored or not. A span starting at or after
 * (clock − window) cannot be stored without a row, then: its flush would have set latest_span_at at
 * least to its start, and that row could not have gone. The clock is read per returned row with
 * clock_timestamp(), after the row's insert, hence after any delete it saw committed. A created trace
 * with an earlier span is checked in ClickHouse like a known one.
 *
 * `sinceMs` (epoch ms on the caller's clock, read before this statement) is kept on the rows it
 * creates as `stored_since_ms` (sql/028) when the registry is complete and no window applies: the
 * row did not exist, so nothing of its trace was stored, and every later flush of the trace
 * registers on this row before writing. Under a window a created row's trace may have older spans
 * (its earlier row deleted by the window), and before the registry is complete it may have spans
 * written before the registry: both stay NULL (unknown). A row keeps the value for its lifetime; the
 * answer gives every row's value, so a known trace's duplicate check can skip older parts.
 */
export async function registerTraces(sql: SqlHandle, traces: readonly RegisteredTrace[], windowMs: number | null = null, sinceMs?: number): Promise<Registration> {
  const keys = registeredRows(traces);
  if (keys.rows.length === 0) return { created: new Set(), registrations: new Map(), complete: true, storedSince: new Map() };
  const since = windowMs === null && sinceMs !== undefined ? Math.floor(sinceMs) : null;
  // Span starts travel as milliseconds after the flush's earliest known one (a few digits instead of
  // thirteen), unknown ones as NULL. An unknown earliest counts as -1 (a 1970 start: outside any
  // window); an unknown latest is stored as NULL.
  let base = Infinity;
  for (const r of keys.rows) if (r.earliest < base) base = r.earliest;
  if (!Number.isFinite(base)) base = 0;
  const earliest = keys.rows.map((r) => (Number.isFinite(r.earliest) ? r.earliest - base : null));
  const latest = keys.rows.map((r) => (r.latest === null ? null : r.latest - base));
  // Answers each key by its position (`i`), not by echoing its three ids. `trusted`: created here
  // (registrations = 1) and, under a window, every span of the flush inside it on the clock read now.
  const result = await sql<{ i: number; registrations: string; trusted: boolean; complete: boolean; stored_since_ms: string | null }[]>`
    with c as (select exists (select 1 from shared_state where name = ${REGISTRY_COMPLETE_STATE}) as complete),
    k as (
      select (${keys.tenants}::uuid[])[k.g] as t, (${keys.projects}::uuid[])[k.g] as p, k.tr,
             coalesce(${base}::float8 + k.e, -1) as e, ${base}::float8 + k.l as l, k.i
      from unnest(${keys.pairs}::int[], ${keys.traces}::uuid[], ${earliest}::float8[], ${latest}::float8[]) with ordinality as k(g, tr, e, l, i)
    ),
    up as (
      insert into stored_traces as s (tenant_id, project_id, trace_id, latest_span_at, stored_since_ms)
      select k.t, k.p, k.tr, to_timestamp(k.l / 1000.0), case when c.complete then ${since}::bigint end
      from k cross join c order by k.i
      on conflict (tenant_id, project_id, trace_id) do update set
        registrations = s.registrations + 1,
        latest_span_at = case when s.latest_span_at is null or excluded.latest_span_at is null then null
                              else greatest(s.latest_span_at, excluded.latest_span_at) end,
        last_seen_at = case when s.last_seen_at < now() - ${refreshAfterMs(windowMs)}::bigint * interval '1 millisecond' then now() else s.last_seen_at end
      -- An update leaves stored_since_ms as it was: the value comes back for a known trace too.
      returning s.tenant_id, s.project_id, s.trace_id, s.registrations, s.stored_since_ms
    )
    select k.i::int4 as i, up.registrations::text as registrations,
           up.registrations = 1 and (${windowMs}::float8 is null
             or k.e >= (extract(epoch from clock_timestamp()) * 1000)::float8 - ${windowMs}::float8) as trusted,
           c.complete, up.stored_since_ms::text as stored_since_ms
    from up join k on up.tenant_id = k.t and up.project_id = k.p and up.trace_id = k.tr cross join c`;
  const trusted: boolean[] = [];
  const counts: number[] = [];
  const sinces: (number | null)[] = [];
  for (const r of result) {
    trusted[r.i - 1] = r.trusted;
    counts[r.i - 1] = Number(r.registrations);
    sinces[r.i - 1] = r.stored_since_ms === null ? null : Number(r.stored_since_ms);
  }
  // Answered for every spelling the caller used.
  const created = new Set<string>();
  const registrations = new Map<string, number>();
  const storedSince = new Map<string, number>();
  for (const [i, t] of traces.entries()) {
    const row = keys.rowOf[i];
    if (counts[row] === undefined) continue;
    const spelling = traceKeyString(t);
    if (trusted[row]) created.add(spelling);
    registrations.set(spelling, counts[row]);
    if (sinces[row] != null) storedSince.set(spelling, sinces[row]);
  }
  return { created, registrations, complete: result[0]?.complete ?? false, storedSince };
}
