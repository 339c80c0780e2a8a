import type { Logger } from 'pino';
import type { ClickHouseStore } from '../../platform/clickhouse/clickhouse.js';
import { raw, sql as chSql } from '../../platform/clickhouse/sql/fragment.js';
import type { Leader } from '../../platform/postgres/leader.js';
import type { SqlHandle } from '../../platform/postgres/postgres.js';
import type { TraceKey } from '../../spans/stored-spans.js';

/**
 * Which projects have ever received OTLP log records (span_logs), shared by every process through
 * PostgreSQL (`shared_state`, one row per project): a settle round reads span_logs only for the
 * traces of such projects, so the many projects that send spans alone cost no log read per round
 * (docs/settling.md "Log records").
 *
 * Exact across processes by order alone:
 * - the logs path marks a project (`mark`, committed) before it inserts any record of it, and
 *   queues the records' traces only after the insert;
 * - a settle round asks (`withLogs`) in a statement of its own after its claim statement returned.
 * A record that a claimed trace's queue row already counted was queued after its insert, hence
 * after its mark committed, hence before the claim finished: the round's own statement, run after,
 * sees the mark. A record queued after the claim moves the row's `seq`, so the round's finish
 * releases the trace and it settles again — as for a late span.
 *
 * A mark is never removed, so what this process has seen marked is remembered (only unmarked
 * projects are asked again); a project that stops sending records only keeps paying the read.
 *
 * Records stored before the marks existed are covered by a one-time backfill on the leader
 * (`backfillLoggedProjects`): until it has recorded that it marked every project span_logs holds,
 * rounds read span_logs for every trace, as they did before.
 */

/** shared_state row written once every project span_logs held had been marked. */
export const LOGGED_PROJECTS_COMPLETE = 'span_logs_projects_backfill';

/** The shared_state row naming a project that received log records. */
export function loggedProjectState(tenantId: string, projectId: string): string {
  return `span_logs:${tenantId.toLowerCase()}:${projectId.toLowerCase()}`;
}

const projectOf = (k: Pick<TraceKey, 'tenantId' | 'projectId'>) => loggedProjectState(k.tenantId, k.projectId);

export class LoggedProjects {
  /** shared_state names of projects known marked (marks are never removed). */
  private readonly marked = new Set<string>();
  /** The backfill was seen complete (it never becomes incomplete again). */
  private complete = false;

  constructor(private readonly sql: SqlHandle) {}

  /** Marks the projects of records about to be stored; resolves once the marks are committed. */
  async mark(keys: readonly Pick<TraceKey, 'tenantId' | 'projectId'>[]): Promise<void> {
    const names = [...new Set(keys.map(projectOf))].filter((n) => !this.marked.has(n));
    if (names.length === 0) return;
    await this.sql`
      insert into shared_state (name, value)
      select n, '{}'::jsonb from unnest(${names}::text[]) as n
      on conflict (name) do nothing`;
    for (const n of names) this.marked.add(n);
  }

  /**
   * Of `keys`, those whose project has received log records, as a filter. One PostgreSQL statement
   * when a project is not known marked here yet; none otherwise. Call it after the claim returned.
   */
  async withLogs<K extends Pick<TraceKey, 'tenantId' | 'projectId'>>(keys: readonly K[]): Promise<K[]> {
    const unknown = [...new Set(keys.map(projectOf))].filter((n) => !this.marked.has(n));
    if (unknown.length > 0 || !this.complete) {
      const names = this.complete ? unknown : [...unknown, LOGGED_PROJECTS_COMPLETE];
      const rows = await this.sql<{ name: string }[]>`select name from shared_state where name = any(${names}::text[])`;
      for (const r of rows) {
        if (r.name === LOGGED_PROJECTS_COMPLETE) this.complete = true;
        else this.marked.add(r.name);
      }
    }
    // Records stored before marks existed may not be marked yet: every trace may have some.
    if (!this.complete) return [...keys];
    return keys.filter((k) => this.marked.has(projectOf(k)));
  }
}

/**
 * Marks every project span_logs holds records of, then records that it did. Records stored by
 * this version meanwhile were marked before their insert, so one pass covers all. Returns the
 * projects marked by this run (0 once complete).
 */
export async function backfillLoggedProjects(sql: SqlHandle, ch: ClickHouseStore): Promise<number> {
  const [done] = await sql<{ n: number }[]>`select count(*)::int as n from shared_state where name = ${LOGGED_PROJECTS_COMPLETE}`;
  if (done.n > 0) return 0;
  const rows = await ch.read<{ tenant_id: string; project_id: string }>(chSql`SELECT DISTINCT tenant_id, project_id FROM ${raw(ch.table('span_logs'))}`, { lane: 'system' });
  await new LoggedProjects(sql).mark(rows.map((r) => ({ tenantId: r.tenant_id, projectId: r.project_id })));
  await sql`insert into shared_state (name, value) values (${LOGGED_PROJECTS_COMPLETE}, ${sql.json({ projects: rows.length })}) on conflict (name) do nothing`;
  return rows.length;
}

/** Runs the backfill on the leader until it is complete (then each run is one cheap PostgreSQL read). */
export function scheduleLoggedProjectsBackfill(leader: Leader, deps: { sql: SqlHandle; ch: ClickHouseStore; logger: Logger }): void {
  leader.every('span-logs-projects-backfill', 60_000, async () => {
    const projects = await backfillLoggedProjects(deps.sql, deps.ch);
    if (projects > 0) deps.logger.info({ projects }, 'projects with log records marked from ClickHouse');
  });
}
