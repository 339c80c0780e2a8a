/**
 * How long a ClickHouse migration of the event tables takes on an installation with data (--migration:
 * 008, tenant_id / project_id LowCardinality, a mutation; 009, the per-span tables rebuilt with UUID /
 * UInt64 ids, a copy; 010, the same tables rebuilt partitioned by day, a copy): a database built from the migrations before it, then
 * --generations generation rows, a tenth as many processed traces and tool calls, each table in
 * --inserts time-ordered inserts (parts as ingestion leaves them: merges stopped while seeding, started
 * again before the migration, whose mutation runs on the merge pool), then the migration alone applied
 * as the service applies it. Prints the time and ms per million rows.
 *
 *   npx tsx bench/query/migration-time.ts [--migration 009] [--generations 2000000] [--inserts 16]
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { migrationDirs } from '../../src/app/service.js';
import { openClickHouse } from '../../src/platform/clickhouse/clickhouse.js';
import { migrateClickHouse, readMigrations } from '../../src/platform/migrations.js';

const args = process.argv.slice(2);
const flag = (name: string, fallback: number) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const GENERATIONS = flag('generations', 2_000_000);
const INSERTS = flag('inserts', 16);
const MIGRATION = (() => {
  const i = args.indexOf('--migration');
  const number = i >= 0 ? args[i + 1] : '009';
  const file = readMigrations(migrationDirs.clickhouse).find((f) => f.name.startsWith(`${number}_`));
  if (!file) throw new Error(`no ClickHouse migration ${number}`);
  return file.name;
})();
const TENANT = '5d1c8a0e-2f4b-4c6d-9e8f-0a1b2c3d4e5f';
const PROJECT = 'a7e3b9c1-d5f2-4a8b-b6c4-e1f2a3b4c5d6';
const SPAN = 20 * 86_400_000;

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lookout-migration-time-'));
const previousDir = path.join(dir, 'previous');
const targetDir = path.join(dir, 'target');
fs.mkdirSync(previousDir);
fs.mkdirSync(targetDir);
for (const file of readMigrations(migrationDirs.clickhouse).filter((f) => f.name <= MIGRATION)) {
  fs.writeFileSync(path.join(file.name < MIGRATION ? previousDir : targetDir, file.name), file.text);
  if (file.name < MIGRATION) fs.writeFileSync(path.join(targetDir, file.name), file.text);
}
const ch = await openClickHouse({ url: null, user: 'default', password: '', database: 'lookout', cluster: null, dataDir: path.join(dir, 'data') });
try {
  await migrateClickHouse(ch, previousDir);
  const uuid = (n: string) => `UUIDNumToString(toFixedString(unhex(concat(leftPad(hex(cityHash64(${n}, 5)), 16, '0'), leftPad(hex(cityHash64(${n}, 6)), 16, '0'))), 16))`;
  // Before 009 the span id is its 16 hex characters; from 009 on, the UInt64 they spell.
  const span = MIGRATION > '009' ? 'cityHash64(number, 2)' : `lower(leftPad(hex(cityHash64(number, 2)), 16, '0'))`;
  const time = (rows: number) => `toDateTime64('2026-11-01 00:00:00', 3, 'UTC') + toIntervalMillisecond(intDiv(number * ${SPAN}, ${rows}))`;
  const tables: [string, number, (rows: number) => string][] = [
    ['event_generation_completed', GENERATIONS, (rows) => `(tenant_id, project_id, timestamp, model, trace_id, span_id, duration_ms)
      SELECT '${TENANT}', '${PROJECT}', ${time(rows)}, concat('model-', toString(number % 200)), ${uuid('intDiv(number, 10)')}, ${span}, number % 6000`],
    ['event_trace_processed', GENERATIONS / 10, (rows) => `(tenant_id, project_id, timestamp, trace_id, agent_name)
      SELECT '${TENANT}', '${PROJECT}', ${time(rows)}, ${uuid('number')}, concat('agent-', toString(number % 50))`],
    ['event_tool_called', GENERATIONS / 10, (rows) => `(tenant_id, project_id, timestamp, tool, trace_id, span_id, duration_ms)
      SELECT '${TENANT}', '${PROJECT}', ${time(rows)}, concat('tool-', toString(number % 40)), ${uuid('intDiv(number, 3)')}, ${span}, number % 3000`],
  ];
  let total = 0;
  for (const [table, rows, select] of tables) {
    await ch.client.command({ query: `SYSTEM STOP MERGES ${ch.table(table)}` });
    for (let i = 0; i < INSERTS; i++) {
      const lo = Math.floor((rows * i) / INSERTS);
      const hi = Math.floor((rows * (i + 1)) / INSERTS);
      await ch.client.command({ query: `INSERT INTO ${ch.table(table)} ${select(rows)} FROM numbers(${lo}, ${hi - lo})` });
    }
    total += rows;
  }
  // Merges back on: an ALTER's mutation runs on the merge pool and the migration waits for it.
  for (const [table] of tables) await ch.client.command({ query: `SYSTEM START MERGES ${ch.table(table)}` });
  const start = performance.now();
  const applied = await migrateClickHouse(ch, targetDir);
  const ms = performance.now() - start;
  const [left] = await (await ch.client.query({ query: `SELECT count() AS n FROM system.mutations WHERE database = 'lookout' AND NOT is_done`, format: 'JSONEachRow' })).json<{ n: string }>();
  console.log(`applied ${applied.join(', ')} to ${total} rows (${GENERATIONS} generations) in ${(ms / 1000).toFixed(1)} s: ${(ms / (total / 1e6)).toFixed(0)} ms per million rows; mutations still running: ${left.n}; load ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
} finally {
  await ch.close();
  fs.rmSync(dir, { recursive: true, force: true });
}
