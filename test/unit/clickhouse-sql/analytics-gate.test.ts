/**
 * The analytics lane's admission: global and per-tenant concurrency,
 * a bounded FIFO queue (429 beyond it), and waiting that counts inside the time limit (504).
 */
import { describe, expect, it } from 'vitest';
import { AnalyticsGate } from '../../../src/platform/clickhouse/sql/analytics-gate.js';
import { QueryTimeoutError, RateLimitedError } from '../../../src/platform/http/errors.js';

const later = (ms: number) => Date.now() + ms;

describe('AnalyticsGate', () => {
  it('admits up to the global bound, queues the rest in order, and admits them as slots free', async () => {
    const gate = new AnalyticsGate({ maxConcurrency: 2, maxPerTenant: 2, maxQueue: 10 });
    const a = await gate.acquire('t1', later(5000), 5);
    const b = await gate.acquire('t2', later(5000), 5);
    const order: string[] = [];
    const c = gate.acquire('t3', later(5000), 5).then((release) => (order.push('c'), release));
    const d = gate.acquire('t4', later(5000), 5).then((release) => (order.push('d'), release));
    await new Promise((r) => setTimeout(r, 20));
    expect(gate.load).toEqual({ running: 2, queued: 2 });
    a();
    (await c)();
    b();
    (await d)();
    expect(order).toEqual(['c', 'd']);
    expect(gate.load).toEqual({ running: 0, queued: 0 });
  });

  it('holds a tenant to its own bound while other tenants pass it in the queue', async () => {
    const gate = new AnalyticsGate({ maxConcurrency: 3, maxPerTenant: 1, maxQueue: 10 });
    const busy = await gate.acquire('busy', later(5000), 5);
    const second = gate.acquire('busy', later(5000), 5);
    // Another tenant is not stuck behind the busy tenant's queued statement.
    const other = await gate.acquire('other', later(200), 5);
    expect(gate.load).toEqual({ running: 2, queued: 1 });
    busy();
    (await second)();
    other();
    expect(gate.load).toEqual({ running: 0, queued: 0 });
  });

  it('answers 429 with Retry-After when the queue is full', async () => {
    const gate = new AnalyticsGate({ maxConcurrency: 1, maxPerTenant: 1, maxQueue: 1 });
    const held = await gate.acquire('t', later(5000), 5);
    const queued = gate.acquire('u', later(5000), 5);
    const refused = await gate.acquire('v', later(5000), 5).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(RateLimitedError);
    expect(refused).toMatchObject({ status: 429, code: 'rate_limited', headers: { 'Retry-After': expect.stringMatching(/^\d+$/) } });
    held();
    (await queued)();
  });

  it('counts waiting inside the time limit: a waiter past its deadline leaves with 504 and frees its place', async () => {
    const gate = new AnalyticsGate({ maxConcurrency: 1, maxPerTenant: 1, maxQueue: 1 });
    const held = await gate.acquire('t', later(5000), 5);
    const started = Date.now();
    const error = await gate.acquire('u', later(150), 2).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(QueryTimeoutError);
    expect(error).toMatchObject({ status: 504, code: 'query_timeout' });
    expect(Date.now() - started).toBeLessThan(2000);
    expect(gate.load).toEqual({ running: 1, queued: 0 });
    held();
    (await gate.acquire('u', later(100), 1))();
  });

  it('a release is counted once however often it is called', async () => {
    const gate = new AnalyticsGate({ maxConcurrency: 1, maxPerTenant: 1, maxQueue: 0 });
    const release = await gate.acquire('t', later(100), 1);
    release();
    release();
    expect(gate.load).toEqual({ running: 0, queued: 0 });
    (await gate.acquire('t', later(100), 1))();
  });
});
