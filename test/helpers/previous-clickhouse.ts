import fs from 'node:fs';
import path from 'node:path';
import { migrationDirs } from '../../src/service.js';
import { openClickHouse, type ClickHouseStore } from '../../src/stores/clickhouse.js';
import { migrateClickHouse, readMigrations } from '../../src/stores/migrations.js';
import { tempDataDir } from './temp-dir.js';

/** A column as system.columns describes it. */
export type Column = { name: string; type: string; compression_codec: string };

export async function rows(store: ClickHouseStore, query: string): Promise<Record<string, unknown>[]> {
  const result = await store.client.query({ query, format: 'JSONEachRow', clickhouse_settings: { output_format_json_quote_64bit_integers: 0 } });
  return result.json();
}

export async function columns(store: ClickHouseStore, table: string): Promise<Column[]> {
  return (await rows(store, `SELECT name, type, compression_codec FROM system.columns WHERE database = '${store.database}' AND table = '${table}' ORDER BY position`)) as Column[];
}

/** Every stored version of every row, all columns, in column order. */
export async function allRows(store: ClickHouseStore, table: string): Promise<Record<string, unknown>[]> {
  const names = (await columns(store, table)).map((c) => `\`${c.name}\``).join(', ');
  return rows(store, `SELECT ${names} FROM ${store.table(table)} ORDER BY ${names}`);
}

export interface PreviousInstallation {
  store: ClickHouseStore;
  /** The tables' columns before `migration`. */
  columns: Record<string, Column[]>;
  close(): Promise<void>;
}

/**
 * A database built from the migrations before `migration`, beside `current` on its engine, holding
 * every stored version of every row `current` has in `tables` — an installation with data on the
 * previous schema, for a migration test to migrate (with migrationDirs.clickhouse).
 */
export async function previousInstallation(current: ClickHouseStore, dataDir: string, migration: string, tables: readonly string[]): Promise<PreviousInstallation> {
  const dir = tempDataDir('lookout-migrations-');
  for (const file of readMigrations(migrationDirs.clickhouse).filter((f) => f.name < migration)) fs.writeFileSync(path.join(dir, file.name), file.text);
  const store = await openClickHouse({ url: null, user: '', password: '', database: `lookout_previous_${migration.slice(0, 3)}`, cluster: null, dataDir });
  await migrateClickHouse(store, dir);
  const before: Record<string, Column[]> = {};
  for (const table of tables) {
    before[table] = await columns(store, table);
    const names = before[table].map((c) => `\`${c.name}\``).join(', ');
    await store.client.command({ query: `INSERT INTO ${store.table(table)} (${names}) SELECT ${names} FROM ${current.table(table)}` });
  }
  return {
    store,
    columns: before,
    async close() {
      await store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
