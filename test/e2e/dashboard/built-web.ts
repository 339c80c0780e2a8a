import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../../../src/app/project-root.js';

const SCRIPT = path.join(projectRoot, 'scripts', 'build-web.mjs');

/** Every file under `dir`, in a stable order. */
function filesUnder(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .sort((a, b) => (a.name < b.name ? -1 : 1))
    .flatMap((entry) => (entry.isDirectory() ? filesUnder(path.join(dir, entry.name)) : [path.join(dir, entry.name)]));
}

/** A hash of what the build reads: the dashboard's sources and the build scripts. */
function sourcesKey(): string {
  const hash = crypto.createHash('sha256');
  for (const file of [...filesUnder(path.join(projectRoot, 'web')), SCRIPT, path.join(projectRoot, 'scripts', 'favicon.mjs')]) {
    hash.update(path.relative(projectRoot, file)).update('\0').update(fs.readFileSync(file)).update('\0');
  }
  return hash.digest('hex').slice(0, 16);
}

/**
 * Builds the dashboard into dist/web (scripts/build-web.mjs), which the test services serve, once
 * per test run and web sources: each browser test file runs in its own process and calls this
 * before it starts, and only the first one to find no build of the current sources in the run's
 * temporary root (test/global-setup.ts) builds. Two files that start together may both build;
 * the script writes every file atomically for exactly that. A file run outside vitest's global
 * setup always builds.
 */
export function buildWebOnce(): void {
  const root = process.env.LOOKOUT_TEST_TMP_ROOT;
  const marker = root ? path.join(root, `web-built-${sourcesKey()}`) : null;
  if (marker && fs.existsSync(marker) && fs.existsSync(path.join(projectRoot, 'dist', 'web', 'index.html'))) return;
  execFileSync(process.execPath, [SCRIPT], { cwd: projectRoot, stdio: 'pipe' });
  if (marker) fs.writeFileSync(marker, '');
}
