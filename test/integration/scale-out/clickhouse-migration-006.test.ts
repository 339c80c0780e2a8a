/**
 * ClickHouse migration 006 (first_processing on trace.processed) on an installation with data: the
 * trace.processed rows a current installation settled (every stored version) are copied into a
 * database built from the migrations before 006, which is then migrated. Its column list equals a
 * current installation's, every existing row reads first_processing = 0 ("read through FINAL",
 * always exact), and every other column is unchanged.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LATER_COLUMNS } from '../../helpers/previous-clickhouse.js';
import { migrationDirs } from '../../../src/app/service.js';
import { openClickHouse, type ClickHouseStore } from '../../../src/platform/clickhouse/clickhouse.js';
import { migrateClickHouse, readMigrations } from '../../../src/platform/migrations.js';
import { tempDataDir } from '../../helpers/temp-dir.js';
import { baseInstant } from '../analytics-views/dataset.js';
import { seedThroughIngestion, startHarness, type Harness } from '../analytics-views/harness.js';

const MIGRATION = '006_first_processing.sql';
const TABLE = 'event_trace_processed';
let h: Harness;
let previous: ClickHouseStore;
let previousDir: string;
let projectId: string;
let previousColumns: string[];
let applied: string[];

const current = () => h.svc.service.deps.ch;

async function rows(store: ClickHouseStore, query: string): Promise<Record<string, unknown>[]> {
  const result = await store.client.query({ query, format: 'JSONEachRow', clickhouse_settings: { output_format_json_quote_64bit_integers: 0 } });
  return result.json();
}

async function columns(store: ClickHouseStore): Promise<{ name: string; type: string; default_expression: string }[]> {
  const all = (await rows(store, `SELECT name, type, default_expression FROM system.columns WHERE database = '${store.database}' AND table = '${TABLE}' ORDER BY position`)) as { name: string; type: string; default_expression: string }[];
  return all.filter((c) => !LATER_COLUMNS.has(c.name));
}

beforeAll(async () => {
  h = await startHarness();
  projectId = (await h.svc.newProject('migrated-006')).id;
  await seedThroughIngestion(h.svc, projectId, baseInstant());
  previousDir = tempDataDir('lookout-migrations-');
  for (const file of readMigrations(migrationDirs.clickhouse).filter((f) => f.name < MIGRATION)) fs.writeFileSync(path.join(previousDir, file.name), file.text);
  previous = await openClickHouse({ url: null, user: '', password: '', database: 'lookout_previous_006', cluster: null, dataDir: h.svc.dataDir });
  await migrateClickHouse(previous, previousDir);
  previousColumns = (await columns(previous)).map((c) => c.name);
  const names = previousColumns.map((c) => `\`${c}\``).join(', ');
  await previous.client.command({ query: `INSERT INTO ${previous.table(TABLE)} (${names}) SELECT ${names} FROM ${current().table(TABLE)}` });
  applied = await migrateClickHouse(previous, migrationDirs.clickhouse);
}, 180_000);

afterAll(async () => {
  await previous?.close();
  await h?.stop();
  if (previousDir) fs.rmSync(previousDir, { recursive: true, force: true });
});

describe('ClickHouse migration 006 on an installation with data', () => {
  it('adds first_processing UInt8 DEFAULT 0 after the coverage counts, as a current installation has it', async () => {
    expect(previousColumns).not.toContain('first_processing');
    // 006 and every later migration (007 changes codecs of other tables only).
    expect(applied).toEqual(readMigrations(migrationDirs.clickhouse).map((f) => f.name).filter((name) => name >= MIGRATION));
    expect(applied[0]).toBe(MIGRATION);
    expect(await columns(previous)).toEqual(await columns(current()));
    const added = (await columns(previous)).find((c) => c.name === 'first_processing');
    expect(added).toEqual({ name: 'first_processing', type: 'UInt8', default_expression: '0' });
  });

  it('reads every existing row (every version) with first_processing = 0 and every other column unchanged', async () => {
    const names = previousColumns.map((c) => `\`${c}\``).join(', ');
    const migrated = await rows(previous, `SELECT ${names}, first_processing FROM ${previous.table(TABLE)} ORDER BY ${names}`);
    const source = await rows(current(), `SELECT ${names} FROM ${current().table(TABLE)} ORDER BY ${names}`);
    expect(migrated.length).toBeGreaterThan(0);
    expect(migrated.map((r) => r.first_processing)).toEqual(migrated.map(() => 0));
    expect(migrated.map(({ first_processing: _f, ...rest }) => rest)).toEqual(source);
  });

  it('is a no-op the second time', async () => {
    expect(await migrateClickHouse(previous, migrationDirs.clickhouse)).toEqual([]);
  });
});
