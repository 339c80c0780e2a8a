import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildComputeWorkerBundle } from './helpers/compute-worker-bundle.js';

/**
 * One temporary root per test run: every test process (they are forks started after this runs, so
 * they inherit TMPDIR) makes its embedded stores under it, and the run removes it at the end.
 * Vitest stops its forks with SIGTERM, so a fork's own exit handlers never run; without this a
 * suite run left ~15 GB of PostgreSQL and ClickHouse data in the temp directory.
 *
 * The root is removed asynchronously: vitest runs this teardown while it is still stopping the last
 * test forks, and a synchronous removal of a whole run's data (many GB) blocked its event loop for
 * longer than its 10 s teardown bound, so the last fork was reported as timing out ("Timeout
 * terminating forks worker") whatever that file did.
 *
 * It also bundles the compute workers' entry for the run's test services (compute-worker-bundle.ts).
 *
 * Each vitest project runs this: only the first call makes the root, and its name stays short —
 * Chromium puts a Unix socket under TMPDIR, and a socket path has a limit of 107 bytes.
 */
export default async function setup(): Promise<() => Promise<void>> {
  if (process.env.LOOKOUT_TEST_TMP_ROOT) return async () => {};
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'lk-'));
  fs.chmodSync(root, 0o755);
  process.env.LOOKOUT_TEST_TMP_ROOT = root;
  process.env.TMPDIR = root;
  const removeBundle = await buildComputeWorkerBundle(path.basename(root));
  return async () => {
    removeBundle();
    // Retried: the `server` project's ClickHouse server may still be writing its system logs under
    // the root while its own teardown stops it (a removal then fails with ENOTEMPTY).
    await fs.promises.rm(root, { recursive: true, force: true, maxRetries: 10, retryDelay: 500 });
  };
}
