/**
 * The insert format of the writer's rows, compared on the ingest bench's own batches (issue 15):
 * JSONEachRow (what Lookout sent before issue 15's format change), JSONCompactEachRow (the same
 * JSON values without the field names: what Lookout sends now, encoded-rows.ts) and TabSeparated. Per 1000 spans, old and new alternated in every round:
 *
 * - encode: thread CPU of turning the rows of a request into the insert body (the compute pool's
 *   prepare step; the other prepare steps are the same for every format and not timed);
 * - decode: thread CPU of turning the held `spans` lines back into spans (the settle task's
 *   memory path: lines → stored rows → spanFromStoredRow);
 * - engine: CPU of the embedded engine's threads (every thread but this one and the background
 *   pools) while it parses and writes each table's insert, two requests per insert as a flush has;
 * - bytes: size of the bodies; and the inserts' wall time (one at a time, so a format the engine
 *   parsed on fewer threads would show here).
 *
 * Every format's rows are inserted into a database of their own on one fresh engine; at the end
 * each table's rows (all columns but the insert time) must be the same in every database.
 *
 *   nice -n 10 npx tsx bench/ingest/row-formats.ts [--batches 16] [--rounds 5] [--per-insert 2] [--settings '{"name":value}']
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createChdbConnection } from 'chdb/connection';
import { deriveRequestRows } from '../../src/ingest/write/ingest-prepare.js';
import { encodeSpanEventRows, INSERT_COLUMNS, storedRowsFromSpanLines } from '../../src/ingest/write/encoded-rows.js';
import { otlpOrigin, type SpanEventRows } from '../../src/spans/event-rows.js';
import { normalizeExport } from '../../src/spans/normalized-span.js';
import { decodeProtobufExport } from '../../src/ingest/otlp/otlp-decode-protobuf.js';
import { validateExport } from '../../src/spans/span-validation.js';
import { spanFromStoredRow } from '../../src/spans/stored-spans.js';
import { threadCpuNs } from '../../src/platform/compute/thread-cpu.js';
import { openClickHouse, type ClickHouseStore } from '../../src/platform/clickhouse/clickhouse.js';
import { raw } from '../../src/platform/clickhouse/sql/fragment.js';
import { migrateClickHouse } from '../../src/platform/migrations.js';
import { numberArg, root } from '../service-process.js';
import { threadCpu } from './cpu-split.js';
import { syntheticBatch } from './synthetic-batch.js';
import { JSON_EACH_ROW, TAB_SEPARATED, type FormatCodec } from './row-format-codecs.js';

const BATCHES = numberArg('batches', 16);
const ROUNDS = numberArg('rounds', 5);
const PER_INSERT = numberArg('per-insert', 2);
const SPANS = 1000;
/** Insert settings to try, e.g. --settings '{"input_format_parallel_parsing":0}' (none by default, as the service inserts). */
const settingsAt = process.argv.indexOf('--settings');
const SETTINGS = JSON.parse(settingsAt >= 0 ? process.argv[settingsAt + 1] : '{}') as Record<string, number | string>;

const TABLES = ['spans', 'event_generation_completed', 'event_tool_called', 'event_span_errored'] as const;
type Table = (typeof TABLES)[number];
const rowsOf = (r: SpanEventRows, t: Table) =>
  t === 'spans' ? r.spans : t === 'event_generation_completed' ? r.generations : t === 'event_tool_called' ? r.tools : r.errors;

const origin = otlpOrigin('bench-key', 'bench-user');
const derived: SpanEventRows[] = Array.from({ length: BATCHES }, () => {
  const { valid } = validateExport(decodeProtobufExport(syntheticBatch(SPANS).protobuf));
  return deriveRequestRows(normalizeExport(valid, { tenantId: 'bench-tenant', projectId: 'bench-project' }), origin).rows;
});

/** JSONCompactEachRow as Lookout writes it (encoded-rows.ts, the settle task's decoder). */
const compact: FormatCodec = {
  name: 'JSONCompactEachRow (Lookout)',
  format: 'JSONCompactEachRow',
  columns: (t) => [...INSERT_COLUMNS[t]],
  encode: (rows) => {
    const e = encodeSpanEventRows(rows);
    return { spans: e.spans, event_generation_completed: e.generations, event_tool_called: e.tools, event_span_errored: e.errors };
  },
  decodeSpans: (bytes) => storedRowsFromSpanLines(bytes).map(spanFromStoredRow),
};
/** --serial-variant 1: also Lookout's format with the engine's parallel parsing off (one parsing thread per insert). */
const serialVariant: FormatCodec[] = numberArg('serial-variant', 0) === 1 ? [{ ...compact, name: `${compact.name}, input_format_parallel_parsing 0`, settings: { input_format_parallel_parsing: 0 } }] : [];
const codecs: FormatCodec[] = [JSON_EACH_ROW, compact, TAB_SEPARATED, ...serialVariant];

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const perK = (ns: number) => ns / 1e6 / ((BATCHES * SPANS) / 1000);
/** Threads whose CPU is background work (merges), not the running insert's. */
const BACKGROUND = /^(MergeMutate|BgSchPool|BgStrmSchPool|BgDistSchPool|Move|Fetch|Common|PoolDelayExec|MemoryWorker|Collector)/;

async function main() {
  const keepAlive = setInterval(() => {}, 1000);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lookout-row-formats-'));
  const stores: ClickHouseStore[] = [];
  for (let i = 0; i < codecs.length; i++) {
    const store = await openClickHouse({ url: null, user: '', password: '', database: `fmt_${i}`, cluster: null, dataDir: dir });
    await migrateClickHouse(store, path.join(root, 'clickhouse'));
    stores.push(store);
  }
  const chdb = createChdbConnection({ path: path.join(dir, 'clickhouse') });
  const encodeMs = new Map<string, number[]>(codecs.map((c) => [c.name, []]));
  const decodeMs = new Map<string, number[]>(codecs.map((c) => [c.name, []]));
  const engineMs = new Map<string, Map<Table, number[]>>(codecs.map((c) => [c.name, new Map(TABLES.map((t) => [t, []]))]));
  const wallMs = new Map<string, number[]>(codecs.map((c) => [c.name, []]));
  const bytes = new Map<string, Map<Table, number>>();
  for (let round = 0; round < ROUNDS; round++) {
    // Rotate which format goes first, so none always runs on a warmer (or busier) machine.
    const order = codecs.map((_, i) => codecs[(i + round) % codecs.length]);
    for (const c of order) {
      let t0 = threadCpuNs();
      const encoded = derived.map((rows) => c.encode(rows));
      encodeMs.get(c.name)!.push(perK(threadCpuNs() - t0));
      const sizes = new Map<Table, number>(TABLES.map((t) => [t, encoded.reduce((n, e) => n + e[t].body.byteLength, 0)]));
      bytes.set(c.name, sizes);
      // The settle task's memory path: each request's spans lines as one buffer, back to spans.
      t0 = threadCpuNs();
      let decoded = 0;
      for (const e of encoded) decoded += c.decodeSpans(e.spans.body).length;
      decodeMs.get(c.name)!.push(perK(threadCpuNs() - t0));
      if (decoded !== BATCHES * SPANS) throw new Error(`${c.name} decoded ${decoded} spans`);
      // Only the first round's rows are kept: later rounds insert into a scratch copy truncated first.
      const database = `fmt_${codecs.indexOf(c)}`;
      let wall = 0;
      for (const table of TABLES) {
        const target = round === 0 ? table : `${table}_scratch`;
        if (round === 1) await stores[0].command(raw(`CREATE TABLE IF NOT EXISTS ${database}.${target} AS ${database}.${table}`), 'system');
        if (round > 0) await stores[0].command(raw(`TRUNCATE TABLE ${database}.${target}`), 'system');
        let engine = 0;
        for (let i = 0; i < encoded.length; i += PER_INSERT) {
          const body = Buffer.concat(encoded.slice(i, i + PER_INSERT).map((e) => e[table].body));
          if (body.byteLength === 0) continue;
          const before = threadCpu(process.pid);
          const started = performance.now();
          await chdb.chdb.rawInsert({ table: `${database}.${target}`, values: body, format: c.format, columns: c.columns?.(table), settings: { ...SETTINGS, ...c.settings } });
          wall += performance.now() - started;
          const after = threadCpu(process.pid);
          for (const [tid, ns] of after.cpu) {
            if (tid === process.pid || BACKGROUND.test(after.names.get(tid) ?? '')) continue;
            engine += ns - (before.cpu.get(tid) ?? 0);
          }
        }
        engineMs.get(c.name)!.get(table)!.push(perK(engine));
      }
      wallMs.get(c.name)!.push(perK(wall * 1e6));
    }
  }
  // Same stored rows whatever the format: a hash of every row (insert time aside) per table.
  const mismatches: string[] = [];
  for (const table of TABLES) {
    const except = table === 'spans' ? 'ingested_at' : 'inserted_at';
    const digests = await Promise.all(
      codecs.map(async (c) => {
        const [row] = await stores[0].read<{ n: number; h: string }>(
          raw(`SELECT count() AS n, toString(sum(cityHash64(* EXCEPT (${except})))) AS h FROM fmt_${codecs.indexOf(c)}.${table}`),
          { lane: 'system' },
        );
        return `${row.n}/${row.h}`;
      }),
    );
    if (new Set(digests).size !== 1) mismatches.push(`${table}: ${codecs.map((c, i) => `${c.name} ${digests[i]}`).join(', ')}`);
  }
  const fmt = (xs: number[]) => `${median(xs).toFixed(2).padStart(6)} [${xs.map((x) => x.toFixed(1)).join(' ')}]`;
  const lines = [`${BATCHES} batches x ${SPANS} spans, ${ROUNDS} rounds, ${PER_INSERT} requests per insert, settings ${JSON.stringify(SETTINGS)}; load ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`];
  lines.push('ms per 1000 spans (median [rounds]):');
  for (const c of codecs) {
    const engine = engineMs.get(c.name)!;
    const engineTotal = Array.from({ length: ROUNDS }, (_, r) => TABLES.reduce((n, t) => n + engine.get(t)![r], 0));
    lines.push(`${c.name}:`);
    lines.push(`  encode (pool)          ${fmt(encodeMs.get(c.name)!)}`);
    lines.push(`  decode spans (settle)  ${fmt(decodeMs.get(c.name)!)}`);
    for (const t of TABLES) lines.push(`  engine ${t.padEnd(27)} ${fmt(engine.get(t)!)}  ${(bytes.get(c.name)!.get(t)! / BATCHES / 1024).toFixed(0)} KiB per 1000 spans`);
    lines.push(`  engine, four tables    ${fmt(engineTotal)}`);
    lines.push(`  inserts' wall time     ${fmt(wallMs.get(c.name)!)}`);
    lines.push(`  sum of medians         ${(median(encodeMs.get(c.name)!) + median(decodeMs.get(c.name)!) + median(engineTotal)).toFixed(2)}`);
  }
  lines.push(mismatches.length === 0 ? 'stored rows identical in every format' : `STORED ROWS DIFFER:\n  ${mismatches.join('\n  ')}`);
  process.stdout.write(`${lines.join('\n')}\n`);
  await chdb.close();
  for (const s of stores) await s.close();
  fs.rmSync(dir, { recursive: true, force: true });
  clearInterval(keepAlive);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
