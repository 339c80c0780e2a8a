import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../../src/app/project-root.js';
import { ENGINE_DIRTY_DECAY_MS } from '../../../src/platform/clickhouse/engine-allocator.js';

// The engine reads its allocator options once per process, when its library loads; this test
// process may have loaded it already, so each case runs in a fresh process that reports the option
// the engine's allocator runs with (its own statistics, system.jemalloc_stats).
const run = promisify(execFile);
const clickhouseModule = path.join(projectRoot, 'src', 'platform', 'clickhouse', 'clickhouse.ts');

async function engineDirtyDecayMs(options: { throughStore: boolean; conf?: string }): Promise<number> {
  const script = `
    ${options.throughStore ? `await import(${JSON.stringify(clickhouseModule)});` : ''}
    const { createRequire } = await import('node:module');
    const { query } = createRequire(${JSON.stringify(path.join(projectRoot, 'package.json'))})('chdb');
    const stats = String(query('SELECT * FROM system.jemalloc_stats', 'TSVRaw'));
    process.stdout.write(/opt\\.dirty_decay_ms: (\\d+)/.exec(stats)?.[1] ?? 'none');
  `;
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.JE_MALLOC_CONF;
  if (options.conf) env.JE_MALLOC_CONF = options.conf;
  const { stdout } = await run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: projectRoot, env });
  return Number(stdout);
}

describe('the in-process engine\'s allocator', () => {
  it('returns freed pages within ENGINE_DIRTY_DECAY_MS once the store module loaded the engine, not the library\'s 5 s', async () => {
    expect(await engineDirtyDecayMs({ throughStore: true })).toBe(ENGINE_DIRTY_DECAY_MS);
    // Loaded without the store module, the engine keeps its library default: the setting above is ours.
    expect(await engineDirtyDecayMs({ throughStore: false })).toBe(5000);
  }, 60_000);

  it('keeps an operator\'s own JE_MALLOC_CONF', async () => {
    expect(await engineDirtyDecayMs({ throughStore: true, conf: 'dirty_decay_ms:250' })).toBe(250);
  }, 60_000);
});
