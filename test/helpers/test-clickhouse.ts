import crypto from 'node:crypto';
import { openClickHouse, type ClickHouseOptions, type ClickHouseStore } from '../../src/platform/clickhouse/clickhouse.js';

/**
 * Where a test's ClickHouse lives. By default the embedded engine in the test's data directory. In
 * the `server` test project (vitest.config.ts) CLICKHOUSE_URL names one shared real server for the
 * run; every data directory then gets databases of its own on it (the name suffixed with a hash of
 * the directory), so test files, and services a test restarts on the same directory, see exactly
 * the data they would see in their own embedded engine.
 */
export function serverDatabase(database: string, dataDir: string): string {
  if (!process.env.CLICKHOUSE_URL) return database;
  return `${database}_${crypto.createHash('sha256').update(dataDir).digest('hex').slice(0, 12)}`;
}

/** The env a service started on `dataDir` needs to reach the run's server (empty on the embedded engine). */
export function serverEnv(dataDir: string, database = 'lookout'): Record<string, string> {
  if (!process.env.CLICKHOUSE_URL) return {};
  return {
    CLICKHOUSE_URL: process.env.CLICKHOUSE_URL,
    CLICKHOUSE_USER: process.env.CLICKHOUSE_USER ?? 'default',
    CLICKHOUSE_PASSWORD: process.env.CLICKHOUSE_PASSWORD ?? '',
    CLICKHOUSE_DATABASE: serverDatabase(database, dataDir),
  };
}

/** Opens the test's ClickHouse: the run's server when there is one, else the embedded engine in `dataDir`. */
export async function openTestClickHouse(options: { database: string; dataDir: string } & Partial<ClickHouseOptions>): Promise<ClickHouseStore> {
  const url = process.env.CLICKHOUSE_URL ?? null;
  return openClickHouse({
    user: url ? (process.env.CLICKHOUSE_USER ?? 'default') : '',
    password: url ? (process.env.CLICKHOUSE_PASSWORD ?? '') : '',
    cluster: null,
    ...options,
    url,
    database: serverDatabase(options.database, options.dataDir),
  });
}
