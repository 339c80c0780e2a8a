import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/app/config.js';
import { migrationDirs, startService, type RunningService } from '../../../src/app/service.js';
import { openClickHouse, type ClickHouseStore } from '../../../src/platform/clickhouse/clickhouse.js';
import { readMigrations } from '../../../src/platform/migrations.js';
import { openPostgres, type PostgresStore } from '../../../src/platform/postgres/postgres.js';
import { removeDir } from '../../helpers/service.js';
import { tempDataDir } from '../../helpers/temp-dir.js';

// Several Lookout instances in one test process share one PostgreSQL (each with its own pool, by
// URL) and one chdb store (the engine binds one data directory per process), as N processes share a
// PostgreSQL server and a ClickHouse cluster: started together on empty stores, they must
// apply every migration file of both stores exactly once between them.
//
// Four services started on empty stores apply every migration of both stores from the start (the
// migrated template other tests copy is not used here): about 5 s on a quiet machine, more than a
// minute on a loaded 2-core runner, so the start-up and the test have room well past that; nothing
// they assert depends on time.
const LOADED_RUNNER_MS = 300_000;
const dirs: string[] = [];
let pg: PostgresStore;
let ch: ClickHouseStore;

const config = (dataDir: string) =>
  loadConfig({ PORT: '0', HOST: '127.0.0.1', OTLP_GRPC_PORT: '0', DATA_DIR: dataDir, DATABASE_URL: pg.url, LOG_LEVEL: 'silent', METRICS_PORT: '0', LOOKOUT_BOOTSTRAP_KEY: 'lk_scale_out_bootstrap_0123456789' });

beforeAll(async () => {
  const dataDir = tempDataDir('lookout-scale-out-');
  dirs.push(dataDir);
  pg = await openPostgres({ databaseUrl: null, dataDir });
  ch = await openClickHouse({ url: null, user: '', password: '', database: 'lookout', cluster: null, dataDir });
}, LOADED_RUNNER_MS);

afterAll(async () => {
  await ch?.close();
  await pg?.close();
  dirs.forEach(removeDir);
});

describe('migrations across instances', () => {
  it('applies each file of both stores once when N instances start together on empty stores', { timeout: LOADED_RUNNER_MS }, async () => {
    const n = 4;
    const dataDir = dirs[0];
    const started = await Promise.allSettled(
      Array.from({ length: n }, () => startService(config(dataDir), { logger: pino({ level: 'silent' }), clickhouse: ch })),
    );
    const services = started.filter((s): s is PromiseFulfilledResult<RunningService> => s.status === 'fulfilled').map((s) => s.value);
    try {
      // Every instance started (a failed start shows its error here).
      expect(started.map((s) => (s.status === 'fulfilled' ? 'started' : String(s.reason)))).toEqual(Array(n).fill('started'));
      const pgFiles = readMigrations(migrationDirs.postgres).map((f) => f.name);
      const chFiles = readMigrations(migrationDirs.clickhouse).map((f) => f.name);
      // Between them the instances applied every file once: one did the work, the others found it done.
      expect(services.flatMap((s) => s.migrations!.postgres).sort()).toEqual(pgFiles);
      expect(services.flatMap((s) => s.migrations!.clickhouse).sort()).toEqual(chFiles);
      expect(services.filter((s) => s.migrations!.postgres.length > 0)).toHaveLength(1);

      const pgRows = await pg.sql<{ name: string }[]>`select name from schema_migrations order by name`;
      expect(pgRows.map((r) => r.name)).toEqual(pgFiles);
      // Without FINAL: a second record of a file would show here until a merge.
      const chRows = await ch.client.query({ query: `SELECT name FROM ${ch.table('schema_migrations')} ORDER BY name`, format: 'JSONEachRow' });
      expect((await chRows.json<{ name: string }>()).map((r) => r.name)).toEqual(chFiles);
      // One bootstrap tenant, not one per instance.
      const [{ tenants }] = await pg.sql<{ tenants: number }[]>`select count(*)::int as tenants from tenants`;
      expect(tenants).toBe(1);
    } finally {
      await Promise.all(services.map((s) => s.stop()));
    }
    // The instances did not own the shared ClickHouse: it still answers.
    expect(await (await ch.client.query({ query: 'SELECT 1 AS one', format: 'JSONEachRow' })).json()).toEqual([{ one: 1 }]);
  });

  it('reads LOOKOUT_MIGRATE as on by default and rejects values that are not on/off', () => {
    expect(loadConfig({}).migrateOnStart).toBe(true);
    expect(loadConfig({ LOOKOUT_MIGRATE: '0' }).migrateOnStart).toBe(false);
    expect(loadConfig({ LOOKOUT_MIGRATE: 'OFF' }).migrateOnStart).toBe(false);
    expect(loadConfig({ LOOKOUT_MIGRATE: 'on' }).migrateOnStart).toBe(true);
    expect(() => loadConfig({ LOOKOUT_MIGRATE: 'sometimes' })).toThrow(/LOOKOUT_MIGRATE must be on or off/);
  });

  it('reads CLICKHOUSE_INSERT_QUORUM as auto by default, a replica count, and nothing else', () => {
    expect(loadConfig({}).clickhouse.insertQuorum).toBe('auto');
    expect(loadConfig({ CLICKHOUSE_INSERT_QUORUM: '2' }).clickhouse.insertQuorum).toBe('2');
    expect(() => loadConfig({ CLICKHOUSE_INSERT_QUORUM: 'majority; DROP' })).toThrow(/CLICKHOUSE_INSERT_QUORUM must be auto or a number/);
  });
});
