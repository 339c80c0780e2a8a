import fs from 'node:fs';
import path from 'node:path';
import { Session } from 'chdb';
import { openClickHouse, type ClickHouseStore } from '../../../src/platform/clickhouse/clickhouse.js';
import { compile } from '../../../src/platform/clickhouse/sql/compile.js';
import type { Fragment } from '../../../src/platform/clickhouse/sql/fragment.js';

export const CLUSTER = 'lookout_cluster';

/**
 * chdb started with a `remote_servers` config naming a two-shard cluster. Both shards point at this
 * engine itself (localhost on the configured tcp_port is a local replica), so Distributed tables
 * plan and run without a network, and ClickHouse applies its distributed-query rules exactly as on a
 * real cluster: a double-distributed IN/JOIN subquery is refused (code 288), GLOBAL is planned.
 * Every row reads twice (each shard is the same engine), so these stores check query shapes, not
 * answers. Inserts into Distributed tables are delivered in the foreground by the engine's default
 * profile here, as Lookout asks a real cluster to per insert (cluster-inserts.test.ts).
 */
export function writeClusterConfig(dir: string): string {
  const file = path.join(dir, 'remote-servers.xml');
  const shard = `<shard><internal_replication>true</internal_replication><replica><host>localhost</host><port>9000</port></replica></shard>`;
  fs.writeFileSync(
    file,
    `<clickhouse>
  <tcp_port>9000</tcp_port>
  <remote_servers><${CLUSTER}>${shard}${shard}</${CLUSTER}></remote_servers>
  <profiles><default><distributed_foreground_insert>1</distributed_foreground_insert></default></profiles>
</clickhouse>
`,
  );
  return file;
}

export interface CheckedStatement {
  sql: string;
  error: string | null;
}

/**
 * The store a clustered Lookout uses (CLICKHOUSE_CLUSTER set: queries and inserts name the
 * Distributed tables), on chdb. Every read any module sends through the SQL layer is first run as
 * `EXPLAIN` (the same statement, without its lane settings); each outcome is recorded in `checked`.
 */
export async function openClusterChdb(dataDir: string): Promise<{ store: ClickHouseStore; checked: CheckedStatement[]; close(): Promise<void> }> {
  const config = writeClusterConfig(dataDir);
  // The engine reads its configuration when the first connection to a data directory opens; the
  // store's connections below join that engine.
  fs.mkdirSync(path.join(dataDir, 'clickhouse'), { recursive: true });
  const session = new Session(path.join(dataDir, 'clickhouse'), { connectionArgs: [`--config-file=${config}`] });
  // Opened without a cluster name: chdb has no Keeper for CREATE DATABASE … ON CLUSTER.
  const plain = await openClickHouse({ url: null, user: '', password: '', database: 'lookout', cluster: null, dataDir });
  const checked: CheckedStatement[] = [];
  const explain = async (statement: Fragment) => {
    const compiled = compile(statement, plain.binding);
    try {
      const plan = await plain.client.query({
        query: `EXPLAIN ${compiled.sql}`,
        ...(Object.keys(compiled.params).length > 0 ? { query_params: compiled.params } : {}),
        format: 'TabSeparatedRaw',
      });
      await plan.text();
      checked.push({ sql: compiled.sql, error: null });
    } catch (error) {
      checked.push({ sql: compiled.sql, error: (error as Error).message });
    }
  };
  const store: ClickHouseStore = {
    ...plain,
    cluster: CLUSTER,
    read: async (statement, options) => {
      await explain(statement);
      return plain.read(statement, options);
    },
  };
  return {
    store,
    checked,
    async close() {
      await plain.close();
      session.close();
    },
  };
}
