import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * A fresh data directory. It is made world-traversable because embedded PostgreSQL, run as root,
 * initialises its cluster as the unprivileged `postgres` user.
 */
export function tempDataDir(prefix = 'lookout-test-'): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  fs.chmodSync(dir, 0o755);
  return dir;
}
