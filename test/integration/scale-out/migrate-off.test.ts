import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/app/config.js';
import { migrationDirs, startService } from '../../../src/app/service.js';
import { projectRoot } from '../../../src/app/project-root.js';
import { readMigrations } from '../../../src/platform/migrations.js';
import { removeDir } from '../../helpers/service.js';
import { tempDataDir } from '../../helpers/temp-dir.js';

// Operators who migrate as a separate step run `npm run admin -- migrate` and start the service with
// LOOKOUT_MIGRATE=off. Its own file: chdb binds one data directory per process.
const run = promisify(execFile);
const dirs: string[] = [];
afterAll(() => dirs.forEach(removeDir));

describe('LOOKOUT_MIGRATE=off', () => {
  it('with LOOKOUT_MIGRATE off, refuses to start while migrations are pending and starts once `admin migrate` ran', async () => {
    const dataDir = tempDataDir('lookout-migrate-off-');
    dirs.push(dataDir);
    // Embedded stores belong to one process at a time: the CLI runs and exits before the service opens them.
    const off = loadConfig({ PORT: '0', HOST: '127.0.0.1', OTLP_GRPC_PORT: '0', DATA_DIR: dataDir, LOG_LEVEL: 'silent', METRICS_PORT: '0', LOOKOUT_BOOTSTRAP_KEY: 'lk_migrate_off_bootstrap_0123456789', LOOKOUT_MIGRATE: 'off' });
    await expect(startService(off, { logger: pino({ level: 'silent' }) })).rejects.toThrow(/Migrations pending \(sql\/001_tenancy\.sql, .*clickhouse\/001_spans\.sql.*\) and LOOKOUT_MIGRATE is off: run `npm run admin -- migrate` first/);

    const cli = await run(process.execPath, ['--import', 'tsx', path.join(projectRoot, 'src', 'cli', 'admin.ts'), 'migrate'], {
      cwd: projectRoot,
      env: { ...process.env, DATA_DIR: dataDir, DATABASE_URL: '', CLICKHOUSE_URL: '', LOOKOUT_MIGRATE: 'off' },
    });
    const applied = JSON.parse(cli.stdout) as { postgres: string[]; clickhouse: string[] };
    expect(applied.postgres).toEqual(readMigrations(migrationDirs.postgres).map((f) => f.name));
    expect(applied.clickhouse).toEqual(readMigrations(migrationDirs.clickhouse).map((f) => f.name));

    const service = await startService(off, { logger: pino({ level: 'silent' }) });
    try {
      expect(service.migrations).toBeNull();
      const [{ n }] = await service.deps.sql<{ n: number }[]>`select count(*)::int as n from schema_migrations`;
      expect(n).toBe(applied.postgres.length);
    } finally {
      await service.stop();
    }
  });

});
