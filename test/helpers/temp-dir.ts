import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * A fresh data directory under the run's temporary root (test/global-setup.ts removes it when the
 * run ends). It is made world-traversable because embedded PostgreSQL, run as root, initialises its
 * cluster as the unprivileged `postgres` user.
 */
export function tempDataDir(prefix = 'lookout-test-'): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  fs.chmodSync(dir, 0o755);
  return dir;
}
