import fs from 'node:fs';
import path from 'node:path';
import { createClient, type ClickHouseClient } from '@clickhouse/client';
import { createChdbConnection } from 'chdb/connection';

export interface ClickHouseStore {
  client: ClickHouseClient;
  /** The database every Lookout table lives in; table names are always qualified with it. */
  database: string;
  /** Set when the store is a cluster: migrations add ON CLUSTER and Replicated engines. */
  cluster: string | null;
  embedded: boolean;
  /** A fully qualified, quoted table name. `name` comes from code, never from callers. */
  table(name: string): string;
  close(): Promise<void>;
}

export interface ClickHouseOptions {
  url: string | null;
  user: string;
  password: string;
  database: string;
  cluster: string | null;
  dataDir: string;
}

/**
 * Opens ClickHouse: the server at CLICKHOUSE_URL, else chdb's in-process engine plugged into the
 * same @clickhouse/client. chdb ignores the client's `database` option, so every statement names
 * its database explicitly instead.
 */
export async function openClickHouse(options: ClickHouseOptions): Promise<ClickHouseStore> {
  let client: ClickHouseClient;
  if (options.url) {
    client = createClient({
      url: options.url,
      username: options.user,
      password: options.password,
      request_timeout: 60_000,
      clickhouse_settings: { date_time_input_format: 'best_effort' },
    });
  } else {
    const dir = path.join(options.dataDir, 'clickhouse');
    fs.mkdirSync(dir, { recursive: true });
    // chdb re-exports the Connection type from @clickhouse/client-common, a structurally identical twin
    // of the one @clickhouse/client now bundles; the cast bridges the two declarations.
    const connection = createChdbConnection({ path: dir }) as unknown as NonNullable<Parameters<typeof createClient>[0]>['connection'];
    client = createClient({ connection });
  }
  const database = options.database;
  await client.command({
    query: `CREATE DATABASE IF NOT EXISTS \`${database}\`${options.cluster ? ` ON CLUSTER \`${options.cluster}\`` : ''}`,
  });
  return {
    client,
    database,
    cluster: options.cluster,
    embedded: !options.url,
    table: (name: string) => `\`${database}\`.\`${name}\``,
    close: () => client.close(),
  };
}
