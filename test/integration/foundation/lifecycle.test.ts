import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../../src/app/project-root.js';
import { migrateClickHouse, migratePostgres } from '../../../src/platform/migrations.js';
import { copyMigratedStores } from '../../helpers/migrated-stores.js';
import { BOOTSTRAP_KEY, removeDir, spawnService, startTestService } from '../../helpers/service.js';
import { tempDataDir } from '../../helpers/temp-dir.js';

const run = promisify(execFile);
const dirs: string[] = [];
afterAll(() => dirs.forEach(removeDir));

async function get(url: string, key: string) {
  const res = await fetch(url, { headers: { authorization: `Bearer ${key}` } });
  return { status: res.status, body: await res.json() };
}

describe('service lifecycle', () => {
  it('re-runs migrations as no-ops and keeps every project and key across a restart on the same DATA_DIR', async () => {
    const dataDir = tempDataDir();
    dirs.push(dataDir);
    const first = await startTestService({}, dataDir);
    const project = await first.newProject('survives');
    const readKey = await first.newKey('read');
    const deps = first.service.deps;
    expect(await migratePostgres(deps.sql, path.join(projectRoot, 'sql'))).toEqual([]);
    expect(await migrateClickHouse(deps.ch, path.join(projectRoot, 'clickhouse'))).toEqual([]);
    const [{ n: pgMigrations }] = await deps.sql<{ n: number }[]>`select count(*)::int as n from schema_migrations`;
    await first.stop();

    // No bootstrap key this time: an existing tenant must not be bootstrapped again.
    const second = await startTestService({ LOOKOUT_BOOTSTRAP_KEY: '' }, dataDir);
    try {
      expect(second.service.bootstrap).toBeNull();
      const [{ n }] = await second.service.deps.sql<{ n: number }[]>`select count(*)::int as n from schema_migrations`;
      expect(n).toBe(pgMigrations);
      const listed = await get(`${second.api}/projects`, readKey);
      expect(listed.status).toBe(200);
      expect(listed.body.projects.map((p: { id: string }) => p.id)).toEqual([project.id]);
      expect((await get(`${second.api}/projects`, BOOTSTRAP_KEY)).status).toBe(200);
      const [{ tenants }] = await second.service.deps.sql<{ tenants: number }[]>`select count(*)::int as tenants from tenants`;
      expect(tenants).toBe(1);
    } finally {
      await second.stop();
    }
  });

  it('prints a random admin key once on first start, and shuts down cleanly on SIGTERM', async () => {
    const dataDir = tempDataDir();
    dirs.push(dataDir);
    const service = await spawnService(dataDir, { LOOKOUT_BOOTSTRAP_KEY: '' });
    const printed = /admin API key: (lk_\S+)/.exec(service.output());
    expect(printed).not.toBeNull();
    const key = printed![1];
    expect((await get(`${service.url}/api/projects`, key)).status).toBe(200);
    // (Log redaction of the Authorization header is pinned in test/integration/security/secrets.test.ts.)
    expect(await service.stop()).toBe(0);

    const again = await spawnService(dataDir, { LOOKOUT_BOOTSTRAP_KEY: '' });
    try {
      expect(again.output()).not.toMatch(/admin API key/);
      expect((await get(`${again.url}/api/projects`, key)).status).toBe(200);
    } finally {
      expect(await again.stop()).toBe(0);
    }
  });

  // Four CLI processes and a service each open the stores: a minute or more on a loaded runner.
  it('creates tenants, users and keys from the admin CLI', { timeout: 180_000 }, async () => {
    const dataDir = tempDataDir();
    dirs.push(dataDir);
    // An installed deployment's stores, migrated (services starting on empty stores: migrations-once.test.ts).
    await copyMigratedStores(dataDir, { postgres: true, clickhouse: true });
    const cli = (...args: string[]) =>
      run(process.execPath, ['--import', 'tsx', path.join(projectRoot, 'src/cli/admin.ts'), ...args], {
        cwd: projectRoot,
        env: { ...process.env, DATA_DIR: dataDir },
      });
    const tenant = JSON.parse((await cli('create-tenant', '--name', 'cli-co')).stdout);
    expect(tenant.tenant.name).toBe('cli-co');
    const user = JSON.parse((await cli('create-user', '--tenant', tenant.tenant.id, '--name', 'Grace')).stdout);
    const key = JSON.parse((await cli('create-key', '--tenant', tenant.tenant.id, '--name', 'ci', '--scope', 'read', '--user', user.id)).stdout);
    expect(key.key).toMatch(/^lk_/);
    await expect(cli('create-key', '--tenant', tenant.tenant.id, '--name', 'x', '--scope', 'root')).rejects.toThrow(/valid --scope/);

    const service = await startTestService({}, dataDir);
    try {
      expect((await get(`${service.api}/projects`, key.key)).status).toBe(200);
      expect((await get(`${service.api}/projects`, tenant.admin_key)).body).toEqual({ projects: [] });
    } finally {
      await service.stop();
    }
  });
});
