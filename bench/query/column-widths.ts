/**
 * What the per-span generation table's column widths and codecs cost the statements that sum over
 * every row (issue 17, session 8): model_scorecard's generation statement and the sums of general's
 * and the DSL's by-model statement read input/output tokens (UInt64) and tps (Nullable(Float64)) of
 * every row in the window. Copies of the table as migration 010 leaves it, one per variant:
 *   u64           input_tokens / output_tokens UInt64, LZ4 (today)
 *   u32           the same as UInt32 (a token count per call fits 4 bytes)
 *   t64           UInt64 with CODEC(T64, LZ4) (bit-packs the small values)
 *   t64only       UInt64 with CODEC(T64)
 *   t64+ts_dd     t64, and timestamp CODEC(DoubleDelta, LZ4)
 *   t64+ts_delta  t64, and timestamp CODEC(Delta, LZ4)
 * written in --inserts time-ordered inserts, then merged (OPTIMIZE FINAL: the bench's merged state,
 * where FINAL costs nothing and the scan is the whole cost). Times each statement per variant,
 * interleaved, answers compared with the u64 copy's.
 *
 *   npx tsx bench/query/column-widths.ts [--rows 10000000] [--inserts 16] [--runs 9] [--variants u64,t64]
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openClickHouse } from '../../src/platform/clickhouse/clickhouse.js';

const args = process.argv.slice(2);
const flag = (name: string, fallback: number) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const ROWS = flag('rows', 10_000_000);
const INSERTS = flag('inserts', 16);
const RUNS = flag('runs', 9);
const SPAN = 30 * 86_400_000;
const TENANT = '5d1c8a0e-2f4b-4c6d-9e8f-0a1b2c3d4e5f';
const PROJECT = 'a7e3b9c1-d5f2-4a8b-b6c4-e1f2a3b4c5d6';

// Each variant: the token columns' type and the timestamp's codec.
const VARIANTS: Record<string, { tokens: string; timestamp: string }> = {
  u64: { tokens: 'UInt64', timestamp: '' },
  u32: { tokens: 'UInt32', timestamp: '' },
  t64: { tokens: 'UInt64 CODEC(T64, LZ4)', timestamp: '' },
  t64only: { tokens: 'UInt64 CODEC(T64)', timestamp: '' },
  't64+ts_dd': { tokens: 'UInt64 CODEC(T64, LZ4)', timestamp: 'CODEC(DoubleDelta, LZ4)' },
  't64+ts_delta': { tokens: 'UInt64 CODEC(T64, LZ4)', timestamp: 'CODEC(Delta, LZ4)' },
};
const only = args.includes('--variants') ? args[args.indexOf('--variants') + 1].split(',') : Object.keys(VARIANTS);
const TOKENS = Object.fromEntries(only.map((name) => [name, VARIANTS[name]]));
const table = (name: string) => `lookout.\`${name}\``;
const hex16 = (value: string) => `leftPad(hex(${value}), 16, '0')`;

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lookout-column-widths-'));
const ch = await openClickHouse({ url: null, user: 'default', password: '', database: 'lookout', cluster: null, dataDir: dir });
try {
  for (const [name, { tokens, timestamp }] of Object.entries(TOKENS)) {
    await ch.client.command({
      query: `CREATE TABLE ${table(name)} (tenant_id LowCardinality(String), project_id LowCardinality(String), timestamp DateTime64(3, 'UTC') ${timestamp},
        model LowCardinality(String), provider LowCardinality(String), trace_id UUID CODEC(LZ4), span_id UInt64 CODEC(LZ4), duration_ms Float64,
        input_tokens ${tokens}, output_tokens ${tokens}, tps Nullable(Float64), error UInt8, inserted_at DateTime64(3, 'UTC') DEFAULT now64(3))
        ENGINE = ReplacingMergeTree(inserted_at) PARTITION BY toDate(timestamp) ORDER BY (tenant_id, project_id, timestamp, trace_id, span_id)`,
    });
  }
  for (let i = 0; i < INSERTS; i++) {
    const lo = Math.floor((ROWS * i) / INSERTS);
    const hi = Math.floor((ROWS * (i + 1)) / INSERTS);
    for (const name of Object.keys(TOKENS)) {
      await ch.client.command({
        query: `INSERT INTO ${table(name)} (tenant_id, project_id, timestamp, model, provider, trace_id, span_id, duration_ms, input_tokens, output_tokens, tps, error)
        SELECT '${TENANT}', '${PROJECT}', toDateTime64('2026-11-01 00:00:00', 3, 'UTC') + toIntervalMillisecond(intDiv(number * ${SPAN}, ${ROWS})),
        concat('model-', toString(cityHash64(number, 9) % 12)), ['openai', 'anthropic', ''][1 + cityHash64(number, 8) % 3],
        toUUID(UUIDNumToString(toFixedString(unhex(concat(${hex16('cityHash64(intDiv(number, 10), 5)')}, ${hex16('cityHash64(intDiv(number, 10), 6)')})), 16))),
        cityHash64(number, 2), (cityHash64(number, 3) % 600000) / 100, 200 + cityHash64(number, 4) % 8000, 20 + cityHash64(number, 7) % 1500,
        if(cityHash64(number, 10) % 10 = 0, NULL, (cityHash64(number, 11) % 20000) / 100), cityHash64(number, 12) % 50 = 0
        FROM numbers(${lo}, ${hi - lo})`,
      });
    }
  }
  for (const name of Object.keys(TOKENS)) await ch.client.command({ query: `OPTIMIZE TABLE ${table(name)} FINAL` });
  const sizes = await (await ch.client.query({
    query: `SELECT table, column, formatReadableSize(sum(column_data_compressed_bytes)) AS compressed, formatReadableSize(sum(column_data_uncompressed_bytes)) AS raw
      FROM system.parts_columns WHERE active AND database = 'lookout' AND column IN ('input_tokens', 'output_tokens', 'timestamp') GROUP BY table, column ORDER BY table, column`,
    format: 'JSONEachRow',
  })).json();
  console.log('sizes:', JSON.stringify(sizes));
  const where = `WHERE tenant_id = '${TENANT}' AND project_id = '${PROJECT}' AND timestamp >= toDateTime64('2026-10-31 00:00:00', 3, 'UTC') AND timestamp < toDateTime64('2026-12-01 00:00:00', 3, 'UTC')`;
  const statements: Record<string, (t: string) => string> = {
    'count by model (the scan itself)': (t) => `SELECT model, count() AS n FROM ${table(t)} FINAL ${where} GROUP BY model ORDER BY model`,
    'model_scorecard generations': (t) => `SELECT model, sum(input_tokens) AS i, sum(output_tokens) AS o, avg(tps) AS s, arraySort(groupUniqArray(provider)) AS p,
      uniqExactIf(trace_id, model = '') AS u FROM ${table(t)} FINAL ${where} GROUP BY model ORDER BY model`,
    'token sums by model': (t) => `SELECT model, sum(input_tokens) AS i, sum(output_tokens) AS o FROM ${table(t)} FINAL ${where} GROUP BY model ORDER BY model`,
    'DSL generations per day (count, errors, avg tps)': (t) => `SELECT toDate(timestamp) AS d, count() AS n, countIf(error = 1) AS e, avgOrNull(tps) AS s
      FROM ${table(t)} FINAL ${where} GROUP BY d ORDER BY d`,
    'DSL models (count, p95, tokens)': (t) => `SELECT model, count() AS n, quantileExact(0.95)(duration_ms) AS p, sum(input_tokens) AS i, sum(output_tokens) AS o
      FROM ${table(t)} FINAL ${where} GROUP BY model ORDER BY model`,
  };
  const times: Record<string, number[]> = {};
  const wrong = new Set<string>();
  const reference: Record<string, string> = {};
  for (let r = 0; r < RUNS; r++) {
    for (const [label, statement] of Object.entries(statements)) {
      for (const name of Object.keys(TOKENS)) {
        const t = performance.now();
        const rows = await (await ch.client.query({ query: `${statement(name)} SETTINGS do_not_merge_across_partitions_select_final = 1`, format: 'JSONEachRow' })).json();
        // Float sums (avg) come out in the order the threads add them: compared to 10 significant digits.
        const answer = JSON.stringify(rows, (_, v) => (typeof v === 'number' && !Number.isInteger(v) ? Number(v.toPrecision(10)) : v));
        (times[`${label}, ${name}`] ??= []).push(performance.now() - t);
        reference[label] ??= answer;
        if (answer !== reference[label]) wrong.add(`${label}, ${name}`);
      }
    }
  }
  console.log(`${ROWS} rows in ${INSERTS} time-ordered inserts, merged, ${RUNS} interleaved runs; load ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  for (const [label, list] of Object.entries(times)) {
    list.sort((a, b) => a - b);
    const p = (q: number) => list[Math.min(list.length - 1, Math.floor(list.length * q))].toFixed(0).padStart(6);
    console.log(`${label.padEnd(44)} p50 ${p(0.5)}  p95 ${p(0.95)}  min ${p(0)}${wrong.has(label) ? '  WRONG' : ''}`);
  }
} finally {
  await ch.close();
  fs.rmSync(dir, { recursive: true, force: true });
}
