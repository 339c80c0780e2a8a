/**
 * The PostgreSQL side of the ingest benchmark: what the service's pool wrote on close
 * (`statsFiles.postgres`, src/platform/postgres/postgres-statement-stats.ts) — every statement it sent, by kind,
 * for the whole run (warm-up, the bench's own polling and shutdown included) — as lines per 1000
 * spans. The service awaits its statements one at a time, so statements are also round trips.
 */
import fs from 'node:fs';
import type { PostgresStats } from '../../src/platform/postgres/postgres-statement-stats.js';

export function readPostgresStats(file: string): PostgresStats | null {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as PostgresStats;
  } catch {
    return null;
  }
}

/** Lines: statements and transactions per 1000 spans, then each kind of at least 0.05 per 1000, most first. */
export function postgresStatsLines(stats: PostgresStats, spans: number): string[] {
  const perK = (n: number) => ((n * 1000) / spans).toFixed(2);
  const lines = [
    `PostgreSQL statements, whole run, per 1000 spans: ${perK(stats.statements)} statements (round trips) in all, ${perK(stats.transactions)} transactions; by kind:`,
  ];
  const kinds = Object.entries(stats.kinds).sort((a, b) => b[1] - a[1]);
  const shown = kinds.filter(([, n]) => (n * 1000) / spans >= 0.05);
  for (const [kind, n] of shown) lines.push(`  ${kind.padEnd(52)} ${perK(n).padStart(8)}`);
  const rest = kinds.length - shown.length;
  if (rest > 0) lines.push(`  (${rest} rarer kinds, ${perK(kinds.slice(shown.length).reduce((s, [, n]) => s + n, 0))} per 1000 spans together)`);
  return lines;
}
