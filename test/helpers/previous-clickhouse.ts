import fs from 'node:fs';
import path from 'node:path';
import { migrationDirs } from '../../src/app/service.js';
import type { ClickHouseStore } from '../../src/platform/clickhouse/clickhouse.js';
import { migrateClickHouse, readMigrations, renderClickHouseMigration } from '../../src/platform/migrations.js';
import { storedIdText } from '../../src/platform/clickhouse/sql/event-ids.js';
import { openTestClickHouse } from './test-clickhouse.js';
import { tempDataDir } from './temp-dir.js';

/** A column as system.columns describes it. */
export type Column = { name: string; type: string; compression_codec: string };

/**
 * The codecs clickhouse/010 gives the per-span tables (sorted timestamps as deltas, token counts
 * bit-packed), as system.columns names them: a migration test before 010 expects them on its columns.
 */
export const CODECS_010: Record<string, Record<string, string>> = {
  event_generation_completed: {
    timestamp: 'CODEC(Delta(8), LZ4)',
    input_tokens: 'CODEC(T64, LZ4)',
    output_tokens: 'CODEC(T64, LZ4)',
    cached_input_tokens: 'CODEC(T64, LZ4)',
    cache_write_input_tokens: 'CODEC(T64, LZ4)',
  },
  event_tool_called: { timestamp: 'CODEC(Delta(8), LZ4)', output_tokens: 'CODEC(T64, LZ4)' },
  event_span_errored: { timestamp: 'CODEC(Delta(8), LZ4)' },
};

/** A table's columns with 010's codecs where it sets them. */
export function withCodecs010(table: string, list: Column[]): Column[] {
  const codecs = CODECS_010[table] ?? {};
  return list.map((c) => (codecs[c.name] ? { ...c, compression_codec: codecs[c.name] } : c));
}

export async function rows(store: ClickHouseStore, query: string): Promise<Record<string, unknown>[]> {
  const result = await store.client.query({ query, format: 'JSONEachRow', clickhouse_settings: { output_format_json_quote_64bit_integers: 0 } });
  return result.json();
}

/**
 * Columns that migrations after the ones these tests cover add: 015's retention columns on every
 * table and 018's preview flag on traces. A test of an earlier migration migrates an old installation
 * up to that migration only, so it compares schemas and rows without them.
 */
export const LATER_COLUMNS: ReadonlySet<string> = new Set(['analytics_days', 'content_days', 'preview']);

export async function columns(store: ClickHouseStore, table: string): Promise<Column[]> {
  const all = (await rows(store, `SELECT name, type, compression_codec FROM system.columns WHERE database = '${store.database}' AND table = '${table}' ORDER BY position`)) as Column[];
  return all.filter((c) => !LATER_COLUMNS.has(c.name));
}

/**
 * A column as its text where the per-span tables store an id as an id (UUID trace_id, UInt64
 * span_id; clickhouse/009), so rows of a schema before 009 and after it compare, and order, alike.
 */
export function asText(column: Column): string {
  const quoted = `\`${column.name}\``;
  if (column.type === 'UUID') return `${storedIdText('uuid', quoted)} AS ${quoted}`;
  if (column.type === 'UInt64' && column.name === 'span_id') return `${storedIdText('hex64', quoted)} AS ${quoted}`;
  return quoted;
}

/**
 * Every stored version of every row, all columns (ids as text), in column order; with `final`, only
 * the row versions a read with FINAL sees (each key's newest in a ReplacingMergeTree table).
 */
export async function allRows(store: ClickHouseStore, table: string, options: { final?: boolean } = {}): Promise<Record<string, unknown>[]> {
  const list = await columns(store, table);
  // A table a later migration creates is not there yet in an older schema: it holds no rows.
  if (list.length === 0) return [];
  return rows(store, `SELECT ${list.map(asText).join(', ')} FROM ${store.table(table)}${options.final ? ' FINAL' : ''} ORDER BY ${list.map((c) => `\`${c.name}\``).join(', ')}`);
}

/**
 * Copies every stored version of every row of `table` from `from` into `to`, column by column; an
 * id the current schema stores as an id (the per-span tables' UUID trace_id and UInt64 span_id,
 * clickhouse/009) goes into an older schema's String column as its text, as ingestion wrote it there.
 */
export async function copyRows(from: ClickHouseStore, to: ClickHouseStore, table: string): Promise<void> {
  const target = await columns(to, table);
  if (target.length === 0) return;
  const source = new Map((await columns(from, table)).map((c) => [c.name, c.type]));
  // An older schema's String id column takes the text (asText); every other column goes as it is.
  const value = (c: Column) => {
    const from = { name: c.name, type: source.get(c.name) ?? '', compression_codec: '' };
    return /String/.test(c.type) ? asText(from).replace(/ AS `[^`]+`$/, '') : `\`${c.name}\``;
  };
  await to.client.command({
    query: `INSERT INTO ${to.table(table)} (${target.map((c) => `\`${c.name}\``).join(', ')}) SELECT ${target.map(value).join(', ')} FROM ${from.table(table)}`,
  });
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
export async function previousInstallation(
  current: ClickHouseStore,
  dataDir: string,
  migration: string,
  tables: readonly string[],
  database = `lookout_previous_${migration.slice(0, 3)}`,
): Promise<PreviousInstallation> {
  const dir = tempDataDir('lookout-migrations-');
  for (const file of readMigrations(migrationDirs.clickhouse).filter((f) => f.name < migration)) fs.writeFileSync(path.join(dir, file.name), file.text);
  const store = await openTestClickHouse({ database, dataDir });
  await migrateClickHouse(store, dir);
  const before: Record<string, Column[]> = {};
  for (const table of tables) {
    const list = await columns(store, table);
    // A table a later migration creates (span_logs, 011) has nothing to copy into an older schema.
    if (list.length === 0) continue;
    before[table] = list;
    await copyRows(current, store, table);
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

/** A migration's statements as the runner sends them to this (single-node) store. */
export function migrationStatements(store: ClickHouseStore, migration: string): string[] {
  const file = readMigrations(migrationDirs.clickhouse).find((f) => f.name === migration)!;
  return renderClickHouseMigration(file.text, { database: store.database, cluster: null });
}

/** The tables of the store's database, by name. */
export async function tableNames(store: ClickHouseStore): Promise<string[]> {
  return (await rows(store, `SELECT name FROM system.tables WHERE database = '${store.database}' ORDER BY name`)).map((r) => String(r.name));
}

/** The tables migrations before `migration` create (a later migration's table is not there yet). */
export function tablesBefore(migration: string, tables: readonly string[]): string[] {
  const created = new Set(
    readMigrations(migrationDirs.clickhouse)
      .filter((f) => f.name < migration)
      .flatMap((f) => [...f.text.matchAll(/CREATE TABLE IF NOT EXISTS \{db\}\.(\w+)/g)].map((m) => m[1])),
  );
  return tables.filter((table) => created.has(table));
}
