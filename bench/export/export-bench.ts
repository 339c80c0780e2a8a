/**
 * Benchmark of the event export (docs/data-lifecycle.md "Getting your data out"): --rows
 * generation.completed rows (default 10 million, spread over 30 days) seeded inside ClickHouse with
 * INSERT … SELECT from numbers(), then GET /api/projects/{id}/export of the whole window streamed
 * over HTTP in each format, read as fast as this process can. It prints rows/s and bytes/s per
 * format, and the service's resident memory: sampled every 100 ms during each export (its own
 * process, so nothing of this client counts), printed as a series (the highest sample of each
 * second) and its peak, the peak of the whole run (VmHWM) beside it. With `--engine-pid` (a
 * ClickHouse server's process, CLICKHOUSE_URL set) that process's memory is sampled and printed too.
 * The format `traces` (not in the default list) seeds --rows spans as well, in traces of ten, and
 * times GET …/export/traces of the window (OTLP/JSON, a line per trace).
 *
 *   npx tsx bench/export/export-bench.ts [--rows 10000000] [--formats ndjson,csv,parquet,traces] [--engine-pid PID]
 *
 * The embedded engine's data directory belongs to one process at a time: the rows are seeded by
 * the service started in this process, which then stops, and the service process measured opens
 * the same directory. Take figures on a quiet machine only (bench/README.md).
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import zlib from 'node:zlib';
import { pino } from 'pino';
import { loadConfig } from '../../src/app/config.js';
import { startService } from '../../src/app/service.js';
import { seedSpans, SPANS_PER_TRACE } from './seed-spans.js';
import { BENCH_KEY, clickHouseServerEnv, memoryMiB, numberArg, startServiceProcess } from '../service-process.js';

const ROWS = numberArg('rows', 10_000_000);
const formatsArg = process.argv.indexOf('--formats');
const FORMATS = (formatsArg > 0 ? process.argv[formatsArg + 1] : 'ndjson,csv,parquet').split(',');
const DAY = 86_400_000;
const INSERT_ROWS = 1_000_000;
const ENGINE_PID = numberArg('engine-pid', 0);
/** Spans per trace of the `traces` format's seed. */

/** Seeds the rows through a service in this process; returns the project and the window holding them. */
async function seed(dataDir: string): Promise<{ projectId: string; start: string; end: string }> {
  const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', OTLP_GRPC_PORT: '0', METRICS_PORT: '0', DATA_DIR: dataDir, LOOKOUT_BOOTSTRAP_KEY: BENCH_KEY, LOG_LEVEL: 'silent', ...clickHouseServerEnv() });
  const service = await startService(config, { logger: pino({ level: 'silent' }) });
  try {
    const headers = { authorization: `Bearer ${BENCH_KEY}`, 'content-type': 'application/json' };
    const project = (await (await fetch(`${service.url}/api/projects`, { method: 'POST', headers, body: JSON.stringify({ name: 'export bench' }) })).json()) as { id: string };
    const ch = service.deps.ch;
    const end = Math.ceil(Date.now() / DAY) * DAY;
    const base = end - 30 * DAY;
    const started = performance.now();
    for (let lo = 0; lo < ROWS; lo += INSERT_ROWS) {
      const count = Math.min(INSERT_ROWS, ROWS - lo);
      await ch.client.command({
        query: `INSERT INTO ${ch.table('event_generation_completed')}
                  (tenant_id, project_id, timestamp, actor, surface, user_id, api_key_id, model, provider, trace_id, span_id,
                   duration_ms, input_tokens, output_tokens, cached_input_tokens, tps, error)
                SELECT {tenant:String}, {project:String}, fromUnixTimestamp64Milli(toInt64({base:Int64} + (n * 2591) % ${30 * DAY}), 'UTC'),
                  'api_key', 'api', '', '', ['gpt-4o', 'gpt-4o-mini', 'claude-sonnet-4'][1 + n % 3], 'openai',
                  generateUUIDv4(n), cityHash64(n), 100 + n % 5000, 500 + n % 3000, 50 + n % 900, n % 200,
                  if(n % 7 = 0, NULL, (50 + n % 900) / (0.1 + (n % 5000) / 1000)), n % 50 = 0
                FROM (SELECT number AS n FROM numbers(${lo}, ${count}))`,
        query_params: { tenant: service.bootstrap!.tenantId, project: project.id, base },
      });
    }
    console.log(`seeded ${ROWS} generation.completed rows in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    if (FORMATS.includes('traces')) await seedSpans(ch, service.bootstrap!.tenantId, project.id, base, ROWS);
    const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');
    return { projectId: project.id, start: iso(base), end: iso(end) };
  } finally {
    await service.stop();
  }
}


/** A process's resident memory sampled every 100 ms: its peak, and the highest sample of each second. */
class RssSampler {
  peakMiB: number;
  readonly perSecond: number[] = [];
  private ticks = 0;
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly pid: number) {
    this.peakMiB = memoryMiB(pid, 'VmRSS');
    this.timer = setInterval(() => this.sample(), 100);
  }

  private sample(): void {
    const now = memoryMiB(this.pid, 'VmRSS');
    this.peakMiB = Math.max(this.peakMiB, now);
    const second = Math.floor(this.ticks++ / 10);
    this.perSecond[second] = Math.max(this.perSecond[second] ?? 0, now);
  }

  stop(): void {
    clearInterval(this.timer);
    this.sample();
  }
}

interface ExportRun {
  bytes: number;
  lines: number;
  seconds: number;
  service: RssSampler;
  engine: RssSampler | null;
}

/**
 * One export's answer as a stream of its decoded bytes: node:http, asking for gzip as a browser
 * does (the service compresses the text formats), decoded by node:zlib. Not fetch: its HTTP/1.1
 * parser pauses on every body chunk the web stream cannot take yet and puts the rest of the socket's
 * buffer back, which the next read copies again whole; on a long compressed answer that copying
 * kept this process's event loop at 100 % while the service waited (CSV after NDJSON, 1M rows:
 * 167 s instead of ~15 s), so the figures measured the client, not the export.
 */
function download(url: string): Promise<Readable> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { headers: { authorization: `Bearer ${BENCH_KEY}`, 'accept-encoding': 'gzip' } }, (res) => {
      if (res.statusCode !== 200) {
        const parts: Buffer[] = [];
        res.on('data', (c: Buffer) => parts.push(c)).on('end', () => reject(new Error(`${url}: ${res.statusCode} ${Buffer.concat(parts).toString()}`)));
        return;
      }
      resolve(res.headers['content-encoding'] === 'gzip' ? res.pipe(zlib.createGunzip()) : res);
    });
    req.on('error', reject);
  });
}

/** Streams one export, counting bytes and line ends, sampling the service's RSS (and the engine's, with --engine-pid) meanwhile. */
async function exportOnce(url: string, pid: number, query: string): Promise<ExportRun> {
  const service = new RssSampler(pid);
  const engine = ENGINE_PID > 0 ? new RssSampler(ENGINE_PID) : null;
  const started = performance.now();
  try {
    const body = await download(`${url}/api${query}`);
    let bytes = 0;
    let lines = 0;
    for await (const chunk of body as AsyncIterable<Buffer>) {
      bytes += chunk.byteLength;
      for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines++;
    }
    return { bytes, lines, seconds: (performance.now() - started) / 1000, service, engine };
  } finally {
    service.stop();
    engine?.stop();
  }
}

async function main() {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lookout-bench-export-'));
  fs.chmodSync(dataDir, 0o755);
  try {
    const { projectId, start, end } = await seed(dataDir);
    const svc = await startServiceProcess('export', { DATA_DIR: dataDir, ...clickHouseServerEnv() });
    try {
      console.log(`service RSS before the exports: ${memoryMiB(svc.pid, 'VmRSS')} MiB (peak so far ${memoryMiB(svc.pid, 'VmHWM')} MiB)`);
      for (const format of FORMATS) {
        const window = `start=${start}&end_exclusive=${end}`;
        const query = format === 'traces' ? `/projects/${projectId}/export/traces?${window}` : `/projects/${projectId}/export?from=generation.completed&${window}&format=${format}`;
        const r = await exportOnce(svc.url, svc.pid, query);
        // NDJSON: a line per row; CSV: the header line besides; traces: a line per trace of SPANS_PER_TRACE
        // spans; Parquet: rows as seeded (the file is checked by the tests).
        const rows = format === 'ndjson' ? r.lines : format === 'csv' ? r.lines - 1 : format === 'traces' ? r.lines * SPANS_PER_TRACE : ROWS;
        if (format !== 'parquet' && rows !== ROWS) throw new Error(`${format}: ${rows} rows exported, ${ROWS} seeded`);
        console.log(
          `${format.padEnd(7)} ${rows} rows, ${(r.bytes / 2 ** 20).toFixed(1)} MiB in ${r.seconds.toFixed(1)} s: ` +
            `${Math.round(rows / r.seconds).toLocaleString('en-US')} rows/s, ${(r.bytes / 2 ** 20 / r.seconds).toFixed(1)} MiB/s; service RSS peak ${r.service.peakMiB} MiB` +
            (r.engine ? `, engine RSS peak ${r.engine.peakMiB} MiB` : ''),
        );
        console.log(`        service RSS per second (MiB): ${r.service.perSecond.join(' ')}`);
        if (r.engine) console.log(`        engine RSS per second (MiB): ${r.engine.perSecond.join(' ')}`);
      }
      console.log(`service peak RSS of the whole run (VmHWM): ${memoryMiB(svc.pid, 'VmHWM')} MiB`);
    } finally {
      // Removes only the directory the process was started with; this run's is removed below.
      await svc.stop();
    }
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
