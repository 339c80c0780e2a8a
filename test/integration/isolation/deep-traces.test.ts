import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BOOTSTRAP_KEY, removeDir, spawnService, type SpawnedService } from '../../helpers/service.js';
import { tempDataDir } from '../../helpers/temp-dir.js';
import { probeHealthz } from '../../helpers/loop-probe.js';
import { chainRequests } from '../../helpers/span-chain.js';
import { waitFor } from '../ingest/otlp-client.js';

/**
 * A trace whose spans form one parent chain is
 * ingested, settled and read (paged) in chain order while /healthz keeps answering. A walk to the
 * root per span (quadratic in the chain's depth) blocks the service for many seconds on 20,000
 * spans even on an idle machine; the bound on the longest /healthz wait is far below that and far
 * above what a loaded 2-core runner adds. The 500 ms target is a figure of bench/isolation (part
 * `deep`) on a quiet machine. The service runs as a child process, so the probe measures its event
 * loop, not this test's own JSON work.
 */

const MAX_STALL_MS = 5000;

const dataDir = tempDataDir();
let svc: SpawnedService;
let project: { id: string };

async function call(method: string, apiPath: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${svc.url}/api${apiPath}`, {
    method,
    headers: { authorization: `Bearer ${BOOTSTRAP_KEY}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, body: await res.json() };
}

beforeAll(async () => {
  // A long quiet period: the chain settles once, after its last part, not after every part.
  svc = await spawnService(dataDir, { TRACE_SETTLE_MS: '8000', LOG_LEVEL: 'info' });
  project = (await call('POST', '/projects', { name: 'deep traces' })).body;
});

afterAll(async () => {
  await svc?.stop();
  removeDir(dataDir);
});

async function send(body: string): Promise<void> {
  const res = await fetch(`${svc.url}/v1/traces`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${BOOTSTRAP_KEY}`, 'x-lookout-project': project.id },
    body,
  });
  expect(res.status).toBe(200);
  expect(await res.json()).toEqual({});
}

async function settledSpanCount(otelTraceId: string): Promise<number | undefined> {
  const res = await call('GET', `/projects/${project.id}/traces?agent_name=chain-agent&limit=50`);
  const row = (res.body.traces as { otel_trace_id: string; span_count: number }[]).find((t) => t.otel_trace_id === otelTraceId);
  return row?.span_count;
}

/** Reads pages of the trace's default detail form (at most `maxPages`); returns the span ids in order. */
async function readPages(otelTraceId: string, total: number, maxPages: number): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const query: string = cursor ? `?span_limit=10000&span_cursor=${cursor}` : '?span_limit=10000';
    const res = await call('GET', `/traces/${otelTraceId}${query}`);
    expect(res.status).toBe(200);
    expect(res.body.spans_total).toBe(total);
    expect(res.body.stats.span_count).toBe(total);
    for (const s of res.body.spans as { otel_span_id: string }[]) ids.push(s.otel_span_id);
    cursor = res.body.next_span_cursor;
    pages++;
  } while (cursor !== null && pages < maxPages);
  return ids;
}

async function chainRoundTrip(length: number, requests: number, maxPages: number): Promise<void> {
  const { traceId, bodies } = chainRequests({ length, requests, usageEvery: 1000 });
  const texts = bodies.map((b) => JSON.stringify(b));
  const probe = probeHealthz(svc.url);
  let stall: Awaited<ReturnType<typeof probe.stop>>;
  try {
    for (const text of texts) await send(text);
    const count = await waitFor(async () => {
      const n = await settledSpanCount(traceId);
      return n === length ? n : undefined;
    }, 240_000, `the ${length}-span trace to settle`);
    expect(count).toBe(length);
    const ids = await readPages(traceId, length, maxPages);
    // Each page continues where the previous ended, in chain order (each span starts after its parent).
    const expected = Array.from({ length: Math.min(length, maxPages * 10_000) }, (_, i) => (i + 1).toString(16).padStart(16, '0'));
    expect(ids).toEqual(expected);
    // The default page answers a bounded part of the trace, and says how to get the rest.
    const first = await call('GET', `/traces/${traceId}`);
    expect(first.body.spans).toHaveLength(2000);
    expect(first.body.next_span_cursor).toEqual(expect.any(String));
  } finally {
    stall = await probe.stop();
  }
  expect(stall.count).toBeGreaterThan(10);
  expect(stall.maxMs).toBeLessThan(MAX_STALL_MS);
}

describe('deep traces do not block the service', () => {
  it('ingests, settles and reads a 20,000-span parent chain sent in one request', async () => {
    await chainRoundTrip(20_000, 1, 2);
  }, 300_000);

  it('ingests, settles and reads a 100,000-span parent chain', async () => {
    await chainRoundTrip(100_000, 10, 2);
  }, 600_000);
});
