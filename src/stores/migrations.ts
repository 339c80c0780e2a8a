import fs from 'node:fs';
import path from 'node:path';
import type { Sql } from './postgres.js';
import type { ClickHouseStore } from './clickhouse.js';
import { raw } from './clickhouse-sql/fragment.js';

interface MigrationFile {
  name: string;
  text: string;
}

/** Numbered files `NNN_name.sql`, in order. */
export function readMigrations(dir: string): MigrationFile[] {
  return fs
    .readdirSync(dir)
    .filter((file) => /^\d{3}_[a-z0-9_]+\.sql$/.test(file))
    .sort()
    .map((file) => ({ name: file, text: fs.readFileSync(path.join(dir, file), 'utf8') }));
}

/** Applies each PostgreSQL migration once, inside a transaction, under an advisory lock so concurrent starts are safe. */
export async function migratePostgres(sql: Sql, dir: string): Promise<string[]> {
  await sql`create table if not exists schema_migrations (name text primary key, applied_at timestamptz not null default now())`;
  const applied: string[] = [];
  await sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(72817)`;
    const done = new Set((await tx<{ name: string }[]>`select name from schema_migrations`).map((r) => r.name));
    for (const file of readMigrations(dir)) {
      if (done.has(file.name)) continue;
      await tx.unsafe(file.text);
      await tx`insert into schema_migrations (name) values (${file.name})`;
      applied.push(file.name);
    }
  });
  return applied;
}

/** Splits a ClickHouse migration into statements (ClickHouse takes one statement per request). */
function statements(text: string): string[] {
  return text
    .split('\n')
    .filter((line) => !line.trim().startsWith('--'))
    .join('\n')
    .split(/;\s*(?:\n|$)/)
    .map((s) => s.trim())
    .filter(Boolean);
}

/**
 * Renders the placeholders of a ClickHouse migration: {db} is the database, {on_cluster} becomes
 * ON CLUSTER when a cluster is configured, {replicated} turns MergeTree engines into their
 * Replicated form there.
 */
export function renderClickHouseMigration(text: string, store: Pick<ClickHouseStore, 'database' | 'cluster'>): string[] {
  const onCluster = store.cluster ? ` ON CLUSTER \`${store.cluster}\`` : '';
  return statements(text).map((s) =>
    s
      .replaceAll('{db}', `\`${store.database}\``)
      .replaceAll('{on_cluster}', onCluster)
      .replaceAll('{replicated}', store.cluster ? 'Replicated' : ''),
  );
}

/** Applies each ClickHouse migration once, recording it in `schema_migrations` of the Lookout database. */
export async function migrateClickHouse(store: ClickHouseStore, dir: string): Promise<string[]> {
  const table = store.table('schema_migrations');
  const onCluster = store.cluster ? ` ON CLUSTER \`${store.cluster}\`` : '';
  await store.command(
    raw(`CREATE TABLE IF NOT EXISTS ${table}${onCluster} (name String, applied_at DateTime64(3, 'UTC') DEFAULT now64(3)) ENGINE = ${store.cluster ? 'Replicated' : ''}ReplacingMergeTree ORDER BY name`),
    'system',
  );
  const done = new Set((await store.read<{ name: string }>(raw(`SELECT name FROM ${table} FINAL`), { lane: 'system' })).map((r) => r.name));
  const applied: string[] = [];
  for (const file of readMigrations(dir)) {
    if (done.has(file.name)) continue;
    for (const statement of renderClickHouseMigration(file.text, store)) {
      await store.command(raw(statement), 'system');
    }
    await store.insert(table, [{ name: file.name }], 'system');
    applied.push(file.name);
  }
  return applied;
}
