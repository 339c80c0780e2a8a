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
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { deriveRequestRows } from '../../src/ingest/ingest-prepare.js';
import { otlpOrigin, type SpanEventRows } from '../../src/ingest/event-rows.js';
import { normalizeExport } from '../../src/ingest/normalized-span.js';
import { decodeProtobufExport } from '../../src/ingest/otlp-decode-protobuf.js';
import { validateExport } from '../../src/ingest/span-validation.js';
import { openClickHouse } from '../../src/stores/clickhouse.js';
import { migrateClickHouse } from '../../src/stores/migrations.js';
import { sendBatches } from '../otlp-senders.js';
import { memoryMiB, numberArg, root, startServiceProcess } from '../service-process.js';
import { syntheticBatch, type Batch } from './synthetic-batch.js';

const BATCHES = numberArg('batches', 300);
const CONCURRENCY = numberArg('concurrency', 8);
const BATCH_SPANS = numberArg('batch-size', 1000);
const log = pino({ level: 'warn' });

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

  const service = await startServiceProcess('ingest');
  let stopped = false;
  try {
    await sendBatches(service, warmup, CONCURRENCY);
    const cpuBefore = service.cpu();
    const proto = await sendBatches(service, protoBatches, CONCURRENCY, 'protobuf');
    const cpuMid = service.cpu();
    const json = await sendBatches(service, jsonBatches, CONCURRENCY, 'json');
    const cpuSent = service.cpu();
    const rss = memoryMiB(service.pid, 'VmHWM');
    const stopStarted = Date.now();
    const cpuEnd = await service.stop();
    stopped = true;
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
    if (!stopped) await service.stop();
  }
}

main().catch((error) => {
  log.error(error);
  process.exit(1);
});
