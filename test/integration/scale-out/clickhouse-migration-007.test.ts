/**
 * ClickHouse migration 007 (the per-span event tables' trace and span ids back to LZ4) on an
 * installation with data: the rows a current installation ingested (every stored version) are
 * copied into a database built from the migrations before 007 — ids stored with ZSTD(1) — which is
 * then migrated. Its columns (types and codecs) equal a current installation's, the ids are LZ4,
 * every row reads back unchanged (and rows written after it, beside them), and a
 * second run applies nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrationDirs } from '../../../src/app/service.js';
import type { ClickHouseStore } from '../../../src/platform/clickhouse/clickhouse.js';
import { migrateClickHouse, readMigrations } from '../../../src/platform/migrations.js';
import { allRows, columns, previousInstallation, type Column, type PreviousInstallation } from '../../helpers/previous-clickhouse.js';
import { baseInstant } from '../analytics-views/dataset.js';
import { seedThroughIngestion, startHarness, type Harness } from '../analytics-views/harness.js';

const MIGRATION = '007_id_codecs_for_final.sql';
const TABLES = ['event_generation_completed', 'event_tool_called', 'event_span_errored'];
/** Columns whose type a later migration changes (008: LowCardinality tenant and project; its own test checks them). */
// 008's LowCardinality tenant and project, 009's UUID trace and UInt64 span ids (their own tests check them).
const LATER_TYPE = ['tenant_id', 'project_id', 'trace_id', 'span_id'];
let h: Harness;
let previous: ClickHouseStore;
let installation: PreviousInstallation;
let previousColumns: Record<string, Column[]>;
let applied: string[];

const current = () => h.svc.service.deps.ch;

const codecOf = (list: Column[], name: string) => list.find((c) => c.name === name)?.compression_codec;

beforeAll(async () => {
  h = await startHarness();
  const projectId = (await h.svc.newProject('migrated-007')).id;
  await seedThroughIngestion(h.svc, projectId, baseInstant());
  installation = await previousInstallation(current(), h.svc.dataDir, MIGRATION, TABLES);
  previous = installation.store;
  previousColumns = installation.columns;
  applied = await migrateClickHouse(previous, migrationDirs.clickhouse);
}, 180_000);

afterAll(async () => {
  await installation?.close();
  await h?.stop();
});

describe('ClickHouse migration 007 on an installation with data', () => {
  it('started from ids stored with ZSTD(1), with rows in every table', async () => {
    for (const table of TABLES) {
      expect([table, codecOf(previousColumns[table], 'trace_id'), codecOf(previousColumns[table], 'span_id')]).toEqual([table, 'CODEC(ZSTD(1))', 'CODEC(ZSTD(1))']);
      expect([table, (await allRows(previous, table)).length > 0]).toEqual([table, true]);
    }
  });

  it('stores trace and span ids with LZ4, every column as a current installation has it', async () => {
    // 007 and every later migration.
    expect(applied).toEqual(readMigrations(migrationDirs.clickhouse).map((f) => f.name).filter((name) => name >= MIGRATION));
    expect(applied[0]).toBe(MIGRATION);
    for (const table of TABLES) {
      const after = await columns(previous, table);
      expect([table, after]).toEqual([table, await columns(current(), table)]);
      expect([table, codecOf(after, 'trace_id'), codecOf(after, 'span_id')]).toEqual([table, 'CODEC(LZ4)', 'CODEC(LZ4)']);
      // Only the codecs changed: names and types as before (but for the later types).
      const withoutLater = (list: Column[]) => list.filter((c) => !LATER_TYPE.includes(c.name)).map((c) => [c.name, c.type]);
      expect(withoutLater(after)).toEqual(withoutLater(previousColumns[table]));
    }
  });

  it('reads every existing row (every version) unchanged, and rows written afterwards too', async () => {
    // Copied in one insert per table, which keeps one version of a key: the versions FINAL reads.
    for (const table of TABLES) expect([table, await allRows(previous, table)]).toEqual([table, await allRows(current(), table, { final: true })]);
    const table = 'event_generation_completed';
    const names = previousColumns[table].map((c) => `\`${c.name}\``).join(', ');
    await previous.client.command({ query: `INSERT INTO ${previous.table(table)} (${names}) SELECT ${names} FROM ${current().table(table)} FINAL` });
    const once = await allRows(current(), table, { final: true });
    const twice = [...once, ...once].sort((a, b) => JSON.stringify(Object.values(a)).localeCompare(JSON.stringify(Object.values(b))));
    const stored = (await allRows(previous, table)).sort((a, b) => JSON.stringify(Object.values(a)).localeCompare(JSON.stringify(Object.values(b))));
    expect(stored).toEqual(twice);
  });

  it('is a no-op the second time', async () => {
    expect(await migrateClickHouse(previous, migrationDirs.clickhouse)).toEqual([]);
  });
});
