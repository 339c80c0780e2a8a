/**
 * Run as a process of its own (chdb allows one engine per process) by migrated-stores.ts: opens the
 * embedded PostgreSQL and ClickHouse under the data directory given as the only argument, applies
 * every migration of both, and closes them (PostgreSQL shut down cleanly).
 */
import { migrationDirs } from '../../src/app/service.js';
import { openClickHouse } from '../../src/platform/clickhouse/clickhouse.js';
import { migrateClickHouse, migratePostgres } from '../../src/platform/migrations.js';
import { openPostgres } from '../../src/platform/postgres/postgres.js';

const dataDir = process.argv[2];
if (!dataDir) throw new Error('usage: migrated-stores-main.ts DATA_DIR');
const pg = await openPostgres({ databaseUrl: null, dataDir });
try {
  const ch = await openClickHouse({ url: null, user: '', password: '', database: 'lookout', cluster: null, dataDir });
  try {
    await migratePostgres(pg.sql, migrationDirs.postgres);
    await migrateClickHouse(ch, migrationDirs.clickhouse);
  } finally {
    await ch.close();
  }
} finally {
  await pg.close();
}
