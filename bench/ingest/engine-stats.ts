/**
 * The embedded engine's side of the ingest benchmark: what the service's store wrote on close
 * (`statsFiles.clickhouse`, src/platform/clickhouse/sql/statement-stats.ts) — statements per kind and the
 * engine's own counters for the whole run (warm-up and shutdown included) — as lines per 1000 spans.
 * The embedded engine has no system.query_log, so CPU per statement kind is not available; the
 * engine's CPU by thread pool (cpu-split.ts) says where it ran.
 */
import fs from 'node:fs';
import type { KindStats } from '../../src/platform/clickhouse/sql/statement-stats.js';

export interface EngineStats {
  kinds: Record<string, KindStats>;
  events: Record<string, number>;
}

export function readEngineStats(file: string): EngineStats | null {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as EngineStats;
  } catch {
    return null;
  }
}

const fixed = (n: number, digits = 1) => n.toFixed(digits);

/** Lines describing the run's engine work per 1000 spans (`spans`: every span of the run). */
export function engineStatsLines(stats: EngineStats, spans: number): string[] {
  const perK = (n: number) => (n * 1000) / spans;
  const e = (name: string) => stats.events[name] ?? 0;
  const lines = [`engine statements, whole run, per 1000 spans (count, wall ms while in the engine, MiB):`];
  const kinds = Object.entries(stats.kinds).sort((a, b) => b[1].ms - a[1].ms);
  for (const [kind, k] of kinds) {
    lines.push(`  ${kind.padEnd(44)} ${fixed(perK(k.statements), 2).padStart(7)} ${fixed(perK(k.ms)).padStart(8)} ms ${fixed(perK(k.bytes) / 2 ** 20, 2).padStart(7)} MiB`);
  }
  lines.push(
    `engine counters per 1000 spans: query time select ${fixed(perK(e('SelectQueryTimeMicroseconds')) / 1000)} ms, insert ${fixed(perK(e('InsertQueryTimeMicroseconds')) / 1000)} ms; ` +
      `selected parts ${fixed(perK(e('SelectedParts')))}, marks ${fixed(perK(e('SelectedMarks')))}, rows ${Math.round(perK(e('SelectedRows')))}; ` +
      `inserted rows ${Math.round(perK(e('InsertedRows')))}, parts written ${fixed(perK(e('MergeTreeDataWriterBlocks')))}`,
    `engine merges per 1000 spans: ${fixed(perK(e('Merge')), 2)} merges of ${fixed(perK(e('MergeSourceParts')), 1)} parts, ${Math.round(perK(e('MergedRows')))} rows, ` +
      `${fixed(perK(e('MergedUncompressedBytes')) / 2 ** 20, 2)} MiB, ${fixed(perK(e('MergeTotalMilliseconds')))} ms merge wall time; ` +
      `async inserts ${e('AsyncInsertQuery')}, parallel parsing inputs ${e('ParallelParsingInputFormat')}; ` +
      `engine threads' own CPU account ${fixed(perK(e('UserTimeMicroseconds') + e('SystemTimeMicroseconds')) / 1000)} ms`,
  );
  return lines;
}

/** One line: CPU per 1000 spans of the engine's threads by pool name, largest first. */
export function enginePoolsLine(byName: Map<string, number>, spans: number): string {
  const parts = [...byName].sort((a, b) => b[1] - a[1]).filter(([, ms]) => (ms * 1000) / spans >= 0.5);
  return `         engine and other threads by name: ${parts.map(([name, ms]) => `${name} ${((ms * 1000) / spans).toFixed(1)}`).join(', ')} ms`;
}
