import { execFile } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../../src/app/project-root.js';
import { removeDir, startTestService, type TestService } from '../../helpers/service.js';
import { serverEnv } from '../../helpers/test-clickhouse.js';
import { tempDataDir } from '../../helpers/temp-dir.js';
import { testProviders } from '../../unit/cost/test-catalog.js';
import { at, seedGenerations, seedTraces, type Scope } from '../cost/seed.js';

const run = promisify(execFile);

/** A stand-in for PRICES_REFRESH_URL serving the test catalog in the package's data format. */
let prices: http.Server;
let service: TestService;
const dirs: string[] = [];

beforeAll(async () => {
  prices = http.createServer((_req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify(testProviders()));
  });
  await new Promise<void>((resolve) => prices.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(prices.address() as AddressInfo).port}/data.json`;
  service = await startTestService({ PRICES_REFRESH_URL: url });
  dirs.push(service.dataDir);
  const book = service.service.deps.services.priceBook!;
  for (let i = 0; i < 100 && book.current()?.source !== 'refresh'; i++) await new Promise((r) => setTimeout(r, 50));
});

afterAll(async () => {
  await service?.stop();
  await new Promise((resolve) => prices.close(resolve));
  dirs.forEach(removeDir);
});

describe('POST /api/admin/backfill-costs', () => {
  it('prices the tenant’s unbackfilled rows with the refreshed catalog, admin scope only', async () => {
    const ch = service.service.deps.ch;
    const tenantId = service.service.bootstrap!.tenantId;
    const project = await service.newProject('costs');
    const scope: Scope = { tenantId, projectId: project.id };
    const [traceId] = await seedTraces(ch, scope, [{ timestamp: at(0, '10:00:00'), inputTokens: 1000, outputTokens: 500, basis: 'unavailable' }]);
    await seedGenerations(ch, scope, [{ traceId, timestamp: at(0, '10:00:00'), model: 'gpt-test', provider: 'openai', input: 1000, cached: 400, output: 500 }]);
    const foreign: Scope = { tenantId: 'another-tenant', projectId: project.id };
    const [foreignTrace] = await seedTraces(ch, foreign, [{ timestamp: at(0, '10:00:00'), inputTokens: 1, outputTokens: 0, basis: 'unavailable' }]);

    const readKey = await service.newKey('read');
    expect((await service.call('POST', '/admin/backfill-costs', { key: readKey, body: {} })).status).toBe(403);
    const other = await service.newTenant('elsewhere');
    const hidden = await service.call('POST', '/admin/backfill-costs', { key: other.adminKey, body: { project_id: project.id } });
    expect(hidden.status).toBe(404);

    const res = await service.call('POST', '/admin/backfill-costs', { body: { project_id: project.id } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ scanned: 1, rewritten: 1, without_generations: 0 });

    const rows = await (await ch.client.query({
      query: `SELECT trace_id, estimated_cost_basis, estimated_cost_usd FROM ${ch.table('event_trace_processed')} FINAL WHERE trace_id IN {ids:Array(String)} ORDER BY trace_id`,
      query_params: { ids: [traceId, foreignTrace] },
      format: 'JSONEachRow',
    })).json<{ trace_id: string; estimated_cost_basis: string; estimated_cost_usd: number | null }>();
    const byId = Object.fromEntries(rows.map((r) => [r.trace_id, r]));
    // test catalog: 600 × $2 + 400 × $0.5 + 500 × $8 per million = $0.0054
    expect(byId[traceId]).toMatchObject({ estimated_cost_basis: 'stored', estimated_cost_usd: 0.0054 });
    expect(byId[foreignTrace].estimated_cost_basis).toBe('unavailable');
  });
});

describe('npm run admin -- backfill-costs', () => {
  it('is a registered admin command that runs against the configured stores', async () => {
    const dataDir = tempDataDir();
    dirs.push(dataDir);
    const { stdout } = await run(process.execPath, ['--import', 'tsx', path.join(projectRoot, 'src', 'cli', 'admin.ts'), 'backfill-costs'], {
      cwd: projectRoot,
      env: { ...process.env, ...serverEnv(dataDir), DATA_DIR: dataDir, LOG_LEVEL: 'silent', PRICES_REFRESH_URL: '' },
      timeout: 120_000,
    });
    expect(JSON.parse(stdout)).toEqual({ scanned: 0, rewritten: 0, priced_at: null, without_generations: 0 });
    // A CLI process starts its own stores and migrates them: past the default test timeout on a loaded runner.
  }, 150_000);
});
