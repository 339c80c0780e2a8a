import type { ClickHouseStore } from '../clickhouse.js';
import { param, sql } from './fragment.js';

/**
 * What the ClickHouse engine is doing in the background, for the metrics (docs/operations.md
 * "Metrics"): the merges running on Lookout's database, the largest of them, and the active parts
 * of each table. Merges and parts are what a busy engine spends its cores and disk on besides the
 * statements, so a settle round or an ingest flush that stalls can be set against them. Read from
 * the engine's own system tables (system.merges, system.parts): on a server, of the node this
 * process is connected to; the embedded engine is the process's own.
 */
export interface EngineActivity {
  mergesRunning: number;
  /** The largest running merge by the compressed bytes of its parts (0 when none runs). */
  largestMerge: { bytes: number; rowsRead: number; progress: number; elapsedSeconds: number };
  /** Active parts by table (Lookout's tables only: a fixed set). */
  activeParts: Record<string, number>;
}

type MergeRow = { running: number | string; bytes: number | string; rows_read: number | string; progress: number | string; elapsed: number | string };

/** One reading: two small statements on the system lane (never behind a gate, apart from the API's reads). */
export async function readEngineActivity(ch: ClickHouseStore): Promise<EngineActivity> {
  const database = param('String', ch.database);
  const [[merges], parts] = await Promise.all([
    ch.read<MergeRow>(
      sql`SELECT count() AS running, max(total_size_bytes_compressed) AS bytes,
                 argMax(rows_read, total_size_bytes_compressed) AS rows_read,
                 argMax(progress, total_size_bytes_compressed) AS progress,
                 argMax(elapsed, total_size_bytes_compressed) AS elapsed
          FROM system.merges WHERE database = ${database}`,
      { lane: 'system' },
    ),
    ch.read<{ table: string; parts: number | string }>(
      sql`SELECT table, count() AS parts FROM system.parts WHERE database = ${database} AND active GROUP BY table`,
      { lane: 'system' },
    ),
  ]);
  const running = Number(merges?.running ?? 0);
  return {
    mergesRunning: running,
    largestMerge: running > 0
      ? { bytes: Number(merges.bytes), rowsRead: Number(merges.rows_read), progress: Number(merges.progress), elapsedSeconds: Number(merges.elapsed) }
      : { bytes: 0, rowsRead: 0, progress: 0, elapsedSeconds: 0 },
    activeParts: Object.fromEntries(parts.map((p) => [p.table, Number(p.parts)])),
  };
}
