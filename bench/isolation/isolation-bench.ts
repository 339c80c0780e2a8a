/**
 * Isolation benchmark: in one run,
 *
 * 1. medians of a small ingest (10 spans) and of a trace read, idle and with heavy analytics
 *    queries in flight;
 * 2. /healthz p50/p95/max and GET /api/projects p95 while 32 senders post 1000-span batches;
 * 3. the service's peak RSS under overload (INGEST_MAX_INFLIGHT_BYTES=8MiB, 64 senders);
 * 4. the service's peak RSS over a series of 48 concurrent 20 KB gzip bodies that inflate to ~20 MiB;
 * 5. the longest /healthz wait while a 20,000-span parent chain (one request) and a 100,000-span one
 *    (10 requests) are ingested, settled and read in two 10,000-span pages (target: < 500 ms).
 *
 *   npm run bench:isolation -- [--seed-batches 300] [--analytics 8] [--samples 20] [--senders 32]
 *     [--load-batches 400] [--overload-senders 64] [--overload-batches 400] [--bombs 48] [--bomb-rounds 3]
 *     [--parts latency,overload,gzip,deep]
 *
 * Each part runs against its own service process (peak RSS is a process's lifetime high-water
 * mark), started from source as in the other benchmarks; senders and probes run here.
 */
import os from 'node:os';
import { gzipSync } from 'node:zlib';
import { probeHealthz } from '../../test/helpers/loop-probe.js';
import { chainRequests } from '../../test/helpers/span-chain.js';
import { syntheticBatch } from '../../test/helpers/synthetic-batch.js';
import { postTraces, sendBatches } from '../otlp-senders.js';
import { BENCH_KEY, memoryMiB, numberArg, startServiceProcess } from '../service-process.js';

const SEED_BATCHES = numberArg('seed-batches', 300);
const ANALYTICS = numberArg('analytics', 8);
const SAMPLES = numberArg('samples', 20);
const SENDERS = numberArg('senders', 32);
const LOAD_BATCHES = numberArg('load-batches', 400);
const OVERLOAD_SENDERS = numberArg('overload-senders', 64);
const OVERLOAD_BATCHES = numberArg('overload-batches', 400);
const BOMBS = numberArg('bombs', 48);
const BOMB_ROUNDS = numberArg('bomb-rounds', 3);
const MiB = 1024 * 1024;
/** `--parts latency,overload,gzip,deep` runs only those parts (each starts its own service). */
const PARTS = (process.argv.includes('--parts') ? process.argv[process.argv.indexOf('--parts') + 1] : 'latency,overload,gzip,deep').split(',');

const startService = (env: Record<string, string> = {}) => startServiceProcess('isolation', env);
const auth = { authorization: `Bearer ${BENCH_KEY}` };

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}

const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))];
};
const ms = (v: number) => `${v.toFixed(1)} ms`;

/** Polls a URL one request at a time until stopped; returns the latencies. */
function poll(url: string, intervalMs: number, headers: Record<string, string> = {}) {
  const latencies: number[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      latencies.push(await timed(async () => (await fetch(url, { headers })).arrayBuffer()));
      await new Promise((r) => setTimeout(r, intervalMs));
    }
  })();
  return async () => {
    running = false;
    await loop;
    return latencies;
  };
}

/** A heavy analytics query: exact distinct counts and percentiles over every generation of 30 days, grouped by span. */
function heavyQuery(): object {
  const end = new Date(Math.ceil(Date.now() / 1000) * 1000 + 3_600_000);
  const start = new Date(end.getTime() - 30 * 86_400_000);
  const iso = (d: Date) => d.toISOString().replace(/\.\d{3}Z$/, 'Z');
  return {
    from: 'generation.completed',
    start: iso(start),
    end_exclusive: iso(end),
    measures: [
      { as: 'calls', agg: 'uniqExact', field: 'span_id' },
      { as: 'p99', agg: 'p99', field: 'duration_ms' },
      { as: 'tokens', agg: 'sum', field: 'output_tokens' },
    ],
    group_by: [{ field: 'trace_id' }],
    order_by: [{ measure: 'p99', direction: 'desc' }],
  };
}

async function latencyPart(): Promise<string[]> {
  const svc = await startService();
  try {
    process.stdout.write(`seeding ${SEED_BATCHES} batches of 1000 spans...\n`);
    await sendBatches(svc, Array.from({ length: SEED_BATCHES }, () => syntheticBatch(1000)), 8);
    // A settled trace to read back.
    let traceId = '';
    for (let i = 0; i < 100 && traceId === ''; i++) {
      const list = (await (await fetch(`${svc.url}/api/projects/${svc.project}/traces?limit=1`, { headers: auth })).json()) as { traces: { id: string }[] };
      traceId = list.traces[0]?.id ?? '';
      if (traceId === '') await new Promise((r) => setTimeout(r, 500));
    }
    if (traceId === '') throw new Error('no settled trace to read');
    const smallIngest = () => timed(async () => {
      if ((await postTraces(svc, syntheticBatch(10).protobuf)) !== 200) throw new Error('small ingest failed');
    });
    const traceRead = () => timed(async () => {
      const res = await fetch(`${svc.url}/api/traces/${traceId}`, { headers: auth });
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`trace read ${res.status}`);
    });
    const sample = async () => {
      const ingest: number[] = [];
      const read: number[] = [];
      for (let i = 0; i < SAMPLES; i++) {
        ingest.push(await smallIngest());
        read.push(await traceRead());
      }
      return { ingest: quantile(ingest, 0.5), read: quantile(read, 0.5) };
    };
    const idle = await sample();

    let analyticsRunning = true;
    let analyticsDone = 0;
    const analyticsStatuses = new Map<number, number>();
    const analytics = Array.from({ length: ANALYTICS }, async () => {
      while (analyticsRunning) {
        const res = await fetch(`${svc.url}/api/projects/${svc.project}/analytics/query`, {
          method: 'POST',
          headers: { ...auth, 'content-type': 'application/json' },
          body: JSON.stringify(heavyQuery()),
        });
        await res.arrayBuffer();
        analyticsStatuses.set(res.status, (analyticsStatuses.get(res.status) ?? 0) + 1);
        analyticsDone++;
      }
    });
    await new Promise((r) => setTimeout(r, 1000)); // let the queries get going
    const analyticsFrom = performance.now();
    const loaded = await sample();
    analyticsRunning = false;
    await Promise.all(analytics);
    const analyticsSeconds = (performance.now() - analyticsFrom + 1000) / 1000;

    process.stdout.write(`${SENDERS} senders x ${LOAD_BATCHES} batches of 1000 spans, probing /healthz and GET /api/projects...\n`);
    const loadBatches = Array.from({ length: LOAD_BATCHES }, () => syntheticBatch(1000));
    const stopHealth = poll(`${svc.url}/healthz`, 20);
    const stopProjects = poll(`${svc.url}/api/projects`, 100, auth);
    const started = performance.now();
    const { retries } = await sendBatches(svc, loadBatches, SENDERS);
    const seconds = (performance.now() - started) / 1000;
    const health = await stopHealth();
    const projects = await stopProjects();
    return [
      `small ingest (10 spans) median: idle ${ms(idle.ingest)}, with ${ANALYTICS} analytics queries in flight ${ms(loaded.ingest)} (x${(loaded.ingest / idle.ingest).toFixed(1)})`,
      `trace read median: idle ${ms(idle.read)}, with ${ANALYTICS} analytics queries in flight ${ms(loaded.read)} (x${(loaded.read / idle.read).toFixed(1)})`,
      `analytics queries answered meanwhile: ${analyticsDone} in ${analyticsSeconds.toFixed(1)} s, ${(analyticsDone / analyticsSeconds).toFixed(1)}/s (${[...analyticsStatuses].map(([s, n]) => `${n}x ${s}`).join(', ')})`,
      `under ${SENDERS} ingest senders (${Math.round((LOAD_BATCHES * 1000) / seconds).toLocaleString('en-US')} spans/s, ${retries} retries): ` +
        `/healthz p50 ${ms(quantile(health, 0.5))} p95 ${ms(quantile(health, 0.95))} max ${ms(Math.max(...health))} (${health.length} probes); ` +
        `GET /api/projects p95 ${ms(quantile(projects, 0.95))}`,
    ];
  } finally {
    await svc.stop();
  }
}

async function overloadPart(): Promise<string> {
  const svc = await startService({ INGEST_MAX_INFLIGHT_BYTES: String(8 * MiB) });
  try {
    const batches = Array.from({ length: OVERLOAD_BATCHES }, () => syntheticBatch(1000));
    const before = memoryMiB(svc.pid, 'VmRSS');
    const { retries } = await sendBatches(svc, batches, OVERLOAD_SENDERS);
    return `overload (INGEST_MAX_INFLIGHT_BYTES=8MiB, ${OVERLOAD_SENDERS} senders, ${OVERLOAD_BATCHES} batches, ${retries} retries): peak RSS ${memoryMiB(svc.pid, 'VmHWM')} MiB (${before} MiB before)`;
  } finally {
    await svc.stop();
  }
}

async function gzipPart(): Promise<string> {
  const svc = await startService();
  try {
    // Valid OTLP/JSON that inflates to just under the 20 MiB limit: the worst body a sender may send.
    const head = '{"resourceSpans":[';
    const inflated = Buffer.alloc(20 * MiB - 1024, 0x20);
    inflated.write(head, 0);
    inflated.write(']}', inflated.length - 2);
    const bomb = gzipSync(inflated, { level: 9 });
    await postTraces(svc, syntheticBatch(10).protobuf); // warm the path before the baseline
    const before = memoryMiB(svc.pid, 'VmRSS');
    const statuses = new Map<number, number>();
    for (let round = 0; round < BOMB_ROUNDS; round++) {
      const answers = await Promise.all(
        Array.from({ length: BOMBS }, () => postTraces(svc, bomb, { 'content-type': 'application/json', 'content-encoding': 'gzip' })),
      );
      for (const s of answers) statuses.set(s, (statuses.get(s) ?? 0) + 1);
    }
    const peak = memoryMiB(svc.pid, 'VmHWM');
    return `gzip series (${BOMB_ROUNDS} x ${BOMBS} concurrent ${(bomb.length / 1024).toFixed(0)} KB bodies inflating to ${(inflated.length / MiB).toFixed(0)} MiB; ` +
      `answers ${[...statuses].map(([s, n]) => `${n}x ${s}`).join(', ')}): peak RSS ${peak} MiB, ${before} MiB before, +${peak - before} MiB`;
  } finally {
    await svc.stop();
  }
}

/** Ingests one parent chain, waits until it is settled whole, reads two 10,000-span pages; returns the longest /healthz wait. */
async function deepChain(svc: Awaited<ReturnType<typeof startService>>, length: number, requests: number): Promise<string> {
  const { traceId, bodies } = chainRequests({ length, requests, usageEvery: 1000 });
  const texts = bodies.map((b) => Buffer.from(JSON.stringify(b)));
  const probe = probeHealthz(svc.url);
  const started = performance.now();
  try {
    for (const text of texts) {
      const status = await postTraces(svc, text, { 'content-type': 'application/json' });
      if (status !== 200) throw new Error(`chain part answered ${status}`);
    }
    for (;;) {
      const res = await fetch(`${svc.url}/api/projects/${svc.project}/traces?agent_name=chain-agent&limit=50`, { headers: auth });
      const rows = ((await res.json()) as { traces: { otel_trace_id: string; span_count: number }[] }).traces;
      if (rows.find((t) => t.otel_trace_id === traceId)?.span_count === length) break;
      if (performance.now() - started > 300_000) throw new Error(`the ${length}-span chain did not settle in 300 s`);
      await new Promise((r) => setTimeout(r, 250));
    }
    let cursor: string | null = null;
    for (let page = 0; page < 2; page++) {
      const query: string = cursor ? `?span_limit=10000&span_cursor=${cursor}` : '?span_limit=10000';
      const res = await fetch(`${svc.url}/api/traces/${traceId}${query}`, { headers: auth });
      if (res.status !== 200) throw new Error(`trace page answered ${res.status}`);
      cursor = ((await res.json()) as { next_span_cursor: string | null }).next_span_cursor;
    }
  } catch (error) {
    await probe.stop();
    throw error;
  }
  const stall = await probe.stop();
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  return `${length.toLocaleString('en-US')}-span chain in ${requests} request(s), ingested + settled + 2 pages read in ${seconds} s: ` +
      `/healthz max ${ms(stall.maxMs)}, p95 ${ms(stall.p95Ms)} (${stall.count} probes)`;
}

async function deepPart(): Promise<string[]> {
  const svc = await startService();
  try {
    return [await deepChain(svc, 20_000, 1), await deepChain(svc, 100_000, 10)];
  } finally {
    await svc.stop();
  }
}

async function main() {
  const lines = [
    `cpus: ${os.cpus().length}, memory: ${Math.round(os.totalmem() / 2 ** 30)} GiB, node ${process.version}, load average ${os.loadavg()[0].toFixed(1)}`,
    ...(PARTS.includes('latency') ? await latencyPart() : []),
    ...(PARTS.includes('overload') ? [await overloadPart()] : []),
    ...(PARTS.includes('gzip') ? [await gzipPart()] : []),
    ...(PARTS.includes('deep') ? await deepPart() : []),
  ];
  process.stdout.write(`\n${lines.join('\n')}\n`);
}

main().catch((error) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
