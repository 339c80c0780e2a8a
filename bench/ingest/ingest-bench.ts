/**
 * Ingest benchmark: what a user of POST /v1/traces lives with, on one machine, in one run —
 *
 * - the accepted rate (spans/s answered 200) with protobuf and with JSON (1000-span batches, 8
 *   concurrent senders), and the end-to-end rate: from the first request of a phase to the last
 *   trace.processed row (and the issue extraction of its last traces) of that phase;
 * - the service's CPU per 1000 spans, settling and hooks included, split by where it ran: decoding
 *   (compute pool: decode, validate, normalize, rows), settle summaries (compute pool), the event
 *   loop (routing, write path, settle rounds, pricing, the hooks' PostgreSQL client), the ClickHouse
 *   engine's threads (inserts, duplicate check, read-backs, merges), and — outside the service
 *   process — the embedded PostgreSQL server (settle queue, hooks);
 * - the statements the service sent to PostgreSQL per 1000 spans, by kind (postgres-stats.ts);
 * - the raw @clickhouse/client insert of the same rows in the same run, peak RSS, and what a query
 *   sees afterwards (nothing acknowledged lost or doubled).
 *
 *   npx tsx bench/ingest/ingest-bench.ts [--batches 300] [--concurrency 8] [--batch-size 1000] [--monitors 0]
 *                                        [--prompt-bytes 0] [--completion-bytes 0]
 * --prompt-bytes / --completion-bytes put captured prompts and completions of that size on every
 * generation span (the default spans carry ~220 B of attributes; content capture is where the
 * per-span attribute work shows).
 *
 * The service runs as its own process (bench/service-process.ts); the senders (bench/otlp-senders.ts)
 * and the raw insert run here; cpu-split.ts reads where the service's CPU went.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { formatUtcSecond } from '../../src/analytics/query/window.js';
import { deriveRequestRows } from '../../src/ingest/write/ingest-prepare.js';
import { errorValues, generationValues, INSERT_COLUMNS, INSERT_FORMAT, spanValues, toolValues, type InsertTable } from '../../src/ingest/write/encoded-rows.js';
import { otlpOrigin, type SpanEventRows } from '../../src/spans/event-rows.js';
import { normalizeExport } from '../../src/spans/normalized-span.js';
import { decodeProtobufExport } from '../../src/ingest/otlp/otlp-decode-protobuf.js';
import { validateExport } from '../../src/spans/span-validation.js';
import { lookoutTraceId } from '../../src/spans/trace-id.js';
import { openClickHouse } from '../../src/platform/clickhouse/clickhouse.js';
import { migrateClickHouse } from '../../src/platform/migrations.js';
import { sendBatches } from '../otlp-senders.js';
import { BENCH_KEY, memoryMiB, numberArg, root, startServiceProcess, type ServiceProcess } from '../service-process.js';
import { cpuBetween, cpuSampler, readComputeStats, type CpuSampler, type CpuSnapshot, type CpuSplit } from './cpu-split.js';
import { enginePoolsLine, engineStatsLines, readEngineStats } from './engine-stats.js';
import { postgresStatsLines, readPostgresStats } from './postgres-stats.js';
import { syntheticBatch, type Batch } from '../../test/helpers/synthetic-batch.js';

const BATCHES = numberArg('batches', 300);
const CONCURRENCY = numberArg('concurrency', 8);
const BATCH_SPANS = numberArg('batch-size', 1000);
/** Monitors on the bench project (tool monitors on the failing tool): what a watched project costs in PostgreSQL. */
const MONITORS = numberArg('monitors', 0);
const CONTENT = { promptBytes: numberArg('prompt-bytes', 0), completionBytes: numberArg('completion-bytes', 0) };
const log = pino({ level: 'warn' });

async function rawInsert(batches: Batch[]) {
  // The same rows the service writes, derived outside the timed section.
  const origin = otlpOrigin('bench-key', 'bench-user');
  // As the arrays of values of each table's insert columns: Lookout's insert format (encoded-rows.ts).
  const derived = batches.map((b) => {
    const { valid } = validateExport(decodeProtobufExport(b.protobuf));
    const rows: SpanEventRows = deriveRequestRows(normalizeExport(valid, { tenantId: 'bench-tenant', projectId: 'bench-project' }), origin).rows;
    return {
      spans: rows.spans.map(spanValues),
      generations: rows.generations.map(generationValues),
      tools: rows.tools.map(toolValues),
      errors: rows.errors.map(errorValues),
    };
  });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lookout-bench-raw-'));
  const ch = await openClickHouse({ url: null, user: '', password: '', database: 'lookout', cluster: null, dataDir: dir });
  await migrateClickHouse(ch, path.join(root, 'clickhouse'));
  const perInsert = 8; // about what one service flush carries with 8 senders
  let spans = 0;
  const started = process.hrtime.bigint();
  const cpuStarted = process.cpuUsage();
  for (let i = 0; i < derived.length; i += perInsert) {
    const group = derived.slice(i, i + perInsert);
    const insert = async (table: InsertTable, values: unknown[][]) => {
      if (values.length > 0) await ch.client.insert({ table: ch.table(table), values, columns: [...INSERT_COLUMNS[table]] as [string, ...string[]], format: INSERT_FORMAT });
    };
    await insert('event_generation_completed', group.flatMap((g) => g.generations));
    await insert('event_tool_called', group.flatMap((g) => g.tools));
    await insert('event_span_errored', group.flatMap((g) => g.errors));
    await insert('spans', group.flatMap((g) => g.spans));
    spans += group.reduce((n, g) => n + g.spans.length, 0);
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const cpu = process.cpuUsage(cpuStarted);
  await ch.close();
  fs.rmSync(dir, { recursive: true, force: true });
  return { spans, seconds, rate: spans / seconds, cpuSeconds: (cpu.user + cpu.system) / 1e6, format: `${INSERT_FORMAT} of the insert columns, row arrays serialized by the client` };
}

interface Api {
  url: string;
  project: string;
}

async function api<T>(a: Api, method: string, route: string, body?: unknown): Promise<T> {
  const res = await fetch(`${a.url}/api${route}`, {
    method,
    headers: { authorization: `Bearer ${BENCH_KEY}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method} ${route}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

/** Rows of `from` in the project as a user's query sees them (the analytics API), total and distinct by `distinct`. */
async function countEvents(a: Api, from: string, distinct?: string): Promise<{ count: number; distinct: number }> {
  const day = 86_400_000;
  const iso = (ms: number) => formatUtcSecond(new Date(ms));
  const measures: unknown[] = [{ as: 'n', agg: 'count' }];
  if (distinct) measures.push({ as: 'd', agg: 'uniqExact', field: distinct });
  const answer = await api<{ rows: { n: number | string; d?: number | string }[] }>(a, 'POST', `/projects/${a.project}/analytics/query`, {
    from,
    start: iso(Date.now() - day),
    end_exclusive: iso(Date.now() + day),
    measures,
  });
  const row = answer.rows[0] ?? { n: 0 };
  return { count: Number(row.n), distinct: Number(row.d ?? row.n) };
}

/** The service's TRACE_SETTLE_MS (the bench starts it with the environment's value or the default). */
const SETTLE_MS = Number(process.env.TRACE_SETTLE_MS ?? 3000);

/**
 * Waits until a phase is settled: `expected` trace.processed rows in all, and the issue extraction
 * (the hooks, which run after the row is written) done for the phase's last traces. Returns when.
 * The phase's last traces cannot settle before TRACE_SETTLE_MS after their last span, so polling
 * starts only then, and the hooks' check looks every 200 ms (was 50): each poll is an analytics
 * query (FINAL over trace.processed) or four trace reads, counted in the service's CPU — polled as
 * before they were ~10–25 ms per 1000 spans of "engine" CPU in a 40-batch run. The end-to-end time
 * is resolved to ~250 ms.
 */
async function waitSettled(a: Api, expected: number, lastTraces: string[]): Promise<number> {
  await new Promise((r) => setTimeout(r, SETTLE_MS));
  const deadline = Date.now() + 600_000;
  while ((await countEvents(a, 'trace.processed')).count < expected) {
    if (Date.now() > deadline) throw new Error('traces did not settle');
    await new Promise((r) => setTimeout(r, 250));
  }
  const processedAt = Date.now();
  for (const otel of lastTraces) {
    for (;;) {
      const route = `/traces/${lookoutTraceId(a.project, otel)}?span_limit=1&include_attributes=false&include_events=false`;
      const detail = await api<{ issue_extraction: { status: string } | null }>(a, 'GET', route);
      if (detail.issue_extraction?.status === 'completed') break;
      if (Date.now() > deadline) throw new Error('hooks did not finish');
      // Each look is 4 trace reads the service's CPU includes: a few, not one every 50 ms.
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  return Math.max(processedAt, Date.now() - 100);
}

interface Phase {
  name: string;
  spans: number;
  accepted: { seconds: number; rate: number; retries: number };
  endToEndSeconds: number;
  cpu: CpuSplit;
}

async function runPhase(svc: ServiceProcess, sampler: CpuSampler, batches: Batch[], encoding: 'protobuf' | 'json', tracesBefore: number) {
  const a: Api = svc;
  const before = sampler.snapshot();
  const started = Date.now();
  const accepted = await sendBatches(svc, batches, CONCURRENCY, encoding);
  const traces = batches.reduce((n, b) => n + b.traceIds.length, 0);
  const last = batches.slice(-2).flatMap((b) => b.traceIds.slice(-3));
  const settledAt = await waitSettled(a, tracesBefore + traces, last);
  return { before, after: sampler.snapshot(), spans: accepted.spans, traces, accepted, endToEndSeconds: (settledAt - started) / 1000 };
}

async function main() {
  process.stdout.write(`generating ${BATCHES} protobuf and ${BATCHES} JSON batches of ${BATCH_SPANS} spans...\n`);
  const protoBatches = Array.from({ length: BATCHES }, () => syntheticBatch(BATCH_SPANS, undefined, CONTENT));
  const jsonBatches = Array.from({ length: BATCHES }, () => syntheticBatch(BATCH_SPANS, undefined, CONTENT));
  const warmup = Array.from({ length: 4 }, () => syntheticBatch(BATCH_SPANS, undefined, CONTENT));
  const mb = (n: number) => (n / 1024 / 1024).toFixed(1);
  process.stdout.write(
    `batch size: protobuf ${mb(protoBatches[0].protobuf.length)} MiB, JSON ${mb(jsonBatches[0].json.length)} MiB; load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}\n`,
  );

  // The compute pool writes its CPU per task here on close.
  const statsFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'lookout-bench-compute-')), 'compute-stats.json');
  // The store writes its statements per kind and the engine's counters here on close.
  const engineFile = path.join(path.dirname(statsFile), 'engine-stats.json');
  // The PostgreSQL store writes its statements per kind here on close.
  const postgresFile = path.join(path.dirname(statsFile), 'postgres-stats.json');
  const service = await startServiceProcess('ingest', {}, { statsFiles: { compute: statsFile, clickhouse: engineFile, postgres: postgresFile } });
  const sampler = cpuSampler(service.pid);
  let stopped = false;
  try {
    const a: Api = service;
    for (let i = 0; i < MONITORS; i++) {
      await api(a, 'POST', `/projects/${a.project}/monitors`, { name: `lookup failures ${i}`, kind: 'tool', tool_name: 'lookup_order', issue_criteria: { error: true } });
    }
    await sendBatches(service, warmup, CONCURRENCY);
    const warmTraces = warmup.reduce((n, b) => n + b.traceIds.length, 0);
    await waitSettled(a, warmTraces, warmup.at(-1)!.traceIds.slice(-3));
    const proto = await runPhase(service, sampler, protoBatches, 'protobuf', warmTraces);
    const json = await runPhase(service, sampler, jsonBatches, 'json', warmTraces + proto.traces);
    // What a user's query sees: every acknowledged span's events once, every trace processed once.
    const all = [...warmup, ...protoBatches, ...jsonBatches];
    const spansSent = all.reduce((n, b) => n + b.spans, 0);
    const tracesSent = all.reduce((n, b) => n + b.traceIds.length, 0);
    const generations = await countEvents(a, 'generation.completed', 'span_id');
    const tools = await countEvents(a, 'tool.called', 'span_id');
    const processed = await countEvents(a, 'trace.processed');
    const rss = memoryMiB(service.pid, 'VmHWM');
    const stopStarted = Date.now();
    await service.stop();
    stopped = true;
    sampler.stop();
    const shutdownMs = Date.now() - stopStarted;
    const last = sampler.last();
    const compute = readComputeStats(statsFile);
    const engine = readEngineStats(engineFile);
    const postgresStats = readPostgresStats(postgresFile);

    const raw = await rawInsert(protoBatches);
    const split = (p: { before: CpuSnapshot; after: CpuSnapshot }) => cpuBetween(p.before, p.after, service.pid, compute.threadIds);
    const phases: Phase[] = [
      { name: 'protobuf', ...proto, cpu: split(proto) },
      { name: 'JSON', ...json, cpu: split(json) },
    ];
    const shutdown = cpuBetween(json.after, last, service.pid, compute.threadIds);
    const perK = (ms: number, spans: number) => `${((ms * 1000) / spans).toFixed(1)} ms`;
    const rate = (n: number) => Math.round(n).toLocaleString('en-US');
    const measuredSpans = proto.spans + json.spans;
    const decodeMs = compute.msByTask['prepare-ingest'] ?? 0;
    const summariesMs = compute.msByTask['settle-summaries'] ?? 0;
    // The compute pool's totals cover the whole run: take out the warm-up's share (its spans, same work per span).
    const measuredShare = measuredSpans / spansSent;
    const lines = [
      '',
      `cpus: ${os.cpus().length}, memory: ${Math.round(os.totalmem() / 2 ** 30)} GiB, node ${process.version}, load average now ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`,
      `${BATCHES} batches x ${BATCH_SPANS} spans per encoding, ${CONCURRENCY} concurrent senders${MONITORS > 0 ? `, ${MONITORS} monitors on the project` : ''}`,
    ];
    for (const p of phases) {
      lines.push(
        `${p.name.padEnd(8)} accepted ${rate(p.accepted.rate).padStart(7)} spans/s (${p.accepted.seconds.toFixed(2)} s), ` +
          `end to end (to the last trace.processed and its hooks) ${rate(p.spans / p.endToEndSeconds).padStart(7)} spans/s (${p.endToEndSeconds.toFixed(2)} s), ` +
          `retries after 429/503: ${p.accepted.retries}`,
        `         CPU per 1000 spans: service ${perK(p.cpu.total, p.spans)} = event loop ${perK(p.cpu.eventLoop, p.spans)} + compute pool ${perK(p.cpu.compute, p.spans)} ` +
          `+ ClickHouse engine and other threads ${perK(p.cpu.engine, p.spans)}; PostgreSQL server ${perK(p.cpu.postgres, p.spans)}`,
        enginePoolsLine(p.cpu.engineByName, p.spans),
      );
    }
    const both = { total: phases[0].cpu.total + phases[1].cpu.total, postgres: phases[0].cpu.postgres + phases[1].cpu.postgres };
    lines.push(
      `compute pool, both encodings: decode+validate+normalize+rows ${perK(decodeMs * measuredShare, measuredSpans)}, settle summaries ${perK(summariesMs * measuredShare, measuredSpans)} per 1000 spans`,
      `raw @clickhouse/client insert: ${rate(raw.rate)} spans/s (${raw.seconds.toFixed(2)} s), CPU per 1000 spans ${perK(raw.cpuSeconds * 1000, raw.spans)} (${raw.format})`,
      `ratio JSON / raw: ${(json.accepted.rate / raw.rate).toFixed(2)}`,
      ...(engine ? engineStatsLines(engine, spansSent) : ['engine statements: no engine statistics file written']),
      ...(postgresStats ? postgresStatsLines(postgresStats, spansSent) : ['PostgreSQL statements: no PostgreSQL statistics file written']),
      `query after the run: generation.completed ${generations.count} (distinct span ids ${generations.distinct}), tool.called ${tools.count} (distinct ${tools.distinct}), ` +
        `trace.processed ${processed.count} of ${tracesSent} traces sent (${spansSent} spans)`,
      `lost: ${Math.max(0, tracesSent - processed.count)} traces, doubled: ${Math.max(0, processed.count - tracesSent)} traces, ` +
        `${generations.count - generations.distinct + (tools.count - tools.distinct)} repeated event rows`,
      `service peak RSS: ${rss} MiB; graceful shutdown took ${shutdownMs} ms (CPU ${shutdown.total.toFixed(0)} ms, nothing left to settle)`,
      `PostgreSQL server CPU per 1000 spans (outside the service process): ${perK(both.postgres, measuredSpans)}`,
      '',
      `accepted protobuf spans/s: ${rate(proto.accepted.rate)}`,
      `ratio protobuf / raw: ${(proto.accepted.rate / raw.rate).toFixed(2)}`,
      `service CPU per 1000 spans, settling and hooks included: ${((both.total * 1000) / measuredSpans).toFixed(1)} ms`,
      '',
    );
    process.stdout.write(lines.join('\n'));
  } finally {
    sampler.stop();
    if (!stopped) await service.stop();
    fs.rmSync(path.dirname(statsFile), { recursive: true, force: true });
  }
}

main().catch((error) => {
  log.error(error);
  process.exit(1);
});
