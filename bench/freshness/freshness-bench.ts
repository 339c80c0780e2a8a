/**
 * Freshness at a sustained rate (npm run bench:freshness): how long after an exporter's request is
 * acknowledged its trace is listed, queryable as trace.processed, and — for a failing run — has
 * opened an issue and reached a webhook receiver; and the highest offered rate at which the settle
 * lag stays bounded for a whole run.
 *
 *   npm run bench:freshness -- --duration 60 --burst-batches 100 --rates 0.3,0.5,0.7,0.85,1
 *
 * 1. Burst: the same kind of batches (bench/ingest's synthetic agent runs) sent as fast as they are
 *    accepted; its rate is the accepted burst rate.
 * 2. For each fraction of it (--rates; or absolute spans/s with --spans-per-second a,b,c): a
 *    constant offered rate for --duration seconds: every 200 ms a request carrying that tick's share
 *    of spans (or --requests-per-tick requests sharing it, as many exporters send) as traces of
 *    10–50 spans, one run in ten failing with a tool of its own (so it opens an issue of its own
 *    and sends an `issue.created` webhook to a local receiver). Requests are made
 *    from encoded templates (tick-batches.ts), so the bench's own CPU stays as small as the burst's,
 *    whose batches are built before it starts. Refused requests
 *    (429/503) are retried after Retry-After, as an exporter does, and counted; a batch is given up
 *    after a first attempt and five retries, as OpenTelemetry's OTLP exporters do. Two probe traces a
 *    second (each its own agent name and a thread of that name, as one conversation) are followed:
 *    polled in the trace list (the thread's list, as someone opening that conversation asks it) and
 *    in trace.processed (analytics query), to time acknowledged → listed and acknowledged →
 *    processed. Every second the metrics endpoint gives the settle queue's depth and
 *    oldest due age, and /proc the service's RSS; and, for the seconds around any oldest due age past
 *    --detail-over-ms (default: --lag-ok-ms), or any longest decoding wait for the compute worker
 *    past --detail-prepare-over-ms (default: none), what settling, decoding, the flushes and the
 *    engine were doing (freshness-seconds.ts): those seconds are printed in full after the rate's table.
 *    Over the offered seconds it also reads the machine's busy share (/proc/stat), the CPU of the
 *    service process and its PostgreSQL per 1000 spans sent, and in how many seconds the writer
 *    paced its flushes for settling to catch up.
 * 3. A rate's lag is bounded when the oldest due trace never waited longer than --lag-ok-ms and
 *    no request was refused for settle lag. Prints per rate, then last:
 *      accepted burst rate: N spans/s
 *      sustainable rate: M spans/s
 *
 * Between rates the service drains its settle queue; one service serves every rate.
 */
import fs from 'node:fs';
import http from 'node:http';
import { syntheticBatch, type TraceShape } from '../../test/helpers/synthetic-batch.js';
import { sendBatches } from '../otlp-senders.js';
import { descendantsCpu, threadCpu } from '../ingest/cpu-split.js';
import { BENCH_KEY, numberArg, startServiceProcess, type ServiceProcess } from '../service-process.js';
import { freePortNumber, percentile, scrapeGauges } from './freshness-probes.js';
import { printAroundSpikes, SecondSampler, type SecondSample } from './freshness-seconds.js';
import { flakyTool, probeAgent, TickBatches } from './tick-batches.js';

const TICK_MS = 200;
const PROBES_PER_SECOND = 2;
/** Sends of one batch before it is given up: OpenTelemetry's OTLP exporters make a first attempt and at most five retries. */
const EXPORT_ATTEMPTS = 6;

function listArg(name: string): number[] | null {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1].split(',').map(Number).filter((n) => n > 0) : null;
}

const duration = numberArg('duration', 60);
const burstBatches = numberArg('burst-batches', 100);
const settleMs = numberArg('settle-ms', 3000);
const maxLagMs = numberArg('max-lag-ms', 30_000);
const lagOkMs = numberArg('lag-ok-ms', settleMs + 5000);
const detailOverMs = numberArg('detail-over-ms', lagOkMs);
const detailPrepareOverMs = numberArg('detail-prepare-over-ms', Infinity);
const requestsPerTick = Math.max(1, numberArg('requests-per-tick', 1));

/** A deterministic 10–50 span count and failure for trace `n`. */
function shapeOf(n: number): TraceShape {
  const spans = 10 + ((n * 7919) % 41);
  return n % 10 === 0 ? { spans, failTool: flakyTool(n) } : { spans };
}

async function api(svc: ServiceProcess, method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(`${svc.url}/api${path}`, {
    method,
    headers: { authorization: `Bearer ${BENCH_KEY}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return res.json();
}

interface RateResult {
  offered: number;
  /** Seconds the offered rate was owed over: up to the last tick (what is sent is owed by the clock at each tick). */
  offeredSeconds: number;
  sent: number;
  /** Spans of batches given up after EXPORT_ATTEMPTS refusals or failed attempts. */
  dropped: number;
  /** Answers 429/503 by the setting the answer names (SETTLE_MAX_LAG_MS, INGEST_MAX_QUEUE_MS, INGEST_TIMEOUT_MS, …; `other`). */
  refusedBy: Record<string, number>;
  listed: number[];
  processed: number[];
  issueOpened: number[];
  webhook: number[];
  series: SecondSample[];
  bounded: boolean;
  /** Over the offered seconds: the machine's busy share (both cores = 1), and CPU ms of the service process and of its PostgreSQL. */
  machineBusy: number;
  serviceCpuMs: number;
  postgresCpuMs: number;
}

/** Busy and total jiffies of the whole machine (/proc/stat's first line; idle and iowait count as not busy). */
function machineJiffies(): { busy: number; total: number } {
  const fields = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1, 9).map(Number);
  const total = fields.reduce((sum, n) => sum + n, 0);
  return { busy: total - fields[3] - fields[4], total };
}

/** CPU nanoseconds of the service process (every thread) and of its PostgreSQL processes. */
function serviceCpuNs(pid: number): { service: number; postgres: number } {
  return { service: [...threadCpu(pid).cpu.values()].reduce((sum, ns) => sum + ns, 0), postgres: descendantsCpu(pid) };
}

/** Webhook arrivals by the failing tool named in the issue title. */
function startReceiver(): Promise<{ port: number; arrivals: Map<string, { at: number; createdAt: number }>; close(): void }> {
  const arrivals = new Map<string, { at: number; createdAt: number }>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = Date.now();
      try {
        const event = JSON.parse(Buffer.concat(chunks).toString());
        const tool = /flaky_tool_\d+/.exec(event.data?.issue?.title ?? '')?.[0];
        if (event.type === 'issue.created' && tool) arrivals.set(tool, { at, createdAt: Date.parse(event.data.issue.created_at) });
      } catch {
        // not ours
      }
      res.writeHead(200).end();
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ port: (server.address() as { port: number }).port, arrivals, close: () => server.close() })));
}

/** Probe agents are numbered across rates: each probe's name is its own. */
let nextProbe = 0;

async function runRate(svc: ServiceProcess, metricsUrl: string, receiver: Awaited<ReturnType<typeof startReceiver>>, rate: number, firstTrace: number): Promise<{ result: RateResult; nextTrace: number }> {
  let trace = firstTrace;
  const ticks = new TickBatches();
  const result: RateResult = { offered: rate, offeredSeconds: duration, sent: 0, dropped: 0, refusedBy: {}, listed: [], processed: [], issueOpened: [], webhook: [], series: [], bounded: true, machineBusy: 0, serviceCpuMs: 0, postgresCpuMs: 0 };
  const machineBefore = machineJiffies();
  const cpuBefore = serviceCpuNs(svc.pid);
  const probeAck = new Map<string, number>();
  const failAck = new Map<string, number>();
  const pendingListed = new Set<string>();
  const pendingProcessed = new Set<string>();
  const inFlight = new Set<Promise<void>>();
  /** Spans put into requests so far: each tick sends what the offered rate owes since the start. */
  let scheduled = 0;
  const started = Date.now();

  const send = async (batch: { protobuf: Buffer; spans: number }, probes: string[], fails: string[]) => {
    for (let attempt = 1; ; attempt++) {
      let res: Response | null = null;
      let text = '';
      try {
        res = await fetch(`${svc.url}/v1/traces`, {
          method: 'POST',
          headers: { authorization: `Bearer ${BENCH_KEY}`, 'x-lookout-project': svc.project, 'content-type': 'application/x-protobuf' },
          body: new Uint8Array(batch.protobuf),
        });
        text = await res.text();
      } catch {
        // No answer (the connection failed or timed out): retried like a refusal.
        res = null;
      }
      if (res?.status === 200) break;
      if (res) {
        if (res.status !== 429 && res.status !== 503) throw new Error(`ingest answered ${res.status}: ${text}`);
        const bound = /\b([A-Z][A-Z_]*_(?:MS|BYTES))[=)]/.exec(text)?.[1] ?? 'other';
        result.refusedBy[bound] = (result.refusedBy[bound] ?? 0) + 1;
      }
      // An exporter gives a batch up after its retry budget, so an over-rate run sheds load instead
      // of every refused batch retrying for good (a herd that kept the service saturated).
      if (attempt === EXPORT_ATTEMPTS) {
        result.dropped += batch.spans;
        return;
      }
      await new Promise((r) => setTimeout(r, Number(res?.headers.get('retry-after') ?? '1') * 1000));
    }
    const at = Date.now();
    result.sent += batch.spans;
    for (const p of probes) {
      probeAck.set(p, at);
      pendingListed.add(p);
      pendingProcessed.add(p);
    }
    for (const f of fails) failAck.set(f, at);
  };

  const ticker = setInterval(() => {
    const elapsedMs = Date.now() - started;
    if (elapsedMs >= duration * 1000) return;
    // Owed by the clock, not by ticks counted: setInterval runs late on a loaded machine, and adding a
    // tick's share per tick sent 0.79× when 0.8× was offered.
    let carry = (rate * elapsedMs) / 1000 - scheduled;
    result.offeredSeconds = elapsedMs / 1000;
    const shapes: TraceShape[] = [];
    const probes: string[] = [];
    const probeEvery = Math.max(1, Math.round(1000 / TICK_MS / PROBES_PER_SECOND));
    if (Math.floor((Date.now() - started) / TICK_MS) % probeEvery === 0) {
      const name = probeAgent(nextProbe++);
      shapes.push({ spans: 10, agent: name, thread: name });
      probes.push(name);
      carry -= 10;
      scheduled += 10;
    }
    while (carry >= 10) {
      const shape = shapeOf(trace++);
      if (shape.spans > carry && shapes.length > 0) break;
      shapes.push(shape);
      carry -= shape.spans;
      scheduled += shape.spans;
    }
    if (shapes.length === 0) return;
    // The tick's traces as --requests-per-tick requests sent at once (many exporters), the probe in the first.
    const groups = Array.from({ length: Math.min(requestsPerTick, shapes.length) }, (_, g) => shapes.filter((_, i) => i % requestsPerTick === g));
    for (const [g, group] of groups.entries()) {
      const groupFails = group.flatMap((shape) => (shape.failTool ? [shape.failTool] : []));
      const work = send(ticks.batch(group), g === 0 ? probes : [], groupFails).catch((error) => console.error(String(error)));
      inFlight.add(work);
      void work.finally(() => inFlight.delete(work));
    }
  }, TICK_MS);

  const sampler = new SecondSampler(metricsUrl, svc.pid, started);
  // One scrape at a time: a slow one is not overtaken (its histogram differences would be wrong).
  let sampling = false;
  const watch = async () => {
    if (sampling) return;
    sampling = true;
    try {
      const second = await sampler.sample();
      if (second) result.series.push(second);
    } catch {
      // the next second reads again
    } finally {
      sampling = false;
    }
  };
  const watcher = setInterval(() => void watch(), 1000);

  // Each probe read polls on its own and never overlaps itself, as someone refreshing a page waits
  // for the answer: a slow answer delays that probe's next look (and its figure), it does not pile
  // further reads onto a busy service.
  const pollListed = async () => {
    await Promise.all(
      [...pendingListed].map(async (probe) => {
        const list = await api(svc, 'GET', `/projects/${svc.project}/traces?thread_id=${probe}&limit=1&include_unsettled=true`);
        if (list.traces.length > 0 && pendingListed.delete(probe)) result.listed.push(Date.now() - probeAck.get(probe)!);
      }),
    );
  };
  const pollProcessed = async () => {
    // The oldest pending probes first, at most the 20 values an `in` filter accepts.
    const names = [...pendingProcessed].slice(0, 20);
    if (names.length === 0) return;
    const end = new Date(Date.now() + 3_600_000).toISOString().slice(0, 14) + '00:00Z';
    const start = new Date(Date.now() - 3_600_000).toISOString().slice(0, 14) + '00:00Z';
    const answer = await api(svc, 'POST', `/projects/${svc.project}/analytics/query`, {
      from: 'trace.processed', start, end_exclusive: end,
      measures: [{ as: 'n', agg: 'count' }],
      group_by: [{ field: 'agent_name' }],
      filters: [{ field: 'agent_name', op: 'in', value: names }],
    });
    const now = Date.now();
    for (const row of answer.rows as { agent_name: string }[]) {
      if (pendingProcessed.delete(row.agent_name)) result.processed.push(now - probeAck.get(row.agent_name)!);
    }
  };
  const pollers = [pollListed, pollProcessed].map((read) => {
    let running = false;
    return setInterval(() => {
      if (running) return;
      running = true;
      read()
        .catch((error) => console.error(`probe poll failed: ${String(error)}`))
        .finally(() => (running = false));
    }, 250);
  });

  await new Promise((r) => setTimeout(r, duration * 1000));
  clearInterval(ticker);
  while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
  const machineAfter = machineJiffies();
  const cpuAfter = serviceCpuNs(svc.pid);
  result.machineBusy = (machineAfter.busy - machineBefore.busy) / (machineAfter.total - machineBefore.total);
  result.serviceCpuMs = (cpuAfter.service - cpuBefore.service) / 1e6;
  result.postgresCpuMs = (cpuAfter.postgres - cpuBefore.postgres) / 1e6;
  // What was acknowledged still settles: wait (bounded) for the probes and the webhooks.
  const drainDeadline = Date.now() + Math.max(30_000, maxLagMs + settleMs + 10_000);
  while (Date.now() < drainDeadline && (pendingListed.size > 0 || pendingProcessed.size > 0 || [...failAck.keys()].some((f) => !receiver.arrivals.has(f)))) {
    await new Promise((r) => setTimeout(r, 500));
  }
  for (const poller of pollers) clearInterval(poller);
  clearInterval(watcher);
  for (const [tool, ack] of failAck) {
    const arrival = receiver.arrivals.get(tool);
    if (!arrival) continue;
    result.issueOpened.push(arrival.createdAt - ack);
    result.webhook.push(arrival.at - ack);
  }
  const maxOldest = Math.max(0, ...result.series.map((s) => s.oldestS));
  result.bounded = maxOldest * 1000 <= lagOkMs && !result.refusedBy.SETTLE_MAX_LAG_MS && pendingListed.size === 0;
  return { result, nextTrace: trace };
}

function ms(values: number[]): string {
  if (values.length === 0) return 'none';
  return `p50 ${Math.round(percentile(values, 0.5))} ms, p99 ${Math.round(percentile(values, 0.99))} ms (${values.length})`;
}

function report(r: RateResult): void {
  const refused = Object.values(r.refusedBy).reduce((sum, n) => sum + n, 0);
  const by = Object.entries(r.refusedBy).map(([bound, n]) => `${bound} ${n}`).join(', ');
  console.log(`\n== offered ${Math.round(r.offered)} spans/s for ${duration} s: sent ${r.sent} spans (${r.dropped} given up), ${refused} answers 429/503 (${r.refusedBy.SETTLE_MAX_LAG_MS ?? 0} for settle lag${by ? `; by bound: ${by}` : ''})`);
  console.log(`  acknowledged -> listed:                ${ms(r.listed)}`);
  console.log(`  acknowledged -> trace.processed:       ${ms(r.processed)}`);
  console.log(`  failing run  -> issue opened:          ${ms(r.issueOpened)}`);
  console.log(`  failing run  -> webhook delivered:     ${ms(r.webhook)}`);
  const perK = (cpuMs: number) => (r.sent > 0 ? ((1000 * cpuMs) / r.sent).toFixed(1) : '-');
  console.log(`  machine busy ${Math.round(r.machineBusy * 1000)} ‰ (both cores = 1000); CPU per 1000 spans sent: service ${perK(r.serviceCpuMs)} ms, its PostgreSQL ${perK(r.postgresCpuMs)} ms`);
  console.log(`  flushes paced for settling to catch up (INGEST_FLUSH_CATCH_UP_LAG_MS) in ${r.series.filter((s) => s.catchingUp).length} of ${r.series.length} seconds sampled`);
  const step = Math.max(1, Math.ceil(r.series.length / 12));
  const rows = r.series.filter((_s, i) => i % step === 0 || i === r.series.length - 1);
  // Traces settled between two printed rows, the share of them read back from ClickHouse (not held
  // in the settler's memory), and the read-backs by reason.
  console.log(`  t(s)  queue depth  oldest due(s)  RSS(MiB)  settled  read back  why read back`);
  rows.forEach((s, i) => {
    const before = i > 0 ? rows[i - 1] : undefined;
    const readBack = s.settledReadBack - (before?.settledReadBack ?? s.settledReadBack);
    const settled = s.settledFromMemory - (before?.settledFromMemory ?? s.settledFromMemory) + readBack;
    const share = settled > 0 ? `${Math.round((100 * readBack) / settled)} %` : '-';
    const reasons = Object.entries(s.readBackReasons)
      .map(([reason, n]) => [reason, before ? n - (before.readBackReasons[reason] ?? 0) : 0] as const)
      .filter(([, n]) => n > 0)
      .map(([reason, n]) => `${reason} ${n}`)
      .join(', ');
    console.log(`  ${String(Math.round(s.t)).padStart(4)}  ${String(s.depth).padStart(11)}  ${s.oldestS.toFixed(1).padStart(13)}  ${String(s.rssMiB).padStart(8)}  ${String(settled).padStart(7)}  ${share.padStart(9)}  ${reasons}`);
  });
  printAroundSpikes(r.series, detailOverMs, detailPrepareOverMs);
  console.log(`  lag ${r.bounded ? 'bounded' : 'NOT bounded'} (oldest due age limit ${lagOkMs} ms)`);
}

async function drain(metricsUrl: string): Promise<void> {
  const deadline = Date.now() + 5 * 60_000;
  while (Date.now() < deadline) {
    const g = await scrapeGauges(metricsUrl, ['lookout_settle_queue_depth']);
    if ((g.lookout_settle_queue_depth ?? 0) === 0) return;
    await new Promise((r) => setTimeout(r, 500));
  }
}

async function main(): Promise<void> {
  const metricsPort = await freePortNumber();
  const svc = await startServiceProcess('freshness', {
    TRACE_SETTLE_MS: String(settleMs),
    SETTLE_MAX_LAG_MS: String(maxLagMs),
    METRICS_PORT: String(metricsPort),
    LOOKOUT_WEBHOOK_ALLOW_PRIVATE: '1',
  });
  const metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
  const receiver = await startReceiver();
  try {
    await api(svc, 'POST', `/projects/${svc.project}/webhooks`, { url: `http://127.0.0.1:${receiver.port}/hook`, events: ['issue.created'] });
    // 1. The burst: bench/ingest's batches of 1000 spans, as fast as they are accepted (4 senders).
    const batches = Array.from({ length: burstBatches }, () => syntheticBatch(1000));
    const burst = await sendBatches(svc, batches, 4);
    const burstRate = Math.round(burst.rate);
    console.log(`burst: ${burst.spans} spans in ${burst.seconds.toFixed(1)} s, ${burst.retries} answers 429/503 retried`);
    await drain(metricsUrl);

    const absolute = listArg('spans-per-second');
    const rates = absolute ?? (listArg('rates') ?? [0.3, 0.5, 0.7, 0.85, 1]).map((f) => f * burstRate);
    let sustainable = 0;
    let nextTrace = 1;
    for (const rate of rates) {
      const { result, nextTrace: next } = await runRate(svc, metricsUrl, receiver, rate, nextTrace);
      nextTrace = next;
      report(result);
      // Spans sent over the seconds they were owed over (up to the last tick, not the run's end: the
      // last tick comes up to one tick before it, and sent / duration then read 0.7998× of 0.8×).
      if (result.bounded) sustainable = Math.max(sustainable, Math.round(result.sent / result.offeredSeconds));
      await drain(metricsUrl);
      if (!result.bounded) break;
    }
    console.log(`\naccepted burst rate: ${burstRate} spans/s`);
    console.log(`sustainable rate: ${sustainable} spans/s`);
  } finally {
    receiver.close();
    await svc.stop();
  }
}

await main();
