/**
 * The engine's own figures per statement, read from a ClickHouse server's system.query_log (the
 * embedded engine keeps none): CPU, rows, marks and parts selected, bytes read and peak memory of
 * each statement a benchmark case ran, as the median over its runs. On a machine other work shares,
 * wall milliseconds move with the load while these move little, so they are what tells two
 * builds or two table layouts apart there.
 */
import type { ClickHouseClient } from '@clickhouse/client';

export interface StatementFigures {
  /** Runs of this statement (same normalized text) in the case. */
  runs: number;
  tables: string[];
  /** The statement's first 110 characters, blanks folded. */
  head: string;
  /** Medians over the runs: CPU of every thread of the statement, user time, wall time (ms). */
  cpuMs: number;
  userMs: number;
  wallMs: number;
  selectedRows: number;
  selectedMarks: number;
  selectedParts: number;
  readMiB: number;
  memoryMiB: number;
}

/** The server's clock now, as text for `since` (the log is stamped by the server, not this process). */
export async function serverNow(client: ClickHouseClient): Promise<string> {
  const [row] = await (await client.query({ query: 'SELECT toString(now64(6)) AS now', format: 'JSONEachRow' })).json<{ now: string }>();
  return row.now;
}

/** Whether the store keeps a query log (a server does; the embedded engine has no system.query_log). */
export async function hasQueryLog(client: ClickHouseClient): Promise<boolean> {
  const [row] = await (await client.query({ query: "SELECT count() AS n FROM system.tables WHERE database = 'system' AND name = 'query_log'", format: 'JSONEachRow' })).json<{ n: string | number }>();
  return Number(row.n) > 0;
}

/** The SELECTs of tables `user` finished since `since` (serverNow), one entry per statement text, most CPU first. */
export async function statementFigures(client: ClickHouseClient, user: string, since: string): Promise<StatementFigures[]> {
  await client.command({ query: 'SYSTEM FLUSH LOGS' });
  const median = (expr: string) => `median(${expr})`;
  const rows = await (await client.query({
    query: `SELECT count() AS runs, any(tables) AS table_names, substring(replaceRegexpAll(any(query), '\\s+', ' '), 1, 110) AS head,
        ${median("ProfileEvents['OSCPUVirtualTimeMicroseconds']")} / 1000 AS cpu_ms, ${median("ProfileEvents['UserTimeMicroseconds']")} / 1000 AS user_ms,
        ${median('query_duration_ms')} AS wall_ms, ${median("ProfileEvents['SelectedRows']")} AS selected_rows,
        ${median("ProfileEvents['SelectedMarks']")} AS selected_marks, ${median("ProfileEvents['SelectedParts']")} AS selected_parts,
        ${median('read_bytes')} / 1048576 AS read_mib, ${median('memory_usage')} / 1048576 AS memory_mib
      FROM system.query_log
      WHERE event_time_microseconds >= toDateTime64({since:String}, 6) AND type = 'QueryFinish' AND query_kind = 'Select'
        AND user = {user:String} AND notEmpty(tables) AND NOT has(databases, 'system')
      GROUP BY normalized_query_hash
      ORDER BY cpu_ms DESC`,
    query_params: { since, user },
    format: 'JSONEachRow',
  })).json<Record<string, string | number | string[]>>();
  return rows.map((r) => ({
    runs: Number(r.runs),
    tables: r.table_names as string[],
    head: String(r.head),
    cpuMs: Number(r.cpu_ms),
    userMs: Number(r.user_ms),
    wallMs: Number(r.wall_ms),
    selectedRows: Number(r.selected_rows),
    selectedMarks: Number(r.selected_marks),
    selectedParts: Number(r.selected_parts),
    readMiB: Number(r.read_mib),
    memoryMiB: Number(r.memory_mib),
  }));
}

/** One line per statement for a benchmark's output. */
export function statementLines(figures: readonly StatementFigures[]): string[] {
  const n = (v: number, digits = 0) => v.toFixed(digits);
  return figures.map(
    (f) =>
      `    cpu ${n(f.cpuMs)} ms (user ${n(f.userMs)}, wall ${n(f.wallMs)}) | rows ${f.selectedRows} marks ${f.selectedMarks} parts ${f.selectedParts} | ` +
      `read ${n(f.readMiB, 1)} MiB, memory ${n(f.memoryMiB, 1)} MiB | ${f.runs}× ${f.tables.join(', ')}: ${f.head}`,
  );
}
