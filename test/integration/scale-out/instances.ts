import { openClickHouse, type ClickHouseStore } from '../../../src/platform/clickhouse/clickhouse.js';
import { openPostgres, type PostgresStore } from '../../../src/platform/postgres/postgres.js';
import { copyMigratedStores } from '../../helpers/migrated-stores.js';
import { removeDir, startTestService, type TestService } from '../../helpers/service.js';
import { tempDataDir } from '../../helpers/temp-dir.js';

/**
 * Several Lookout instances in one test process, as a scale-out deployment runs them on several
 * machines: one PostgreSQL server (embedded, reached by URL, so each instance has its own pool,
 * its own LISTEN connection and its own advisory-lock sessions) and one ClickHouse. chdb binds one
 * data directory per process, so the instances share one opened store instead of each opening it.
 */
export interface SharedStores {
  pg: PostgresStore;
  ch: ClickHouseStore;
  start(env?: Record<string, string>): Promise<TestService>;
  close(): Promise<void>;
}

export async function openSharedStores(): Promise<SharedStores> {
  const dataDir = tempDataDir('lookout-scale-');
  // Both stores start migrated, as a service's own would (test/helpers/migrated-stores.ts); a ClickHouse server has its own.
  await copyMigratedStores(dataDir, { postgres: true, clickhouse: !process.env.CLICKHOUSE_URL });
  const pg = await openPostgres({ databaseUrl: null, dataDir });
  const ch = await openClickHouse({ url: process.env.CLICKHOUSE_URL ?? null, user: 'default', password: '', database: 'lookout', cluster: null, dataDir });
  const started: TestService[] = [];
  const instanceDirs: string[] = [];
  return {
    pg,
    ch,
    async start(env = {}) {
      const dir = tempDataDir('lookout-instance-');
      instanceDirs.push(dir);
      const svc = await startTestService({ DATABASE_URL: pg.url, ...env }, dir, { clickhouse: ch });
      started.push(svc);
      return svc;
    },
    async close() {
      await ch.close();
      await pg.close();
      removeDir(dataDir);
      instanceDirs.forEach(removeDir);
    },
  };
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
