import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeDir, spawnService, type SpawnedService } from '../../helpers/service.js';
import { tempDataDir } from '../../helpers/temp-dir.js';

const run = promisify(execFile);

// `npm start` on an empty DATA_DIR, as the README's first hour runs it: the key is generated and
// printed once with commands to paste; those commands work as printed.
let svc: SpawnedService;
let dataDir: string;

beforeAll(async () => {
  dataDir = tempDataDir();
  svc = await spawnService(dataDir, { LOOKOUT_BOOTSTRAP_KEY: '' });
}, 120_000);

afterAll(async () => {
  await svc?.stop();
  if (dataDir) removeDir(dataDir);
});

describe('the first start', () => {
  it('prints the generated key once with commands that work when pasted', async () => {
    const lines = svc.output().split('\n').map((l) => l.trim());
    const exportLine = lines.find((l) => l.startsWith('export LOOKOUT_API_KEY='));
    expect(exportLine).toMatch(/^export LOOKOUT_API_KEY=lk_\S+$/);
    const key = exportLine!.split('=')[1];
    expect(lines.find((l) => l.startsWith('Created tenant'))).toContain(key);
    const curl = lines.find((l) => l.startsWith('curl '));
    expect(curl).toBeDefined();
    const { PATH, HOME } = process.env;
    const { stdout } = await run('bash', ['-c', `${exportLine}; ${curl!.replace(/^curl /, `curl -sS -o /dev/null -w '%{http_code}' `)}`], { env: { PATH: PATH ?? '', HOME: HOME ?? '' } });
    expect(Number(stdout.trim())).toBe(200);
  });

  it('says where the dashboard and the API reference are', async () => {
    const serving = svc.output().split('\n').find((l) => l.startsWith('Lookout is serving:'));
    const urls = [...(serving ?? '').matchAll(/http:\/\/localhost:\d+\/\S*/g)].map((m) => m[0]);
    expect(urls.length).toBe(3);
    const [dashboard, reference] = urls;
    expect(dashboard).toMatch(/\/$/);
    expect(reference).toMatch(/\/api\/docs$/);
    for (const url of [dashboard, reference]) {
      const res = await fetch(url.replace('localhost', '127.0.0.1'), { headers: { accept: 'text/html' } });
      // The dashboard answers 503 with a "run npm run build" page when dist/web is missing; either is HTML.
      expect([200, 503]).toContain(res.status);
      expect(res.headers.get('content-type')).toMatch(/text\/html/);
    }
  });
});
