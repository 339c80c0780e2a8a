/**
 * Which of the engine's FINAL settings matter on fresh per-span parts (issue 17, session 8).
 * A generation-shaped table as migration 009 leaves it (LowCardinality tenant/project, UUID trace id,
 * UInt64 span id, ReplacingMergeTree(inserted_at), month partitions, key (tenant, project, timestamp,
 * trace_id, span_id)), written in --inserts time-ordered inserts (1/20 of a slice overlapping the next,
 * as ingestion lays parts out), merges stopped; optionally a copy partitioned by day (--day). Times the
 * DSL models statement (count, exact p95, token sums by model over the window) under each setting,
 * interleaved round by round, and checks every answer equals the plain FINAL one.
 *
 *   npx tsx bench/query/final-settings.ts [--rows 4000000] [--inserts 16] [--runs 9] [--days 30] [--day] [--merges] [--merged]
 *   (--merges: background merges run during the timings, as after the service's own inserts)
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
const ROWS = flag('rows', 4_000_000);
const INSERTS = flag('inserts', 16);
const RUNS = flag('runs', 9);
const SPAN = flag('days', 30) * 86_400_000;
const JITTER = Math.floor(SPAN / INSERTS / 20);
const TENANT = '5d1c8a0e-2f4b-4c6d-9e8f-0a1b2c3d4e5f';
const PROJECT = 'a7e3b9c1-d5f2-4a8b-b6c4-e1f2a3b4c5d6';

const tables: Record<string, string> = {
  month: 'ENGINE = ReplacingMergeTree(inserted_at) PARTITION BY toYYYYMM(timestamp)',
  noversion: 'ENGINE = ReplacingMergeTree PARTITION BY toYYYYMM(timestamp)',
};
if (args.includes('--day')) tables.day = 'ENGINE = ReplacingMergeTree(inserted_at) PARTITION BY toDate(timestamp)';
const hex16 = (value: string) => `leftPad(hex(${value}), 16, '0')`;

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lookout-final-settings-'));
const ch = await openClickHouse({ url: null, user: 'default', password: '', database: 'lookout', cluster: null, dataDir: dir });
try {
  for (const [name, engine] of Object.entries(tables)) {
    await ch.client.command({
      query: `CREATE TABLE lookout.${name} (tenant_id LowCardinality(String), project_id LowCardinality(String), timestamp DateTime64(3, 'UTC'),
        trace_id UUID CODEC(LZ4), span_id UInt64 CODEC(LZ4), model LowCardinality(String), duration_ms Float64, input_tokens UInt64, output_tokens UInt64,
        inserted_at DateTime64(3, 'UTC') DEFAULT now64(3)) ${engine} ORDER BY (tenant_id, project_id, timestamp, trace_id, span_id)`,
    });
    if (!args.includes('--merges')) await ch.client.command({ query: `SYSTEM STOP MERGES lookout.${name}` });
  }
  for (let i = 0; i < INSERTS; i++) {
    const lo = Math.floor((ROWS * i) / INSERTS);
    const hi = Math.floor((ROWS * (i + 1)) / INSERTS);
    for (const name of Object.keys(tables)) {
      await ch.client.command({
        query: `INSERT INTO lookout.${name} (tenant_id, project_id, timestamp, trace_id, span_id, model, duration_ms, input_tokens, output_tokens)
        SELECT '${TENANT}', '${PROJECT}', toDateTime64('2026-11-01 00:00:00', 3, 'UTC') + toIntervalMillisecond(intDiv(number * ${SPAN - JITTER}, ${ROWS}) + cityHash64(number, 1) % ${JITTER}),
        toUUID(UUIDNumToString(toFixedString(unhex(concat(${hex16('cityHash64(intDiv(number, 10), 5)')}, ${hex16('cityHash64(intDiv(number, 10), 6)')})), 16))),
        cityHash64(number, 2), concat('model-', toString(number % 40)), (cityHash64(number, 3) % 600000) / 100, cityHash64(number, 4) % 5000, cityHash64(number, 7) % 900
        FROM numbers(${lo}, ${hi - lo})`,
      });
    }
  }
  if (args.includes('--merged')) {
    for (const name of Object.keys(tables)) {
      await ch.client.command({ query: `SYSTEM START MERGES lookout.${name}` });
      await ch.client.command({ query: `OPTIMIZE TABLE lookout.${name} FINAL` });
    }
  }
  const parts = await (await ch.client.query({
    query: `SELECT table, count() AS parts, max(level) AS max_level FROM system.parts WHERE active AND database = 'lookout' GROUP BY table ORDER BY table`,
    format: 'JSONEachRow',
  })).json();
  console.log('parts:', JSON.stringify(parts));
  const statement = (from: string, settings: string) => `SELECT model, count() AS n, quantileExact(0.95)(duration_ms) AS p95, sum(input_tokens) AS i, sum(output_tokens) AS o FROM ${from}
    WHERE tenant_id = {t:String} AND project_id = {p:String} AND timestamp >= {from:DateTime64(3, 'UTC')} AND timestamp < {to:DateTime64(3, 'UTC')}
    GROUP BY model ORDER BY model SETTINGS ${settings || 'do_not_merge_across_partitions_select_final = 1'}`;
  const params = { t: TENANT, p: PROJECT, from: '2026-10-31 00:00:00.000', to: '2026-12-02 00:00:00.000' };
  const variants: Record<string, string> = {
    'FINAL (as the DSL sends it)': statement('lookout.month FINAL', ''),
    'FINAL, merge across partitions': statement('lookout.month FINAL', 'do_not_merge_across_partitions_select_final = 0'),
    'FINAL, enable_vertical_final = 0': statement('lookout.month FINAL', 'do_not_merge_across_partitions_select_final = 1, enable_vertical_final = 0'),
    'FINAL, no intersecting split': statement('lookout.month FINAL', 'do_not_merge_across_partitions_select_final = 1, split_parts_ranges_into_intersecting_and_non_intersecting_final = 0'),
    'FINAL, no layers split': statement('lookout.month FINAL', 'do_not_merge_across_partitions_select_final = 1, split_intersecting_parts_ranges_into_layers_final = 0'),
    'FINAL, no version column': statement('lookout.noversion FINAL', ''),
    '~plain (not exact)': statement('lookout.month', ''),
  };
  if (tables.day) variants['FINAL, day partitions'] = statement('lookout.day FINAL', '');
  const reference = JSON.stringify(await (await ch.client.query({ query: variants['FINAL (as the DSL sends it)'], query_params: params, format: 'JSONEachRow' })).json());
  const times: Record<string, number[]> = {};
  const wrong = new Set<string>();
  for (let r = 0; r < RUNS; r++) {
    for (const [label, query] of Object.entries(variants)) {
      const t = performance.now();
      const answer = JSON.stringify(await (await ch.client.query({ query, query_params: params, format: 'JSONEachRow' })).json());
      (times[label] ??= []).push(performance.now() - t);
      if (answer !== reference && !label.startsWith('~')) wrong.add(label);
    }
  }
  console.log(`${ROWS} rows in ${INSERTS} time-ordered inserts${args.includes('--merged') ? ', merged' : ''}, ${RUNS} interleaved runs; load ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  for (const [label, list] of Object.entries(times)) {
    list.sort((a, b) => a - b);
    const p = (q: number) => list[Math.min(list.length - 1, Math.floor(list.length * q))].toFixed(0).padStart(6);
    console.log(`${label.padEnd(40)} p50 ${p(0.5)}  p95 ${p(0.95)}  min ${p(0)}${wrong.has(label) ? '  WRONG' : ''}`);
  }
} finally {
  await ch.close();
  fs.rmSync(dir, { recursive: true, force: true });
}
