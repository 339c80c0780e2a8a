import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentRunRequest } from '../../helpers/otlp-json.js';
import { startTestService, type TestService } from '../../helpers/service.js';

/**
 * Free space under DATA_DIR below DATA_DIR_MIN_FREE_MB: /readyz answers 503 naming the disk, and
 * ingestion refuses with 503 store_unavailable + Retry-After before anything is written, while reads
 * go on. The floor is set above the disk's real free space (statfs of the test's DATA_DIR).
 */

let svc: TestService;
let project: { id: string };

beforeAll(async () => {
  svc = await startTestService();
  project = await svc.newProject('disk');
});
afterAll(async () => {
  await svc?.stop();
});

describe('the DATA_DIR free-space floor', () => {
  it('is ready above the floor, and below it not ready with ingestion refused', async () => {
    const ready = await fetch(`${svc.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ disk: true });
    await svc.stop();

    const stats = fs.statfsSync(svc.dataDir);
    const freeMb = Math.floor((Number(stats.bavail) * Number(stats.bsize)) / (1024 * 1024));
    // Same DATA_DIR, a floor above what is free.
    svc = await startTestService({ DATA_DIR_MIN_FREE_MB: String(freeMb + 1024 * 1024) }, svc.dataDir);
    const low = await fetch(`${svc.url}/readyz`);
    expect(low.status).toBe(503);
    expect(await low.json()).toMatchObject({ status: 'unavailable', postgres: true, clickhouse: true, disk: false, failed: ['disk'] });

    const { body } = agentRunRequest({ start: new Date(Date.now() - 60_000), agent: 'disk', generations: [{ model: 'gpt-4o', input: 1, output: 1 }] });
    const res = await fetch(`${svc.url}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${svc.adminKey}`, 'x-lookout-project': project.id },
      body,
    });
    expect(res.status).toBe(503);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await res.json()).toMatchObject({ code: 'store_unavailable', detail: expect.stringContaining('DATA_DIR_MIN_FREE_MB') });
    // Reads still answer.
    expect((await svc.call('GET', '/projects')).status).toBe(200);
    const ch = svc.service.deps.ch;
    const [row] = await (await ch.client.query({ query: `SELECT count() AS n FROM ${ch.table('spans')} WHERE project_id = {p:String}`, query_params: { p: project.id }, format: 'JSONEachRow' })).json<{ n: string }>();
    expect(Number(row.n)).toBe(0);
  });
});
