/**
 * How ClickHouse migrations become DDL. One node (the embedded default, or a single server): the
 * tables as written. With CLICKHOUSE_CLUSTER: each table becomes `<name>_local`, a Replicated table
 * on every node (its TTL and keys as written), and a Distributed table under the original name that
 * every query and insert uses. Rows are sharded so every version of a row lives on one shard, which
 * keeps ReplacingMergeTree's FINAL exact per shard (FINAL never merges across shards).
 */

import { settingsClause } from './sql/compile.js';

export interface ClickHouseLayout {
  database: string;
  cluster: string | null;
  /**
   * ON CLUSTER DDL and Replicated engines (the default whenever a cluster is named). False only
   * where no Keeper exists: the EXPLAIN suite builds the Distributed layout on chdb with plain
   * MergeTree local tables, which checks every query shape without replication.
   */
  replicated?: boolean;
}

/**
 * The sharding key of every table, an allowlist: a new table must be added here before it can be
 * created on a cluster. Per-trace data is sharded by the trace, so a trace's spans, its summary and
 * its per-span events (and every re-processed version of them) share a shard; issue events have no
 * trace and go by their own event id.
 */
export const SHARDING_KEYS: Readonly<Record<string, string>> = Object.freeze({
  spans: 'cityHash64(trace_id)',
  span_logs: 'cityHash64(trace_id)',
  // A trace's searchable text shards with its summary: the trace list's IN over it stays shard-local.
  trace_content: 'cityHash64(trace_id)',
  // trace_id is a UUID in these three (migration 009): hashed as its text, the same hash as the
  // String trace_id of spans and trace.processed, and as these tables' rows had before 009.
  event_generation_completed: 'cityHash64(toString(trace_id))',
  event_tool_called: 'cityHash64(toString(trace_id))',
  event_span_errored: 'cityHash64(toString(trace_id))',
  event_trace_processed: 'cityHash64(trace_id)',
  traces: 'cityHash64(trace_id)',
  event_issue: 'cityHash64(event_id)',
});

const quote = (name: string) => `\`${name}\``;

/**
 * Tables kept whole on every node instead of sharded: small settings the engine itself reads where a
 * row is inserted (the retention Join table, clickhouse/015). Created on every node as written (ON
 * CLUSTER where that is how DDL runs); the code that writes them writes each node
 * (src/lifecycle/retention-engine.ts), since such an engine does not replicate.
 */
export const NODE_TABLES: ReadonlySet<string> = new Set(['retention_settings']);


/** A rebuild copy's name (`<table>_vNNN`, migration 009): a table's rows under another name for a while. */
const REBUILD_COPY = /_v\d{3}$/;

/**
 * Settings every insert carries on a cluster: the Distributed table forwards the rows to their
 * shard before answering (its default is a background queue, which would break "a 200 means the
 * spans are durable"), and the shard's insert waits for a quorum of replicas when `quorum` is set
 * ('auto' = a majority).
 */
/**
 * A table's sharding key; every table a migration touches must have one (SHARDING_KEYS). A rebuild
 * copy (`<table>_v009`) shards as its table: its rows are that table's rows, of either id type.
 */
function shardingKey(name: string): string {
  const key = SHARDING_KEYS[name] ?? (REBUILD_COPY.test(name) ? SHARDING_KEYS[name.replace(REBUILD_COPY, '')] : undefined);
  if (!key) throw new Error(`No sharding key for ClickHouse table ${name}: add it to SHARDING_KEYS`);
  return key;
}

export function clusterInsertSettings(quorum: string | null): Record<string, string | number> {
  return {
    distributed_foreground_insert: 1,
    ...(quorum && quorum !== '0' ? { insert_quorum: quorum, insert_quorum_parallel: 1 } : {}),
  };
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

// The statement forms migrations use. Anything else is refused on a cluster, so a new form is
// decided (and golden-tested) before it can run there.
const CREATE = /^CREATE TABLE IF NOT EXISTS \{db\}\.([a-z_][a-z0-9_]*) \{on_cluster\}\s*(\([\s\S]*)$/;
const ALTER = /^ALTER TABLE \{db\}\.([a-z_][a-z0-9_]*) \{on_cluster\}\s*([\s\S]*)$/;
/** A backfill: INSERT … SELECT into a table, with its column list. */
const INSERT_SELECT = /^INSERT INTO \{db\}\.([a-z_][a-z0-9_]*)\s*(\([^)]*\))\s*(SELECT\b[\s\S]*)$/;
/** A rebuild's steps (migration 009): a copy dropped, and a table swapped with its copy. */
const DROP = /^DROP TABLE IF EXISTS \{db\}\.([a-z_][a-z0-9_]*) \{on_cluster\} SYNC$/;
const EXCHANGE = /^EXCHANGE TABLES \{db\}\.([a-z_][a-z0-9_]*) AND \{db\}\.([a-z_][a-z0-9_]*) \{on_cluster\}$/;
const ENGINE = /ENGINE = \{replicated\}(\w+MergeTree)(?:\(([^)]*)\))?/;

/**
 * A change of what the storage does with its data (TTL, a data-skipping index), not of the column
 * list: it applies to the `_local` table alone, since a Distributed table holds no data and takes
 * neither. Such changes are written as ALTER statements of their own (only MODIFY TTL, MODIFY
 * COLUMN … TTL, ADD INDEX and MATERIALIZE INDEX clauses).
 */
function storageOnly(change: string): boolean {
  const clauses = change.split(/,\s*\n\s*/);
  return clauses.every((c) => /^(MODIFY TTL|ADD INDEX|MATERIALIZE INDEX)\b/.test(c.trim()) || /^MODIFY COLUMN\b[^,]*\bTTL\b/.test(c.trim()));
}

/**
 * Renders a migration: `{db}` is the database, `{db_name}` its bare name (inside a string literal:
 * the table a joinGet reads), `{on_cluster}` becomes ON CLUSTER on a cluster, `{replicated}` marks
 * the MergeTree engine that becomes Replicated there.
 */
export function renderClickHouseMigration(text: string, layout: ClickHouseLayout): string[] {
  const db = quote(layout.database);
  if (!layout.cluster) {
    return statements(text).map((s) => s.replaceAll('{db}', db).replaceAll('{db_name}', layout.database).replaceAll('{on_cluster}', '').replaceAll('{replicated}', ''));
  }
  const cluster = layout.cluster;
  const replicated = layout.replicated ?? true;
  const onCluster = replicated ? ` ON CLUSTER ${quote(cluster)}` : '';
  return statements(text.replaceAll('{db_name}', layout.database)).flatMap((s) => {
    const create = CREATE.exec(s);
    if (create && NODE_TABLES.has(create[1])) {
      const [, name, body] = create;
      if (ENGINE.test(body)) throw new Error(`Table ${name} is kept whole on every node: it cannot be a {replicated} table`);
      return [`CREATE TABLE IF NOT EXISTS ${db}.${quote(name)}${onCluster}\n${body}`];
    }
    if (create) {
      const [, name, body] = create;
      const key = shardingKey(name);
      const local = `${name}_local`;
      const engine = ENGINE.exec(body);
      if (!engine) throw new Error(`Table ${name}: expected ENGINE = {replicated}...MergeTree`);
      const [, family, args = ''] = engine;
      // Keeper path per shard; {shard} and {replica} are each node's macros (deploy/clickhouse/). A
      // rebuild copy is swapped with its table by EXCHANGE TABLES, which swaps names, not Keeper
      // paths: a path named after the copy would then belong to the live table, and a rebuild run
      // again after an interruption could not create its copy there. {uuid} (the table's own UUID,
      // the same on every replica under ON CLUSTER in an Atomic database) moves with the table.
      const path = REBUILD_COPY.test(name) ? `'/clickhouse/tables/{uuid}/{shard}'` : `'/clickhouse/tables/{shard}/${layout.database}/${local}'`;
      const replicatedArgs = [path, `'{replica}'`, ...(args.trim() ? [args.trim()] : [])];
      const localEngine = replicated ? `ENGINE = Replicated${family}(${replicatedArgs.join(', ')})` : `ENGINE = ${family}${args ? `(${args})` : ''}`;
      return [
        `CREATE TABLE IF NOT EXISTS ${db}.${quote(local)}${onCluster}\n${body.replace(ENGINE, localEngine)}`,
        `CREATE TABLE IF NOT EXISTS ${db}.${quote(name)}${onCluster} AS ${db}.${quote(local)}\nENGINE = Distributed(${quote(cluster)}, ${db}, ${quote(local)}, ${key})`,
      ];
    }
    const alter = ALTER.exec(s);
    if (alter) {
      const [, name, change] = alter;
      shardingKey(name);
      if (storageOnly(change)) return [`ALTER TABLE ${db}.${quote(`${name}_local`)}${onCluster}\n    ${change}`];
      // The local table holds the data; the Distributed table's own column list must follow it.
      return [`ALTER TABLE ${db}.${quote(`${name}_local`)}${onCluster}\n    ${change}`, `ALTER TABLE ${db}.${quote(name)}${onCluster}\n    ${change}`];
    }
    const drop = DROP.exec(s);
    if (drop) {
      const [, name] = drop;
      shardingKey(name);
      // SYNC: an Atomic database otherwise keeps a dropped Replicated table's Keeper path for minutes.
      return [`DROP TABLE IF EXISTS ${db}.${quote(name)}${onCluster} SYNC`, `DROP TABLE IF EXISTS ${db}.${quote(`${name}_local`)}${onCluster} SYNC`];
    }
    const exchange = EXCHANGE.exec(s);
    if (exchange) {
      const [, a, b] = exchange;
      // The data lives in the local tables: they swap. Each Distributed table is then replaced (one
      // atomic CREATE OR REPLACE) by one over its local table's new columns, with its sharding key.
      const distributed = (name: string) =>
        `CREATE OR REPLACE TABLE ${db}.${quote(name)}${onCluster} AS ${db}.${quote(`${name}_local`)}\nENGINE = Distributed(${quote(cluster)}, ${db}, ${quote(`${name}_local`)}, ${shardingKey(name)})`;
      return [`EXCHANGE TABLES ${db}.${quote(`${a}_local`)} AND ${db}.${quote(`${b}_local`)}${onCluster}`, distributed(a), distributed(b)];
    }
    const insert = INSERT_SELECT.exec(s);
    if (insert) {
      const [, name, columns, select] = insert;
      shardingKey(name);
      // Through the Distributed table, which routes each row to its shard; answered only once the
      // rows are there (as every insert on a cluster, clusterInsertSettings). The SELECT reads
      // Distributed tables too: a join inside it must be GLOBAL.
      return [`INSERT INTO ${db}.${quote(name)} ${columns}\n${settingsClause(clusterInsertSettings(null))}\n${select.replaceAll('{db}', db)}`];
    }
    throw new Error(`A ClickHouse migration statement this layout cannot place on a cluster: ${s.slice(0, 80)}`);
  });
}

/**
 * Whether a rendered cluster statement writes through the Distributed tables (a backfill's INSERT …
 * SELECT), which reach every shard from one node: run once, where DDL runs on every node.
 */
export function runsThroughDistributed(statement: string): boolean {
  return /^INSERT INTO\b/.test(statement);
}

/**
 * The table recording applied ClickHouse migrations. On a cluster it is replicated to every node
 * of every shard (one Keeper path without {shard}; the `replica` macro is unique cluster-wide), so
 * whichever node a process reaches sees the same record.
 */
export function migrationStateDdl(layout: ClickHouseLayout): string {
  const table = `${quote(layout.database)}.${quote('schema_migrations')}`;
  const columns = `(name String, applied_at DateTime64(3, 'UTC') DEFAULT now64(3))`;
  if (!layout.cluster || layout.replicated === false) return `CREATE TABLE IF NOT EXISTS ${table} ${columns} ENGINE = ReplacingMergeTree ORDER BY name`;
  return `CREATE TABLE IF NOT EXISTS ${table} ON CLUSTER ${quote(layout.cluster)} ${columns} ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/all/${layout.database}/schema_migrations', '{replica}') ORDER BY name`;
}

/**
 * The table a subquery names to read the rows of the shard it runs on: `<name>_local` on a cluster,
 * where the outer query reads the Distributed table and each shard answers for its own traces (a
 * Distributed name inside would fan out again, which ClickHouse refuses: code 288); the table itself
 * on one node. Only for tables sharded by the trace, like the outer one.
 */
export function shardLocalTable(name: string, cluster: string | null): string {
  return cluster ? `${name}_local` : name;
}
