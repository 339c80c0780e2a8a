import { execFile, execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { migrationDirs } from '../../src/app/service.js';
import { projectRoot } from '../../src/app/project-root.js';
import { readMigrations } from '../../src/platform/migrations.js';

const run = promisify(execFile);

/**
 * Embedded stores with every migration applied, made once per test run and copied into each new
 * service's data directory, so a test file starts from the schema instead of running initdb and
 * every migration of both stores again (each file forks a process of its own, and a hundred of
 * them start a service). A copy is what a restarted service finds: PostgreSQL shut down cleanly
 * with every file of sql/ recorded, ClickHouse's `lookout` database with every file of clickhouse/
 * recorded, and nothing else — the service still bootstraps its tenant, and a migration file not
 * in the copy is applied as usual.
 *
 * The template lives under the run's temporary root (test/global-setup.ts), named by a hash of the
 * migration files. The first process that needs it builds it (migrated-stores-main.ts, a process of
 * its own: chdb allows one engine per process) while holding a lock directory, and publishes it
 * with a rename; the others wait for it, so a loaded runner builds it once. When no template comes
 * (no run root: a test started outside vitest's global setup; a failed build; a wait past
 * TEMPLATE_WAIT_MS) nothing is copied and the service starts cold, as it would without this.
 *
 * `postgres` / `clickhouse`: which store the service keeps under `dataDir` (not with DATABASE_URL,
 * a ClickHouse server, another database name or a store the test opened itself). A store directory
 * that already exists is left alone.
 */
export async function copyMigratedStores(dataDir: string, stores: { postgres: boolean; clickhouse: boolean }): Promise<void> {
  const wanted = (['postgres', 'clickhouse'] as const).filter((store) => stores[store] && !fs.existsSync(path.join(dataDir, store)));
  if (wanted.length === 0) return;
  const template = await migratedTemplate();
  if (!template) return;
  fs.mkdirSync(dataDir, { recursive: true });
  // -a keeps owner and modes: as root the PostgreSQL cluster belongs to the unprivileged `postgres`
  // user, and PostgreSQL refuses a data directory that another user owns or others can read.
  for (const store of wanted) execFileSync('cp', ['-a', path.join(template, store), path.join(dataDir, store)]);
}

function templateKey(): string {
  const hash = crypto.createHash('sha256');
  for (const dir of [migrationDirs.postgres, migrationDirs.clickhouse]) {
    for (const file of readMigrations(dir)) hash.update(file.name).update('\0').update(file.text).update('\0');
  }
  return hash.digest('hex').slice(0, 16);
}

/** How long a process waits for another one's build before it starts its stores cold. */
const TEMPLATE_WAIT_MS = 150_000;

async function migratedTemplate(): Promise<string | null> {
  const root = process.env.LOOKOUT_TEST_TMP_ROOT;
  if (!root) return null;
  const key = templateKey();
  const published = path.join(root, `stores-${key}`);
  if (fs.existsSync(published)) return published;
  const failed = path.join(root, `stores-${key}.failed`);
  if (fs.existsSync(failed)) return null;
  const lock = path.join(root, `stores-${key}.lock`);
  try {
    fs.mkdirSync(lock);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    return waitFor(published, lock);
  }
  const building = fs.mkdtempSync(path.join(root, `stores-${key}-building-`));
  try {
    fs.chmodSync(building, 0o755);
    await run(process.execPath, ['--import', 'tsx', path.join(projectRoot, 'test', 'helpers', 'migrated-stores-main.ts'), building], { cwd: projectRoot, timeout: TEMPLATE_WAIT_MS });
    // A PostgreSQL that was not shut down cleanly (killed after its grace) would hand every copy a crash recovery.
    if (fs.existsSync(path.join(building, 'postgres', 'postmaster.pid'))) throw new Error('the template PostgreSQL did not shut down cleanly');
    fs.renameSync(building, published);
    return published;
  } catch {
    // The builder's PostgreSQL outlives a builder that was killed at its time limit.
    stopPostmaster(path.join(building, 'postgres'));
    // Not tried again in this run: every later service starts cold.
    fs.writeFileSync(failed, '');
    return null;
  } finally {
    // Gone lock, nothing published: the waiters start cold too.
    fs.rmSync(lock, { recursive: true, force: true });
  }
}

function stopPostmaster(cluster: string): void {
  try {
    const pid = Number(fs.readFileSync(path.join(cluster, 'postmaster.pid'), 'utf8').split('\n')[0]);
    if (Number.isInteger(pid) && pid > 1) process.kill(pid, 'SIGKILL');
  } catch {
    // none running
  }
}

async function waitFor(published: string, lock: string): Promise<string | null> {
  const deadline = Date.now() + TEMPLATE_WAIT_MS;
  while (Date.now() < deadline) {
    if (fs.existsSync(published)) return published;
    if (!fs.existsSync(lock)) return fs.existsSync(published) ? published : null;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return null;
}
