import type { TestProject } from 'vitest/node';
import { startClickHouseServer, type ClickHouseServer } from './helpers/clickhouse-server/clickhouse-server.js';

/**
 * The `server` project's one real ClickHouse server (test/helpers/clickhouse-server/), shared by its
 * test files: each file's services and stores use databases of their own data directory on it
 * (test/helpers/test-clickhouse.ts). Its address reaches the test processes through provide/inject
 * (test/server-setup.ts), not the environment, so the other projects keep the embedded engine.
 */
declare module 'vitest' {
  export interface ProvidedContext {
    clickhouseServer: { url: string; user: string; password: string };
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const server: ClickHouseServer = await startClickHouseServer();
  project.provide('clickhouseServer', { url: server.url, user: server.user, password: server.password });
  return () => server.stop();
}
