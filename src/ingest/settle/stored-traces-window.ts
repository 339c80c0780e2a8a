import type { Sql, SqlHandle } from '../../platform/postgres/postgres.js';

/**
 * Which window the stored-trace registry's writers must trust created rows by (docs/settling.md
 * "Which traces have spans"). A row the retention job deleted under a window W may belong to a trace
 * whose spans are still stored, so for as long as such spans can live, every writer must treat a
 * created row as "nothing stored" only for spans inside W — also a writer configured with a longer
 * window or none (TRACE_REGISTRY_WINDOW_HOURS raised or unset later, or set on the leader only).
 *
 * So the retention job records each window it deletes with in shared_state, with how long spans it
 * may have left without a row can live (`until`), and deletes with a window only once it was recorded
 * WINDOW_LEAD_MS earlier; writers re-read the record every WINDOW_REREAD_MS (far shorter) and use the
 * smallest window recorded and not expired, or their own if smaller.
 */

/** shared_state row: per window (ms, as a key) when it was first recorded and until when it binds writers. */
export const REGISTRY_WINDOWS_STATE = 'stored_traces_windows';
/** How long a window is recorded before the retention job first deletes with it. */
export const WINDOW_LEAD_MS = 10 * 60_000;
/** How often a writer re-reads the record; far below WINDOW_LEAD_MS, so every writer knows a window before a row goes under it. */
export const WINDOW_REREAD_MS = 60_000;

type WindowRecord = Record<string, { since: string; until: string }>;

/**
 * Records `windowMs` as in force until now + `lifetimeMs` (keeping when it was first recorded) and
 * drops expired entries. Returns how long ago this window was first recorded.
 */
export async function recordWindow(sql: Sql, windowMs: number, lifetimeMs: number): Promise<number> {
  return sql.begin<number>(async (tx) => {
    const [row] = await tx<{ value: WindowRecord }[]>`select value from shared_state where name = ${REGISTRY_WINDOWS_STATE} for update`;
    const now = Date.now();
    const record: WindowRecord = {};
    for (const [ms, entry] of Object.entries(row?.value ?? {})) if (Date.parse(entry.until) > now) record[ms] = entry;
    const since = record[String(windowMs)]?.since ?? new Date(now).toISOString();
    record[String(windowMs)] = { since, until: new Date(now + lifetimeMs).toISOString() };
    await tx`
      insert into shared_state (name, value, updated_at) values (${REGISTRY_WINDOWS_STATE}, ${tx.json(record)}, now())
      on conflict (name) do update set value = excluded.value, updated_at = now()`;
    return now - Date.parse(since);
  });
}

/** A writer's view of the window in force: its own (null: none) and the recorded ones, re-read every WINDOW_REREAD_MS. */
export class RegistryWindow {
  private recorded: WindowRecord = {};
  private readAt = -Infinity;

  constructor(private readonly configured: number | null, private readonly rereadMs = WINDOW_REREAD_MS) {}

  /** The window to register a flush with (registerTraces); null: none, every created row is trusted. */
  async current(sql: SqlHandle): Promise<number | null> {
    const now = Date.now();
    if (now - this.readAt >= this.rereadMs) {
      const [row] = await sql<{ value: WindowRecord }[]>`select value from shared_state where name = ${REGISTRY_WINDOWS_STATE}`;
      this.recorded = row?.value ?? {};
      this.readAt = now;
    }
    let window = this.configured ?? Infinity;
    for (const [ms, entry] of Object.entries(this.recorded)) if (Date.parse(entry.until) > now) window = Math.min(window, Number(ms));
    return Number.isFinite(window) ? window : null;
  }
}
