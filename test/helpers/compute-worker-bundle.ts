import fs from 'node:fs';
import path from 'node:path';
import * as esbuild from 'esbuild';
import { projectRoot } from '../../src/app/project-root.js';

/** The environment variable that hands the run's bundle to the test processes (they fork after global setup). */
const ENV = 'LOOKOUT_TEST_COMPUTE_WORKER';

/**
 * Bundles src/app/compute-worker.ts (the compute workers' entry, with the service's task modules)
 * into one ES module for this run, so a test service's worker starts in ~0.4 s of CPU instead of the
 * ~1.3 s the tsx shim takes to compile those modules in each new thread — a run starts some 180
 * services. Packages stay imports: the file sits under the project's node_modules so that Node
 * resolves them (and the modules' own lookups, the proto files above them, work) as from src/.
 * Built from the source at the start of every run, so it is never older than the code under test.
 * Returns a function that removes it.
 */
export async function buildComputeWorkerBundle(runId: string): Promise<() => void> {
  const file = path.join(projectRoot, 'node_modules', '.cache', 'lookout-test', `compute-worker-${runId}.mjs`);
  await esbuild.build({
    entryPoints: [path.join(projectRoot, 'src', 'app', 'compute-worker.ts')],
    outfile: file,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    logLevel: 'warning',
  });
  process.env[ENV] = file;
  return () => fs.rmSync(file, { force: true });
}

/** The run's bundled compute worker, when global setup built one (undefined outside a vitest run). */
export function testComputeWorkerFile(): string | undefined {
  return process.env[ENV] || undefined;
}
