/**
 * What FINAL costs on fresh per-span parts, and how much of it is decoding the sorting key's ids
 * (issue 17, migration 007). Two copies of a generation-shaped table (ReplacingMergeTree keyed
 * (tenant, project, timestamp, trace_id, span_id), as clickhouse/002), one with the ids stored LZ4,
 * one ZSTD(1) (migration 005's codec); each written in --inserts inserts in time order, each covering
 * a slice of 20 days with 1/20 of a slice overlapping the next (as ingestion's flushes lay parts out),
 * merges stopped. Times, interleaved round by round, the DSL models statement (count and exact p95
 * by model) with and without FINAL on both, and the plain read made to decode the key columns too.
 *
 *   npx tsx bench/query/final-key-columns.ts [--rows 2000000] [--inserts 16] [--runs 9]
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openClickHouse } from '../../src/stores/clickhouse.js';

const args = process.argv.slice(2);
const flag = (name: string, fallback: number) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const ROWS = flag('rows', 2_000_000);
const INSERTS = flag('inserts', 16);
const RUNS = flag('runs', 9);
const SPAN = 20 * 86_400_000;
const JITTER = Math.floor(SPAN / INSERTS / 20);

const table = (name: string, idCodec: string) => `CREATE TABLE lookout.${name} (tenant_id String, project_id String, timestamp DateTime64(3, 'UTC'),
  trace_id String CODEC(${idCodec}), span_id String CODEC(${idCodec}), model LowCardinality(String), duration_ms Float64,
  inserted_at DateTime64(3, 'UTC') DEFAULT now64(3))
  ENGINE = ReplacingMergeTree(inserted_at) PARTITION BY toYYYYMM(timestamp) ORDER BY (tenant_id, project_id, timestamp, trace_id, span_id)`;

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lookout-final-key-columns-'));
const ch = await openClickHouse({ url: null, user: 'default', password: '', database: 'lookout', cluster: null, dataDir: dir });
try {
  for (const [name, codec] of [['lz4', 'LZ4'], ['zstd', 'ZSTD(1)']]) {
    await ch.client.command({ query: table(name, codec) });
    await ch.client.command({ query: `SYSTEM STOP MERGES lookout.${name}` });
  }
  for (let i = 0; i < INSERTS; i++) {
    const lo = Math.floor((ROWS * i) / INSERTS);
    const hi = Math.floor((ROWS * (i + 1)) / INSERTS);
    const rows = `SELECT 't', 'p', toDateTime64('2026-11-01 00:00:00', 3, 'UTC') + toIntervalMillisecond(intDiv(number * ${SPAN - JITTER}, ${ROWS}) + cityHash64(number, 1) % ${JITTER}),
      concat('00000000-0000-4000-8000-', leftPad(toString(intDiv(number, 10)), 12, '0')), leftPad(lower(hex(number)), 16, '0'),
      concat('model-', toString(number % 200)), (cityHash64(number, 3) % 600000) / 100
      FROM numbers(${lo}, ${hi - lo})`;
    for (const name of ['lz4', 'zstd']) {
      await ch.client.command({ query: `INSERT INTO lookout.${name} (tenant_id, project_id, timestamp, trace_id, span_id, model, duration_ms) ${rows}` });
    }
  }
  const sizes = await (await ch.client.query({
    query: `SELECT table, count() AS parts, sum(rows) AS rows, formatReadableSize(sum(data_compressed_bytes)) AS size FROM system.parts WHERE active AND database = 'lookout' GROUP BY table ORDER BY table`,
    format: 'JSONEachRow',
  })).json();
  console.log('parts:', JSON.stringify(sizes));
  const models = (from: string, extra = '') => `SELECT model, count()${extra}, quantileExact(0.95)(duration_ms) FROM ${from} WHERE tenant_id = 't' AND project_id = 'p' GROUP BY model FORMAT Null`;
  const keyColumns = ', sum(length(trace_id) + length(span_id) + toUInt64(inserted_at) % 2)';
  const variants: Record<string, string> = {
    'FINAL, ids LZ4': models('lookout.lz4 FINAL'),
    'FINAL, ids ZSTD(1)': models('lookout.zstd FINAL'),
    'plain, ids LZ4': models('lookout.lz4'),
    'plain, ids ZSTD(1)': models('lookout.zstd'),
    'plain decoding the key columns, LZ4': models('lookout.lz4', keyColumns),
    'plain decoding the key columns, ZSTD(1)': models('lookout.zstd', keyColumns),
  };
  const times: Record<string, number[]> = {};
  for (let r = 0; r < RUNS; r++) {
    for (const [label, query] of Object.entries(variants)) {
      const t = performance.now();
      await ch.client.command({ query });
      (times[label] ??= []).push(performance.now() - t);
    }
  }
  console.log(`${ROWS} rows in ${INSERTS} time-ordered inserts, ${RUNS} interleaved runs; load ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  for (const [label, list] of Object.entries(times)) {
    list.sort((a, b) => a - b);
    console.log(`${label.padEnd(42)} p50 ${list[Math.floor(list.length / 2)].toFixed(0).padStart(6)}  min ${list[0].toFixed(0).padStart(6)}`);
  }
} finally {
  await ch.close();
  fs.rmSync(dir, { recursive: true, force: true });
}
