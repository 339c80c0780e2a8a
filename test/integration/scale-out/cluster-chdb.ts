import fs from 'node:fs';
import path from 'node:path';
import type { ClickHouseClient } from '@clickhouse/client';
import { Session } from 'chdb';
import { clusterInsertSettings } from '../../../src/stores/clickhouse-layout.js';
import { durableClusterInserts, openClickHouse, type ClickHouseStore } from '../../../src/stores/clickhouse.js';

export const CLUSTER = 'lookout_cluster';

/**
 * chdb started with a `remote_servers` config naming a two-shard cluster. Both shards point at this
 * engine itself (localhost on the configured tcp_port is a local replica), so Distributed tables
 * plan and run without a network, and ClickHouse applies its distributed-query rules exactly as on a
 * real cluster: a double-distributed IN/JOIN subquery is refused (code 288), GLOBAL is planned.
 * Every row reads twice (each shard is the same engine), so these stores check query shapes, not
 * answers.
 */
export function writeClusterConfig(dir: string): string {
  const file = path.join(dir, 'remote-servers.xml');
  const shard = `<shard><internal_replication>true</internal_replication><replica><host>localhost</host><port>9000</port></replica></shard>`;
  fs.writeFileSync(
    file,
    `<clickhouse>\n  <tcp_port>9000</tcp_port>\n  <remote_servers><${CLUSTER}>${shard}${shard}</${CLUSTER}></remote_servers>\n</clickhouse>\n`,
  );
  return file;
}

export interface CheckedStatement {
  sql: string;
  error: string | null;
}

/**
 * The store a clustered Lookout uses (CLICKHOUSE_CLUSTER set, inserts through the Distributed
 * tables with foreground delivery), on chdb. Every SELECT any module sends is first run as
 * `EXPLAIN` with the same parameters and settings; each outcome is recorded in `checked`.
 */
export async function openClusterChdb(dataDir: string): Promise<{ store: ClickHouseStore; checked: CheckedStatement[]; close(): Promise<void> }> {
  const config = writeClusterConfig(dataDir);
  // The engine reads its configuration when the first connection to a data directory opens; the
  // client's connection below joins that engine.
  fs.mkdirSync(path.join(dataDir, 'clickhouse'), { recursive: true });
  const session = new Session(path.join(dataDir, 'clickhouse'), { connectionArgs: [`--config-file=${config}`] });
  const plain = await openClickHouse({ url: null, user: '', password: '', database: 'lookout', cluster: null, dataDir });
  const checked: CheckedStatement[] = [];
  const client = explainEverySelect(durableClusterInserts(plain.client, clusterInsertSettings(null)), checked);
  return {
    store: { ...plain, client, cluster: CLUSTER },
    checked,
    async close() {
      await plain.close();
      session.close();
    },
  };
}

type QueryParams = Parameters<ClickHouseClient['query']>[0];

function explainEverySelect(client: ClickHouseClient, checked: CheckedStatement[]): ClickHouseClient {
  return new Proxy(client, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (property === 'query') {
        return async (params: QueryParams) => {
          if (/^\s*(SELECT|WITH)\b/i.test(params.query)) {
            try {
              const plan = await target.query({ ...params, query: `EXPLAIN ${params.query}`, format: 'TabSeparatedRaw' });
              await plan.text();
              checked.push({ sql: params.query, error: null });
            } catch (error) {
              const message = (error as Error).message;
              // The statement's own SETTINGS (max_result_rows) also bound the plan's text lines: the
              // plan was built, so the shape was accepted.
              checked.push({ sql: params.query, error: /Limit for result exceeded/.test(message) ? null : message });
            }
          }
          return target.query(params);
        };
      }
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
