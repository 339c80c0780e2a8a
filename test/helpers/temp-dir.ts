import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** Directories made by this test process; removed when it exits (each test file runs in its own fork). */
const made: string[] = [];
let cleanupRegistered = false;

function removeMadeDirs(): void {
  for (const dir of made) fs.rmSync(dir, { recursive: true, force: true });
}

/**
 * A fresh data directory, removed when the test process exits: a whole suite's embedded stores
 * left behind in the temp directory fill a disk after a few dozen runs. It is made
 * world-traversable because embedded PostgreSQL, run as root, initialises its cluster as the
 * unprivileged `postgres` user.
 */
export function tempDataDir(prefix = 'lookout-test-'): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  fs.chmodSync(dir, 0o755);
  made.push(dir);
  if (!cleanupRegistered) {
    cleanupRegistered = true;
    process.on('exit', removeMadeDirs);
  }
  return dir;
}
