/**
 * Ingest benchmark (issue "OTLP trace ingestion at volume"): spans per second sustained through
 * POST /v1/traces with protobuf and with JSON (1000-span batches, 8 concurrent senders) against
 * the service on embedded ClickHouse, and in the same run the raw @clickhouse/client insert of the
 * same rows; prints both, their ratio, and the service's peak RSS.
 *
 *   npx tsx bench/ingest/ingest-bench.ts [--batches 300] [--concurrency 8] [--batch-size 1000]
 *
 * The service runs as its own process (as in production); the senders and the raw insert run here.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { deriveRequestRows } from '../../src/ingest/ingest-prepare.js';
import { otlpOrigin, type SpanEventRows } from '../../src/ingest/event-rows.js';
import { normalizeExport } from '../../src/ingest/normalized-span.js';
import { decodeProtobufExport } from '../../src/ingest/otlp-decode-protobuf.js';
import { validateExport } from '../../src/ingest/span-validation.js';
import { openClickHouse } from '../../src/stores/clickhouse.js';
import { migrateClickHouse } from '../../src/stores/migrations.js';
import { syntheticBatch, type Batch } from './synthetic-batch.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const BATCHES = arg('batches', 300);
const CONCURRENCY = arg('concurrency', 8);
const BATCH_SPANS = arg('batch-size', 1000);
const KEY = 'lk_bench_bootstrap_key_0123456789';
const log = pino({ level: 'warn' });

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/** CPU seconds (user + system, every thread: the embedded engine runs inside the service) of a process. */
function cpuSeconds(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (100/s on Linux)
}

function peakRssMiB(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? 0);
  return Math.round(kb / 1024);
}

async function startService(dataDir: string) {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'src', 'main.ts')], {
    cwd: root,
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, LOOKOUT_BOOTSTRAP_KEY: KEY, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 120_000;
  for (;;) {
    try {
      if ((await fetch(`${url}/readyz`)).ok) break;
    } catch {
      // not up yet
    }
    if (Date.now() > deadline || child.exitCode !== null) throw new Error('service did not start');
    await new Promise((r) => setTimeout(r, 200));
  }
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  // The last CPU reading before exit, so the shutdown's work (flush, settle, hooks) is counted too.
  let lastCpu = cpuSeconds(child.pid!);
  const sampler = setInterval(() => {
    try {
      lastCpu = cpuSeconds(child.pid!);
    } catch {
      // exited
    }
  }, 100);
  return {
    url,
    pid: child.pid!,
    cpu: () => cpuSeconds(child.pid!),
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
      clearInterval(sampler);
      return lastCpu;
    },
  };
}

async function sendAll(url: string, project: string, batches: Batch[], encoding: 'protobuf' | 'json') {
  let next = 0;
  let spans = 0;
  let retries = 0;
  const sender = async () => {
    for (let i = next++; i < batches.length; i = next++) {
      for (;;) {
        const res = await fetch(`${url}/v1/traces`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${KEY}`,
            'x-lookout-project': project,
            'content-type': encoding === 'protobuf' ? 'application/x-protobuf' : 'application/json',
          },
          body: new Uint8Array(encoding === 'protobuf' ? batches[i].protobuf : batches[i].json),
        });
        await res.arrayBuffer();
        if (res.status === 200) break;
        // 429/503 under overload: back off as an exporter would, and retry.
        if (res.status !== 429 && res.status !== 503) throw new Error(`unexpected ${res.status}`);
        retries++;
        await new Promise((r) => setTimeout(r, 100));
      }
      spans += batches[i].spans;
    }
  };
  const started = process.hrtime.bigint();
  await Promise.all(Array.from({ length: CONCURRENCY }, sender));
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  return { spans, seconds, rate: spans / seconds, retries };
}

async function rawInsert(batches: Batch[]) {
  // The same rows the service writes, derived outside the timed section.
  const origin = otlpOrigin('bench-key', 'bench-user');
  const derived: SpanEventRows[] = batches.map((b) => {
    const { valid } = validateExport(decodeProtobufExport(b.protobuf));
    return deriveRequestRows(normalizeExport(valid, { tenantId: 'bench-tenant', projectId: 'bench-project' }), origin).rows;
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
    const insert = async (table: string, values: object[]) => {
      if (values.length > 0) await ch.client.insert({ table: ch.table(table), values, format: 'JSONEachRow' });
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
  return { spans, seconds, rate: spans / seconds, cpuSeconds: (cpu.user + cpu.system) / 1e6 };
}

async function main() {
  process.stdout.write(`generating ${BATCHES} protobuf and ${BATCHES} JSON batches of ${BATCH_SPANS} spans...\n`);
  const protoBatches = Array.from({ length: BATCHES }, () => syntheticBatch(BATCH_SPANS));
  const jsonBatches = Array.from({ length: BATCHES }, () => syntheticBatch(BATCH_SPANS));
  const warmup = Array.from({ length: 4 }, () => syntheticBatch(BATCH_SPANS));
  const mb = (n: number) => (n / 1024 / 1024).toFixed(1);
  process.stdout.write(
    `batch size: protobuf ${mb(protoBatches[0].protobuf.length)} MiB, JSON ${mb(jsonBatches[0].json.length)} MiB\n`,
  );

  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lookout-bench-ingest-'));
  fs.chmodSync(dataDir, 0o755);
  const service = await startService(dataDir);
  try {
    const created = await fetch(`${service.url}/api/projects`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'bench' }),
    });
    const project = ((await created.json()) as { id: string }).id;
    await sendAll(service.url, project, warmup, 'protobuf');
    const cpuBefore = service.cpu();
    const proto = await sendAll(service.url, project, protoBatches, 'protobuf');
    const cpuMid = service.cpu();
    const json = await sendAll(service.url, project, jsonBatches, 'json');
    const cpuSent = service.cpu();
    const rss = peakRssMiB(service.pid);
    const stopStarted = Date.now();
    const cpuEnd = await service.stop();
    const shutdownMs = Date.now() - stopStarted;

    const raw = await rawInsert(protoBatches);
    const perK = (cpu: number, spans: number) => ((cpu * 1e6) / spans).toFixed(1);
    const row = (name: string, r: { spans: number; seconds: number; rate: number }) =>
      `${name.padEnd(34)} ${String(r.spans).padStart(9)} spans ${r.seconds.toFixed(2).padStart(7)} s ${Math.round(r.rate).toLocaleString('en-US').padStart(9)} spans/s`;
    process.stdout.write(
      [
        '',
        `cpus: ${os.cpus().length}, memory: ${Math.round(os.totalmem() / 2 ** 30)} GiB, node ${process.version}`,
        `${BATCHES} batches x ${BATCH_SPANS} spans per encoding, ${CONCURRENCY} concurrent senders`,
        row('POST /v1/traces protobuf', proto),
        row('POST /v1/traces JSON', json),
        row('raw @clickhouse/client insert', raw),
        `ratio protobuf / raw: ${(proto.rate / raw.rate).toFixed(2)}   JSON / raw: ${(json.rate / raw.rate).toFixed(2)}`,
        `retries after 429/503: protobuf ${proto.retries}, JSON ${json.retries}`,
        // CPU per 1000 spans is steadier than wall time on a shared machine (it does not count waiting for a core).
        `service CPU per 1000 spans: protobuf ${perK(cpuMid - cpuBefore, proto.spans)} ms, JSON ${perK(cpuSent - cpuMid, json.spans)} ms, ` +
          `both including settling and hooks (to exit) ${perK(cpuEnd - cpuBefore, proto.spans + json.spans)} ms; ` +
          `raw insert ${perK(raw.cpuSeconds, raw.spans)} ms`,
        `service peak RSS: ${rss} MiB; graceful shutdown (flush + settle) took ${shutdownMs} ms`,
        '',
      ].join('\n'),
    );
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((error) => {
  log.error(error);
  process.exit(1);
});
