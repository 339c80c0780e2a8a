import type { Logger } from 'pino';
import type postgres from 'postgres';
import type { ClickHouseStore } from '../../platform/clickhouse/clickhouse.js';
import type { Leader } from '../../platform/postgres/leader.js';
import { param, raw, sql as chSql, type Fragment } from '../../platform/clickhouse/sql/fragment.js';
import { traceKeysGuard } from '../../platform/clickhouse/sql/tenant-guard.js';
import { traceKeyAfter, type TraceKeyCursor } from '../../platform/clickhouse/sql/trace-key-after.js';
import type { Sql, SqlHandle } from '../../platform/postgres/postgres.js';
import { traceKeyOf } from '../write/encoded-rows.js';
import { REGISTRY_COMPLETE_STATE } from './stored-traces.js';
import { canonicalKey } from '../../spans/trace-key-params.js';
import { recordWindow, WINDOW_LEAD_MS } from './stored-traces-window.js';
import type { TraceKey } from '../../spans/stored-spans.js';

/**
 * The stored-trace registry's two leader jobs (src/platform/postgres/leader.ts; one process runs them):
 *
 * - Backfill: an installation that stored spans before the registry existed copies every trace of
 *   `spans` into it once, then records `complete` in shared_state. Until then writers treat every
 *   trace as known and read ClickHouse as before, so nothing depends on the backfill's timing. Spans
 *   written meanwhile by this version already have their row (it is upserted before the insert), so
 *   one pass over `spans` covers everything — provided no process of an older version still writes.
 * - Retention: a row may go once no writer touched it for longer than the spans live (their TTL plus
 *   how far in the future a span's time may be), and only when ClickHouse holds nothing of the trace:
 *   no span (TTL removes rows at a merge, not at the hour) and no trace.processed row: under the
 *   lifetime rule a row stays while anything of its trace is stored. The delete re-checks last_seen_at under the row lock, so a
 *   writer that registered the trace meanwhile keeps it. Under a window (TRACE_REGISTRY_WINDOW_HOURS)
 *   rows untouched for the window whose latest span starts before it go too, spans stored or not.
 */

type KeyRow = TraceKeyCursor;
/** A backfilled trace: its key and its latest span start as ClickHouse text (UTC). */
type BackfillRow = KeyRow & { latest: string };

const toKey = (r: KeyRow): TraceKey => ({ tenantId: r.tenant_id, projectId: r.project_id, traceId: r.trace_id });

/**
 * Inserts backfilled traces with their latest span start. A row a writer created meanwhile knows only
 * the spans it registered: its latest_span_at is raised to the stored spans' (kept NULL when unknown),
 * or the window's retention could delete it while a span later than the writer's is stored, and its
 * stored_since_ms (when its first spans were written; a writer sets it only once the registry is
 * complete, but a copy run again over data put in place afterwards may find older spans) is unknown.
 */
async function insertKeys(sql: SqlHandle, spelled: BackfillRow[]): Promise<void> {
  // ClickHouse compares the key as text and PostgreSQL as uuid: two spellings of one key (letter case)
  // are one registry row, and one insert may not update a row twice (ON CONFLICT refuses). The later
  // span start of the two is kept.
  const byKey = new Map<string, BackfillRow>();
  for (const r of spelled) {
    const key = canonicalKey(toKey(r));
    const seen = byKey.get(key);
    if (!seen || seen.latest < r.latest) byKey.set(key, r);
  }
  const rows = [...byKey.values()];
  if (rows.length === 0) return;
  await sql`
    insert into stored_traces as s (tenant_id, project_id, trace_id, latest_span_at)
    select t, p, tr, (l || 'Z')::timestamptz
    from unnest(${rows.map((r) => r.tenant_id)}::uuid[], ${rows.map((r) => r.project_id)}::uuid[], ${rows.map((r) => r.trace_id)}::uuid[], ${rows.map((r) => r.latest)}::text[]) as k(t, p, tr, l)
    on conflict (tenant_id, project_id, trace_id) do update set
      latest_span_at = case when s.latest_span_at is null then null else greatest(s.latest_span_at, excluded.latest_span_at) end,
      stored_since_ms = null`;
}

/** shared_state row holding the backfill's position between runs: the last key copied and the traces so far. */
export const BACKFILL_CURSOR_STATE = 'stored_traces_backfill_cursor';

type BackfillCursor = KeyRow & { traces: number };

/**
 * One page of the backfill: the first `pageSize` traces of `spans` after `cursor`, in key order
 * (traceKeyAfter prunes the primary key). The grouping follows the sorting key in order, so a page
 * stops reading once it has its traces instead of grouping the rest of the table. Keys that are not
 * UUIDs are skipped: the registry's key columns are uuid (sql/022), and no writer registers such a
 * key (tenants, projects and trace ids are all UUIDs), so none is ever looked up.
 */
export function backfillPage(ch: ClickHouseStore, cursor: KeyRow, pageSize: number): Fragment {
  return chSql`SELECT tenant_id, project_id, trace_id, toString(max(timestamp)) AS latest FROM ${raw(ch.table('spans'))}
    WHERE ${traceKeyAfter(cursor)}
      AND isNotNull(toUUIDOrNull(tenant_id)) AND isNotNull(toUUIDOrNull(project_id)) AND isNotNull(toUUIDOrNull(trace_id))
    GROUP BY tenant_id, project_id, trace_id
    ORDER BY tenant_id, project_id, trace_id
    LIMIT ${param('UInt32', pageSize)}
    SETTINGS optimize_aggregation_in_order = 1`;
}

/**
 * Copies every trace of `spans` into the registry (pages in key order), then marks it complete.
 * Each page's rows and the cursor after it commit together in shared_state, so a run that fails
 * (a restart, a timeout, the leader moving) is resumed by the next run where it stopped rather than
 * from the start. Returns the traces read by this run.
 */
export async function backfillStoredTraces(sql: Sql, ch: ClickHouseStore, pageSize = 10_000): Promise<number> {
  const [done] = await sql<{ n: number }[]>`select count(*)::int as n from shared_state where name = ${REGISTRY_COMPLETE_STATE}`;
  if (done.n > 0) return 0;
  const [saved] = await sql<{ value: BackfillCursor }[]>`select value from shared_state where name = ${BACKFILL_CURSOR_STATE}`;
  let cursor: BackfillCursor = saved?.value ?? { tenant_id: '', project_id: '', trace_id: '', traces: 0 };
  let read = 0;
  for (;;) {
    const rows = await ch.read<BackfillRow>(backfillPage(ch, cursor, pageSize), { lane: 'system' });
    read += rows.length;
    const last = rows[rows.length - 1];
    if (last) cursor = { tenant_id: last.tenant_id, project_id: last.project_id, trace_id: last.trace_id, traces: cursor.traces + rows.length };
    await sql.begin(async (tx) => {
      await insertKeys(tx, rows);
      if (rows.length < pageSize) {
        await tx`delete from shared_state where name = ${BACKFILL_CURSOR_STATE}`;
        await tx`
          insert into shared_state (name, value) values (${REGISTRY_COMPLETE_STATE}, ${tx.json({ traces: cursor.traces })})
          on conflict (name) do nothing`;
      } else {
        await tx`
          insert into shared_state (name, value, updated_at) values (${BACKFILL_CURSOR_STATE}, ${tx.json(cursor)}, now())
          on conflict (name) do update set value = excluded.value, updated_at = now()`;
      }
    });
    if (rows.length < pageSize) return read;
  }
}

/** Of `keys`, those ClickHouse still holds a span or a trace.processed row of. */
async function stillStored(ch: ClickHouseStore, keys: TraceKey[]): Promise<Set<string>> {
  const guard = traceKeysGuard(keys);
  const rows = await ch.read<KeyRow>(
    chSql`SELECT DISTINCT tenant_id, project_id, trace_id FROM ${raw(ch.table('spans'))} WHERE ${guard}
          UNION DISTINCT
          SELECT DISTINCT tenant_id, project_id, trace_id FROM ${raw(ch.table('event_trace_processed'))} WHERE ${guard}`,
    { lane: 'system' },
  );
  return new Set(rows.map(traceKeyOf));
}

/**
 * One retention pass: pages of `pageSize` rows past `due` in last_seen_at order; of each page, those
 * `keep` does not name are deleted, locked first in key order (as writers' upserts lock them: a
 * DELETE … USING locks in its join's order and could deadlock with one) with `due` checked again on
 * the locked row, so a row a flush touched meanwhile stays. Returns how many went.
 */
async function expirePass(
  sql: Sql,
  due: postgres.PendingQuery<postgres.Row[]>,
  keep: (candidates: TraceKey[]) => Promise<Set<string>>,
  pageSize: number,
): Promise<number> {
  let deleted = 0;
  // last_seen_at travels as text (and goes back as a text parameter cast in SQL): a Date would drop
  // its microseconds, and the page would repeat forever.
  let cursor: { at: string; key: KeyRow } | null = null;
  for (;;) {
    const after = cursor
      ? sql`and (s.last_seen_at, s.tenant_id, s.project_id, s.trace_id) > (${cursor.at}::text::timestamptz, ${cursor.key.tenant_id}::uuid, ${cursor.key.project_id}::uuid, ${cursor.key.trace_id}::uuid)`
      : sql``;
    const candidates: (KeyRow & { last_seen_at: string })[] = await sql<(KeyRow & { last_seen_at: string })[]>`
      select s.tenant_id, s.project_id, s.trace_id, s.last_seen_at::text as last_seen_at from stored_traces s
      where ${due} ${after}
      order by s.last_seen_at, s.tenant_id, s.project_id, s.trace_id
      limit ${pageSize}`;
    if (candidates.length === 0) break;
    const last = candidates[candidates.length - 1];
    cursor = { at: last.last_seen_at, key: last };
    const kept = await keep(candidates.map(toKey));
    const gone = candidates.filter((c) => !kept.has(traceKeyOf(c)));
    if (gone.length > 0) {
      const result = await sql`
        with locked as (
          select s.tenant_id, s.project_id, s.trace_id from stored_traces s
          join unnest(${gone.map((r) => r.tenant_id)}::uuid[], ${gone.map((r) => r.project_id)}::uuid[], ${gone.map((r) => r.trace_id)}::uuid[]) as k(t, p, tr)
            on s.tenant_id = k.t and s.project_id = k.p and s.trace_id = k.tr
          where ${due}
          order by s.tenant_id, s.project_id, s.trace_id
          for update of s
        )
        delete from stored_traces s using locked l
        where s.tenant_id = l.tenant_id and s.project_id = l.project_id and s.trace_id = l.trace_id
          and ${due}`;
      deleted += result.count;
    }
    if (candidates.length < pageSize) break;
  }
  return deleted;
}

/**
 * Deletes registry rows untouched for `retentionMs` whose trace ClickHouse no longer holds, in
 * pages of `pageSize` (last_seen_at order). Returns how many went. Pages of 10,000: the hourly run
 * must keep up with a day's new traces (100 traces/s is 360,000 rows an hour), and each page costs
 * three round trips whatever its size; 10,000 keys are a 360 KB parameter per statement.
 */
export async function expireStoredTraces(sql: Sql, ch: ClickHouseStore, retentionMs: number, pageSize = 10_000): Promise<number> {
  return expirePass(
    sql,
    sql`s.last_seen_at < now() - ${retentionMs}::bigint * interval '1 millisecond'`,
    (keys) => stillStored(ch, keys),
    pageSize,
  );
}

/**
 * The window's retention (TRACE_REGISTRY_WINDOW_HOURS): deletes rows no flush touched for `windowMs`
 * whose latest registered span starts before now − `windowMs`, whatever ClickHouse still holds. A
 * span starting later than that cannot be stored without its row (stored-traces.ts registerTraces),
 * which is what lets a created row be trusted for spans inside the window. Rows whose latest span is
 * unknown (NULL: written before migration 022) are left to expireStoredTraces. A span starting in the
 * future keeps its row until that start is `windowMs` old.
 */
export async function expireStoredTracesWindow(sql: Sql, windowMs: number, pageSize = 10_000): Promise<number> {
  const cutoff = sql`now() - ${windowMs}::bigint * interval '1 millisecond'`;
  return expirePass(
    sql,
    sql`s.last_seen_at < ${cutoff} and s.latest_span_at < ${cutoff}`,
    async () => new Set<string>(),
    pageSize,
  );
}

/** How long spans live (the `spans` table's TTL, clickhouse/001_spans.sql). */
export const SPANS_TTL_MS = 90 * 24 * 3_600_000;
const BACKFILL_EVERY_MS = 60_000;
const EXPIRE_EVERY_MS = 3_600_000;

/**
 * The window's retention as the leader runs it: records the window first (stored-traces-window.ts),
 * and deletes with it only once it was recorded WINDOW_LEAD_MS ago, when every writer has read it.
 */
export async function expireUnderWindow(sql: Sql, windowMs: number, lifetimeMs: number): Promise<number> {
  const recordedFor = await recordWindow(sql, windowMs, lifetimeMs);
  return recordedFor >= WINDOW_LEAD_MS ? expireStoredTracesWindow(sql, windowMs) : 0;
}

/**
 * The registry's window in effect (stored-traces.ts registerTraces): TRACE_REGISTRY_WINDOW_HOURS when
 * it is shorter than the spans' lifetime (their TTL plus the future skew a span's time may have),
 * else null — the lifetime rule, exact for every trace.
 */
export function registryWindowMs(config: { traceRegistryWindowMs: number | null; ingestMaxFutureSkewMs: number }): number | null {
  const window = config.traceRegistryWindowMs;
  return window !== null && window < SPANS_TTL_MS + config.ingestMaxFutureSkewMs ? window : null;
}

/**
 * Registers both jobs on the leader. Retention waits for the spans' TTL plus the future skew a
 * span's time may have (a span stored at last_seen_at lives until at most last_seen_at + skew + TTL);
 * under a window it also deletes rows past the window (expireStoredTracesWindow).
 */
export function scheduleStoredTraceJobs(
  leader: Leader,
  deps: { sql: Sql; ch: ClickHouseStore; logger: Logger; maxFutureSkewMs: number; windowMs: number | null },
): void {
  const { sql, ch, logger } = deps;
  leader.every('stored-traces-backfill', BACKFILL_EVERY_MS, async () => {
    const traces = await backfillStoredTraces(sql, ch);
    if (traces > 0) logger.info({ traces }, 'stored-trace registry backfilled from ClickHouse');
  });
  leader.every('stored-traces-retention', EXPIRE_EVERY_MS, async () => {
    const lifetimeMs = SPANS_TTL_MS + deps.maxFutureSkewMs;
    const windowed = deps.windowMs === null ? 0 : await expireUnderWindow(sql, deps.windowMs, lifetimeMs);
    const deleted = windowed + (await expireStoredTraces(sql, ch, lifetimeMs));
    if (deleted > 0) logger.info({ deleted, windowed }, 'stored-trace registry rows past retention removed');
  });
}
