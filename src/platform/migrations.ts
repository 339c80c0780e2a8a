import fs from 'node:fs';
import path from 'node:path';
import type { Sql, SqlHandle } from './postgres/postgres.js';
import type { ClickHouseStore } from './clickhouse/clickhouse.js';
import { param, raw, sql as chSql } from './clickhouse/sql/fragment.js';
import { migrationStateDdl, renderClickHouseMigration, runsThroughDistributed, type ClickHouseLayout } from './clickhouse/clickhouse-layout.js';

/**
 * `apply`: run pending migrations under the migration lock. `check`: refuse to start while any are
 * pending (LOOKOUT_MIGRATE=off, for operators who migrate as a separate step with
 * `npm run admin -- migrate`). `none`: the caller migrates (that admin command).
 */
export type MigrateMode = 'apply' | 'check' | 'none';

export { renderClickHouseMigration } from './clickhouse/clickhouse-layout.js';

interface MigrationFile {
  name: string;
  text: string;
}

export interface MigrationDirs {
  postgres: string;
  clickhouse: string;
}

/** The files each store applied in this run (empty when it was already current). */
export interface MigrationResult {
  postgres: string[];
  clickhouse: string[];
}

/**
 * The PostgreSQL advisory lock every migration run holds, for both stores: N processes starting
 * together queue on it, and each finds the previous one's work recorded.
 */
export const MIGRATION_LOCK_KEY = 72817;

/** Numbered files `NNN_name.sql`, in order. */
export function readMigrations(dir: string): MigrationFile[] {
  return fs
    .readdirSync(dir)
    .filter((file) => /^\d{3}_[a-z0-9_]+\.sql$/.test(file))
    .sort()
    .map((file) => ({ name: file, text: fs.readFileSync(path.join(dir, file), 'utf8') }));
}

/**
 * Applies the PostgreSQL files not yet recorded, in the caller's transaction, which already holds
 * the migration lock: even `create table if not exists` races without it (two sessions both pass
 * the check and one fails on the catalog's unique index).
 */
async function applyPostgres(tx: SqlHandle, dir: string): Promise<string[]> {
  await tx`create table if not exists schema_migrations (name text primary key, applied_at timestamptz not null default now())`;
  const done = new Set((await tx<{ name: string }[]>`select name from schema_migrations`).map((r) => r.name));
  const applied: string[] = [];
  for (const file of readMigrations(dir)) {
    if (done.has(file.name)) continue;
    await tx.unsafe(file.text);
    await tx`insert into schema_migrations (name) values (${file.name})`;
    applied.push(file.name);
  }
  return applied;
}

/** Applies each PostgreSQL migration once, in one transaction under the migration lock. */
export async function migratePostgres(sql: Sql, dir: string): Promise<string[]> {
  return sql.begin<string[]>(async (tx) => {
    // A migration may rewrite a large table, and waiting for another process's run is expected:
    // the pool's statement_timeout does not apply here.
    await tx`set local statement_timeout = 0`;
    await tx`select pg_advisory_xact_lock(${MIGRATION_LOCK_KEY})`;
    return applyPostgres(tx, dir);
  });
}

/**
 * Both stores' migrations under one advisory lock, taken in a PostgreSQL transaction: PostgreSQL's
 * files commit with it, and the lock is released by PostgreSQL itself when a migrating process dies.
 * ClickHouse DDL cannot join the transaction; a run that fails half-way is safe to repeat because
 * every statement is idempotent (IF NOT EXISTS, MODIFY COLUMN to a type, a backfill that only
 * touches rows still missing its values) and each file is recorded only after its last statement.
 */
export async function migrateStores(sql: Sql, ch: ClickHouseStore, dirs: MigrationDirs): Promise<MigrationResult> {
  return sql.begin(async (tx) => {
    // A migration may rewrite a large table, and waiting for another process's run is expected:
    // the pool's statement_timeout does not apply here.
    await tx`set local statement_timeout = 0`;
    await tx`select pg_advisory_xact_lock(${MIGRATION_LOCK_KEY})`;
    const postgres = await applyPostgres(tx, dirs.postgres);
    const clickhouse = await migrateClickHouse(ch, dirs.clickhouse);
    return { postgres, clickhouse };
  });
}

/** Files not yet applied, per store: what a process started with migration turned off checks. */
export async function pendingMigrations(sql: Sql, ch: ClickHouseStore, dirs: MigrationDirs): Promise<MigrationResult> {
  const [{ exists }] = await sql<{ exists: boolean }[]>`select to_regclass('schema_migrations') is not null as exists`;
  const pgDone = new Set(exists ? (await sql<{ name: string }[]>`select name from schema_migrations`).map((r) => r.name) : []);
  const chDone = ch.nodes.length > 0 ? await onEachNode(ch, async (nodes) => appliedEverywhere(nodes, false)) : await appliedClickHouse(ch, false);
  return {
    postgres: readMigrations(dirs.postgres).map((f) => f.name).filter((n) => !pgDone.has(n)),
    clickhouse: readMigrations(dirs.clickhouse).map((f) => f.name).filter((n) => !chDone.has(n)),
  };
}

function layoutOf(store: ClickHouseStore, replicated?: boolean): ClickHouseLayout {
  return { database: store.database, cluster: store.cluster, replicated: replicated ?? store.replicated };
}

/** Names recorded in ClickHouse's `schema_migrations`; none when the table is not there yet. */
async function appliedClickHouse(store: ClickHouseStore, create: boolean, replicated?: boolean): Promise<Set<string>> {
  const table = store.table('schema_migrations');
  if (create) {
    await store.command(raw(migrationStateDdl(layoutOf(store, replicated))), 'system');
  } else {
    const [found] = await store.read<{ n: number | string }>(
      chSql`SELECT count() AS n FROM system.tables WHERE database = ${param('String', store.database)} AND name = 'schema_migrations'`,
      { lane: 'system' },
    );
    if (Number(found?.n ?? 0) === 0) return new Set();
  }
  // On a cluster the record is inserted with the insert quorum, so a majority of replicas hold it
  // before the lock passes on; a process reading a replica that still lags would repeat migrations
  // that are safe to repeat (IF NOT EXISTS statements; 009's rebuild, which starts over from the top).
  const rows = await store.read<{ name: string }>(raw(`SELECT name FROM ${table} FINAL`), { lane: 'system' });
  return new Set(rows.map((r) => r.name));
}

/**
 * Applies each ClickHouse migration once, recording it in `schema_migrations` of the Lookout
 * database. Callers other than tests run it through migrateStores, under the migration lock.
 * `replicated: false` builds a cluster's Distributed layout without Keeper (the EXPLAIN suite). A
 * cluster without replication that names its nodes (CLICKHOUSE_CLUSTER_NODES) migrates node by node.
 */
export async function migrateClickHouse(store: ClickHouseStore, dir: string, options: { replicated?: boolean } = {}): Promise<string[]> {
  if (store.nodes.length > 0) return onEachNode(store, (nodes) => migrateNodes(store, nodes, dir));
  const done = await appliedClickHouse(store, true, options.replicated);
  const applied: string[] = [];
  for (const file of readMigrations(dir)) {
    if (done.has(file.name)) continue;
    for (const statement of renderClickHouseMigration(file.text, layoutOf(store, options.replicated))) {
      await store.command(raw(statement), 'system');
    }
    await store.insert(store.table('schema_migrations'), [{ name: file.name }], 'system');
    applied.push(file.name);
  }
  return applied;
}

/** Runs `work` with a store on each of the cluster's nodes, closed afterwards. */
async function onEachNode<T>(store: ClickHouseStore, work: (nodes: ClickHouseStore[]) => Promise<T>): Promise<T> {
  const nodes: ClickHouseStore[] = [];
  try {
    for (const url of store.nodes) nodes.push(await store.openNode(url));
    return await work(nodes);
  } finally {
    await Promise.all(nodes.map((node) => node.close()));
  }
}

/** The migrations every node has recorded (each node keeps its own record: nothing replicates it). */
async function appliedEverywhere(nodes: readonly ClickHouseStore[], create: boolean): Promise<Set<string>> {
  const records = await Promise.all(nodes.map((node) => appliedClickHouse(node, create, false)));
  return new Set([...records[0]].filter((name) => records.every((record) => record.has(name))));
}

/**
 * A cluster without distributed DDL: each statement of a migration runs on every node before the
 * next one starts (lockstep), so no node is ever more than one statement ahead and a statement that
 * reads another table's shape (a Distributed table over its `_local` table, a rebuild's copy) finds
 * it on every node. A backfill (INSERT … SELECT) goes through the Distributed tables, which route its
 * rows to their shards: it runs once, on the store's own node. A migration is recorded on every node
 * once its last statement has run everywhere; one missing from any node's record runs again on all
 * (every statement is idempotent, as on one node).
 */
async function migrateNodes(store: ClickHouseStore, nodes: readonly ClickHouseStore[], dir: string): Promise<string[]> {
  const done = await appliedEverywhere(nodes, true);
  const layout: ClickHouseLayout = { database: store.database, cluster: store.cluster, replicated: false };
  const applied: string[] = [];
  for (const file of readMigrations(dir)) {
    if (done.has(file.name)) continue;
    for (const statement of renderClickHouseMigration(file.text, layout)) {
      if (runsThroughDistributed(statement)) await store.command(raw(statement), 'system');
      else await Promise.all(nodes.map((node) => node.command(raw(statement), 'system')));
    }
    await Promise.all(nodes.map((node) => node.insert(node.table('schema_migrations'), [{ name: file.name }], 'system')));
    applied.push(file.name);
  }
  return applied;
}
