import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSharedCatalog, PRICE_CATALOG_TOPIC } from '../../../src/cost/shared-catalog.js';
import type { SharedEvents } from '../../../src/platform/postgres/shared-events.js';
import { MONITORS_CHANGED_TOPIC } from '../../../src/workspace/monitors/monitor-store.js';
import type { TestService } from '../../helpers/service.js';
import { agentRunRequest } from '../../helpers/otlp-json.js';
import { testProviders } from '../../unit/cost/test-catalog.js';
import { waitFor } from '../ingest/otlp-client.js';
import { openSharedStores, type SharedStores } from './instances.js';

/**
 * What several instances share besides settling: LOOKOUT_ROLES decides what
 * each serves and runs; the price refresh runs on one leader and its catalog reaches every
 * instance; a project deleted through one instance is dropped from every instance's cache.
 */

let stores: SharedStores;
let prices: http.Server;
let priceUrl = '';
let fetches = 0;
const instances: TestService[] = [];

beforeAll(async () => {
  stores = await openSharedStores();
  prices = http.createServer((_req, res) => {
    fetches++;
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify(testProviders()));
  });
  await new Promise<void>((resolve) => prices.listen(0, '127.0.0.1', resolve));
  priceUrl = `http://127.0.0.1:${(prices.address() as AddressInfo).port}/data.json`;
}, 120_000);
afterAll(async () => {
  for (const svc of instances) await svc.stop().catch(() => {});
  await new Promise((resolve) => prices?.close(resolve));
  await stores?.close();
});

async function start(env: Record<string, string> = {}): Promise<TestService> {
  const svc = await stores.start({ PRICES_REFRESH_URL: priceUrl, TRACE_SETTLE_MS: '200', ...env });
  instances.push(svc);
  return svc;
}

const book = (svc: TestService) => svc.service.deps.services.priceBook!;
const leader = (svc: TestService) => svc.service.deps.services.leader;

function otlp(svc: TestService, projectId: string) {
  const { body } = agentRunRequest({ start: new Date(Date.now() - 5000), agent: 'roles-agent', generations: [{ model: 'gpt-test', input: 5, output: 1 }] });
  return fetch(`${svc.url}/v1/traces`, {
    method: 'POST',
    headers: { authorization: `Bearer ${svc.adminKey}`, 'content-type': 'application/json', 'x-lookout-project': projectId },
    body,
  });
}

describe('instances sharing one PostgreSQL', () => {
  it('refreshes prices on one leader, shares the catalog through PostgreSQL and announces it; another leads when it stops', { timeout: 120_000 }, async () => {
    const first = await start();
    const second = await start();
    const announced: number[] = [];
    (second.service.deps.services.events as SharedEvents).on(PRICE_CATALOG_TOPIC, async () => {
      announced.push((await loadSharedCatalog(second.service.deps.sql))!.fetchedAt.getTime());
    });
    const shared = () => loadSharedCatalog(stores.pg.sql);
    const refreshed = await waitFor(async () => {
      const catalog = await shared();
      return catalog && book(first).current()?.source === 'refresh' ? catalog : undefined;
    }, 30_000, 'catalog refreshed and shared');
    // Only the leader fetched; what it stored is what it prices with.
    expect(fetches).toBe(1);
    expect([leader(first)?.isLeader, leader(second)?.isLeader]).toEqual([true, false]);
    expect(refreshed.fetchedAt.getTime()).toBe(book(first).current()!.fetchedAt.getTime());
    expect(refreshed.providers.map((p) => p.id)).toEqual(testProviders().map((p) => p.id));

    // The leader goes away: the other instance takes over, refreshes at once, and announces it.
    await first.stop();
    instances.splice(instances.indexOf(first), 1);
    await waitFor(async () => (leader(second)?.isLeader ? true : undefined), 30_000, 'second instance leads');
    await waitFor(async () => (announced.some((t) => t > refreshed.fetchedAt.getTime()) ? true : undefined), 30_000, 'new catalog announced');
    expect(fetches).toBe(2);
    expect((await shared())!.fetchedAt.getTime()).toBeGreaterThan(refreshed.fetchedAt.getTime());
  });

  it('serves and runs only what LOOKOUT_ROLES names', { timeout: 120_000 }, async () => {
    const worker = instances[0] ?? (await start());
    const ingestOnly = await start({ LOOKOUT_ROLES: 'ingest' });
    const apiOnly = await start({ LOOKOUT_ROLES: 'api' });
    const project = await worker.newProject('roles');

    expect((await ingestOnly.call('GET', '/projects')).status).toBe(404);
    expect((await apiOnly.call('GET', '/projects')).status).toBe(200);
    expect((await otlp(apiOnly, project.id)).status).toBe(404);
    expect((await otlp(ingestOnly, project.id)).status).toBe(200);
    expect(leader(ingestOnly)).toBeUndefined();
    expect(leader(apiOnly)).toBeUndefined();
    // Spans taken by the ingest-only instance are settled by a worker.
    await waitFor(async () => {
      const listed = await apiOnly.call('GET', `/projects/${project.id}/traces`);
      return listed.body.traces?.length === 1 ? true : undefined;
    }, 30_000, 'trace settled by the worker instance');
  });

  it('drops a project deleted through one instance from the ingest cache of another', { timeout: 120_000 }, async () => {
    const [a, b] = [await start({ LOOKOUT_ROLES: 'api,ingest' }), await start({ LOOKOUT_ROLES: 'api,ingest' })];
    const project = await a.newProject('to delete');
    // b now holds the project in its 30 s cache of known projects.
    expect((await otlp(b, project.id)).status).toBe(200);
    expect((await a.call('DELETE', `/projects/${project.id}`)).status).toBe(202);
    await waitFor(async () => ((await otlp(b, project.id)).status === 404 ? true : undefined), 10_000, 'b refuses the deleted project');
  });

  it("announces a monitor change made through one instance to another's monitor-list cache", { timeout: 60_000 }, async () => {
    const [a, b] = [await start({ LOOKOUT_ROLES: 'api' }), await start({ LOOKOUT_ROLES: 'api' })];
    const heard: string[] = [];
    (b.service.deps.services.events as SharedEvents).on(MONITORS_CHANGED_TOPIC, () => {
      heard.push('changed');
    });
    const project = await a.newProject('monitors');
    expect(heard).toEqual([]);
    const created = await a.call('POST', `/projects/${project.id}/monitors`, { body: { name: 'Refunds', seed_hint: 'refund', expected_behavior: 'refund issued' } });
    expect(created.status).toBe(201);
    await waitFor(async () => (heard.length > 0 ? true : undefined), 10_000, 'b hears the monitor change');
  });
});
