/**
 * Where the OTLP trace export's memory goes (docs/data-lifecycle.md "Getting your data out"): seeds
 * --rows spans as bench/export/export-bench.ts does (traces of ten over 30 days, straight into
 * `spans`), then reads the export of the whole window in this process, from the service's own
 * export code, and prints once a second: the process's RSS, the V8 heap used, the memory outside it
 * (Buffers), the embedded engine's own accounting (system.metrics MemoryTracking) and the rows the
 * engine selected so far (system.events SelectedRows), and the merges running with their memory
 * (system.merges). With `--raw` the slices' statements are
 * streamed as the engine answers them, without the conversion to OTLP lines, so what the engine
 * holds shows apart from what the conversion holds.
 *
 *   npx tsx bench/export/trace-export-memory.ts [--rows 1000000] [--raw] [--slice-spans 250000] [--after-merges]
 *
 * `--after-merges` starts the export only once the engine runs no merge (the seed's parts merged);
 * `--explain` prints the engine's plan of the first slice's statement (indexes, read order) first.
 *
 * Everything runs in one process (the client only drains the stream); take figures on a quiet
 * machine (bench/README.md).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pino } from 'pino';
import { loadConfig } from '../../src/app/config.js';
import { startService } from '../../src/app/service.js';
import type { ClickHouseStore } from '../../src/platform/clickhouse/clickhouse.js';
import { seedSpans } from './seed-spans.js';
import { SLICE_SPANS as DEFAULT_SLICE_SPANS, streamTraceExport, traceExportParts } from '../../src/lifecycle/trace-export.js';
import { compile } from '../../src/platform/clickhouse/sql/compile.js';
import { BENCH_KEY, numberArg } from '../service-process.js';

const ROWS = numberArg('rows', 1_000_000);
const RAW = process.argv.includes('--raw');
const SLICE_SPANS = numberArg('slice-spans', DEFAULT_SLICE_SPANS);
const AFTER_MERGES = process.argv.includes('--after-merges');
const EXPLAIN = process.argv.includes('--explain');
const settingsArg = process.argv.indexOf('--settings');
/** `--settings a=1,b=2`: more settings for the slices' statements (with --raw only). */
const EXTRA_SETTINGS = Object.fromEntries(
  (settingsArg > 0 ? process.argv[settingsArg + 1].split(',') : []).map((pair) => pair.split('=')).map(([k, v]) => [k, Number(v)]),
);
const DAY = 86_400_000;
const MiB = 2 ** 20;


async function engineFigure(ch: ClickHouseStore, table: 'metrics' | 'events', name: string): Promise<number> {
  const column = table === 'metrics' ? 'metric' : 'event';
  const result = await ch.client.query({ query: `SELECT value FROM system.${table} WHERE ${column} = {name:String}`, query_params: { name }, format: 'JSONEachRow' });
  const rows = await result.json<{ value: string | number }>();
  return Number(rows[0]?.value ?? 0);
}

async function main(): Promise<void> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lookout-trace-export-memory-'));
  const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', OTLP_GRPC_PORT: '0', METRICS_PORT: '0', DATA_DIR: dataDir, LOOKOUT_BOOTSTRAP_KEY: BENCH_KEY, LOG_LEVEL: 'silent' });
  const service = await startService(config, { logger: pino({ level: 'silent' }) });
  try {
    const headers = { authorization: `Bearer ${BENCH_KEY}`, 'content-type': 'application/json' };
    const project = (await (await fetch(`${service.url}/api/projects`, { method: 'POST', headers, body: JSON.stringify({ name: 'trace export memory' }) })).json()) as { id: string };
    const { ch, compute } = service.deps;
    const tenantId = service.bootstrap!.tenantId;
    const end = Math.ceil(Date.now() / DAY) * DAY;
    const base = end - 30 * DAY;
    const seeded = performance.now();
    await seedSpans(ch, tenantId, project.id, base, ROWS);
    console.log(`seeded ${ROWS} spans in ${((performance.now() - seeded) / 1000).toFixed(1)} s; load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
    if (AFTER_MERGES) {
      for (;;) {
        const [m] = await (await ch.client.query({ query: 'SELECT count() AS n FROM system.merges', format: 'JSONEachRow' })).json<{ n: string | number }>();
        if (Number(m.n) === 0) break;
        await new Promise((resolve) => setTimeout(resolve, 1000));
      }
      console.log(`merges done after ${((performance.now() - seeded) / 1000).toFixed(1)} s`);
    }
    const scope = { tenantId, projectId: project.id };
    const window = { start: new Date(base), endExclusive: new Date(end) };
    const deps = { ch, compute, config: { exportTimeoutSeconds: 3600 } };
    if (EXPLAIN) {
      const { parts, settings } = await traceExportParts(deps, scope, window, SLICE_SPANS);
      console.log(`${parts.length} slices; the first one's plan:`);
      for (const kind of ['indexes = 1', 'PIPELINE']) {
        const plan = await ch.client.query({ query: `EXPLAIN ${kind} ${compile(parts[0].statement, 'literal', settings).sql}`, format: 'TabSeparatedRaw' });
        console.log(await plan.text());
      }
    }
    console.log(`rss before the export ${(process.memoryUsage().rss / MiB).toFixed(0)} MiB`);
    const selectedBefore = await engineFigure(ch, 'events', 'SelectedRows');
    const started = performance.now();
    let body: Readable;
    if (RAW) {
      const { parts, settings } = await traceExportParts(deps, scope, window, SLICE_SPANS);
      console.log(`${parts.length} slices`);
      body = await ch.streamParts(parts, { lane: 'analytics', scope, timeoutSeconds: 3600, settings: { ...settings, ...EXTRA_SETTINGS } });
    } else {
      body = await streamTraceExport(deps, scope, window, SLICE_SPANS);
    }
    let bytes = 0;
    let lines = 0;
    let peak = 0;
    let largestChunk = 0;
    const sample = async () => {
      const m = process.memoryUsage();
      peak = Math.max(peak, m.rss);
      const engine = await engineFigure(ch, 'metrics', 'MemoryTracking');
      const selected = (await engineFigure(ch, 'events', 'SelectedRows')) - selectedBefore;
      const [merges] = await (await ch.client.query({ query: 'SELECT count() AS n, sum(memory_usage) AS bytes FROM system.merges', format: 'JSONEachRow' })).json<{ n: string | number; bytes: string | number }>();
      const t = ((performance.now() - started) / 1000).toFixed(0);
      console.log(
        `${t.padStart(4)} s  rss ${(m.rss / MiB).toFixed(0)}  heap ${(m.heapUsed / MiB).toFixed(0)}/${(m.heapTotal / MiB).toFixed(0)}  external ${(m.external / MiB).toFixed(0)}  ` +
          `engine ${(engine / MiB).toFixed(0)} MiB (merges ${merges.n}: ${(Number(merges.bytes) / MiB).toFixed(0)} MiB)  selected ${(selected / 1e6).toFixed(1)} M rows  out ${(bytes / MiB).toFixed(0)} MiB ${lines} lines`,
      );
    };
    const timer = setInterval(() => void sample(), 1000);
    for await (const chunk of body as AsyncIterable<Buffer>) {
      bytes += chunk.byteLength;
      largestChunk = Math.max(largestChunk, chunk.byteLength);
      for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines++;
    }
    clearInterval(timer);
    await sample();
    const seconds = (performance.now() - started) / 1000;
    console.log(`${RAW ? 'raw rows' : 'OTLP lines'}: ${lines} lines, ${(bytes / MiB).toFixed(0)} MiB in ${seconds.toFixed(1)} s (largest chunk ${(largestChunk / MiB).toFixed(1)} MiB); rss peak ${(peak / MiB).toFixed(0)} MiB; load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  } finally {
    await service.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
