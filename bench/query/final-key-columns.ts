/**
 * What FINAL costs on fresh per-span parts, and how much of it is decoding the sorting key's ids
 * (issue 17, migrations 007 and 008). Copies of a generation-shaped table (ReplacingMergeTree keyed
 * (tenant, project, timestamp, trace_id, span_id), as clickhouse/002), each storing the ids another
 * way (--variants picks them; default all):
 *   strings   the ids as text, LZ4 (migration 007's schema)
 *   zstd      the ids as text, ZSTD(1) (migration 005's codec)
 *   uuid      tenant, project and trace id as UUID, span id text
 *   fixed16   UUIDs, span id FixedString(16) (its 16 hex characters)
 *   uint64    UUIDs, span id UInt64 (the 8 bytes the hex spells)
 *   lc        tenant and project LowCardinality(String), trace id UUID, span id UInt64
 *   lcstrings tenant and project LowCardinality(String), the ids as text
 *   lcuuid    tenant and project LowCardinality(String), trace id UUID, span id text
 * Tenant and project are UUID text as in the service (PostgreSQL ids). Each copy is written in
 * --inserts inserts in time order, each covering a slice of 20 days with 1/20 of a slice
 * overlapping the next (as ingestion's flushes lay parts out), merges stopped. Times, interleaved
 * round by round, the DSL models statement (count and exact p95 by model) with and without FINAL.
 *
 * Also tool_aggregates' exact distinct-trace count (FINAL, DSL form) in each variant's cheapest exact form.
 *
 *   npx tsx bench/query/final-key-columns.ts [--rows 2000000] [--inserts 16] [--runs 9] [--variants strings,uint64]
 *     [--key trace]   (trace.processed's key, (tenant, project, trace_id))
 *     [--merged]      (timed after OPTIMIZE FINAL: one part per partition)
 *     [--start 2026-10-20]  (the first day; 20 days from it)
 *     [--partition 'tuple()']  (the partition key; default toYYYYMM(timestamp))
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
const ROWS = flag('rows', 2_000_000);
const INSERTS = flag('inserts', 16);
const RUNS = flag('runs', 9);
const SPAN = 20 * 86_400_000;
const JITTER = Math.floor(SPAN / INSERTS / 20);
const TENANT = '5d1c8a0e-2f4b-4c6d-9e8f-0a1b2c3d4e5f';
const PROJECT = 'a7e3b9c1-d5f2-4a8b-b6c4-e1f2a3b4c5d6';

interface Variant {
  tenant: string;
  trace: string;
  span: string;
}
const VARIANTS: Record<string, Variant> = {
  strings: { tenant: 'String', trace: 'String CODEC(LZ4)', span: 'String CODEC(LZ4)' },
  zstd: { tenant: 'String', trace: 'String CODEC(ZSTD(1))', span: 'String CODEC(ZSTD(1))' },
  uuid: { tenant: 'UUID', trace: 'UUID', span: 'String CODEC(LZ4)' },
  fixed16: { tenant: 'UUID', trace: 'UUID', span: 'FixedString(16)' },
  uint64: { tenant: 'UUID', trace: 'UUID', span: 'UInt64' },
  lc: { tenant: 'LowCardinality(String)', trace: 'UUID', span: 'UInt64' },
  lcstrings: { tenant: 'LowCardinality(String)', trace: 'String CODEC(LZ4)', span: 'String CODEC(LZ4)' },
  lcuuid: { tenant: 'LowCardinality(String)', trace: 'UUID', span: 'String CODEC(LZ4)' },
};
const chosen = (() => {
  const i = args.indexOf('--variants');
  return i >= 0 ? args[i + 1].split(',') : Object.keys(VARIANTS);
})();

// --key trace: trace.processed's sorting key (no timestamp: a late root span may move a trace's start).
// There each row is its own trace; otherwise ten spans share a trace id.
const TRACE_KEY = args.includes('--key') && args[args.indexOf('--key') + 1] === 'trace';
const KEY = TRACE_KEY ? 'tenant_id, project_id, trace_id' : 'tenant_id, project_id, timestamp, trace_id, span_id';
const TRACE_OF = TRACE_KEY ? 'number' : 'intDiv(number, 10)';
// --partition EXPR: the partition key (default toYYYYMM(timestamp); tuple() is one partition).
// --start: the first row's day (default 2026-11-01: the 20 days then lie in one month partition).
const START = args.includes('--start') ? args[args.indexOf('--start') + 1] : '2026-11-01';
const PARTITION = args.includes('--partition') ? args[args.indexOf('--partition') + 1] : 'toYYYYMM(timestamp)';

const table = (name: string, v: Variant) => `CREATE TABLE lookout.${name} (tenant_id ${v.tenant}, project_id ${v.tenant}, timestamp DateTime64(3, 'UTC'),
  trace_id ${v.trace}, span_id ${v.span}, model LowCardinality(String), duration_ms Float64,
  inserted_at DateTime64(3, 'UTC') DEFAULT now64(3))
  ENGINE = ReplacingMergeTree(inserted_at) PARTITION BY ${PARTITION} ORDER BY (${KEY})`;

// A span id's value for its column: the hex text, or the UInt64 the 16 hex characters spell.
const spanValue = (v: Variant, hexText: string) => (v.span === 'UInt64' ? `reinterpretAsUInt64(reverse(unhex(${hexText})))` : hexText);

// 16 hex characters of a UInt64 (hex() drops leading zero bytes).
const hex16 = (value: string) => `leftPad(hex(${value}), 16, '0')`;

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lookout-final-key-columns-'));
const ch = await openClickHouse({ url: null, user: 'default', password: '', database: 'lookout', cluster: null, dataDir: dir });
try {
  for (const name of chosen) {
    await ch.client.command({ query: table(name, VARIANTS[name]) });
    await ch.client.command({ query: `SYSTEM STOP MERGES lookout.${name}` });
  }
  for (let i = 0; i < INSERTS; i++) {
    const lo = Math.floor((ROWS * i) / INSERTS);
    const hi = Math.floor((ROWS * (i + 1)) / INSERTS);
    for (const name of chosen) {
      const v = VARIANTS[name];
      const rows = `SELECT '${TENANT}', '${PROJECT}', toDateTime64('${START} 00:00:00', 3, 'UTC') + toIntervalMillisecond(intDiv(number * ${SPAN - JITTER}, ${ROWS}) + cityHash64(number, 1) % ${JITTER}),
        UUIDNumToString(toFixedString(unhex(concat(${hex16(`cityHash64(${TRACE_OF}, 5)`)}, ${hex16(`cityHash64(${TRACE_OF}, 6)`)})), 16)),
        ${spanValue(v, `lower(${hex16('cityHash64(number, 2)')})`)},
        concat('model-', toString(number % 200)), (cityHash64(number, 3) % 600000) / 100
        FROM numbers(${lo}, ${hi - lo})`;
      await ch.client.command({ query: `INSERT INTO lookout.${name} (tenant_id, project_id, timestamp, trace_id, span_id, model, duration_ms) ${rows}` });
    }
  }
  // --merged: every table merged to one part per partition first (as background merges leave it).
  if (args.includes('--merged')) {
    for (const name of chosen) {
      await ch.client.command({ query: `SYSTEM START MERGES lookout.${name}` });
      const t = performance.now();
      await ch.client.command({ query: `OPTIMIZE TABLE lookout.${name} FINAL` });
      console.log(`merged ${name} in ${(performance.now() - t).toFixed(0)} ms`);
    }
  }
  const sizes = await (await ch.client.query({
    query: `SELECT table, count() AS parts, sum(rows) AS rows, formatReadableSize(sum(data_compressed_bytes)) AS size FROM system.parts WHERE active AND database = 'lookout' GROUP BY table ORDER BY table`,
    format: 'JSONEachRow',
  })).json();
  console.log('parts:', JSON.stringify(sizes));
  const models = (from: string) => `SELECT model, count(), quantileExact(0.95)(duration_ms) FROM ${from} WHERE tenant_id = '${TENANT}' AND project_id = '${PROJECT}' GROUP BY model FORMAT Null`;
  // As the query DSL sends it: bound parameters, the time window, FINAL within partitions.
  const dsl = (from: string) => `SELECT model, count(), quantileExact(0.95)(duration_ms) FROM ${from}
    WHERE tenant_id = {t:String} AND project_id = {p:String} AND timestamp >= {from:DateTime64(3, 'UTC')} AND timestamp < {to:DateTime64(3, 'UTC')}
    GROUP BY model SETTINGS do_not_merge_across_partitions_select_final = 1 FORMAT Null`;
  // tool_aggregates' exact distinct traces per window (src/analytics/views/tool-aggregates-view.ts):
  // over String ids it hashes their UUID form when they parse as one; a UUID column is counted as is.
  const distinctTraces = (name: string) => {
    const count = VARIANTS[name].trace === 'UUID' ? 'uniqExact(trace_id)'
      : `uniqExactIf(toUUIDOrZero(trace_id), toString(toUUIDOrZero(trace_id)) = trace_id) + uniqExactIf(trace_id, toString(toUUIDOrZero(trace_id)) != trace_id)`;
    return `SELECT model, count(), ${count} FROM lookout.${name} FINAL
    WHERE tenant_id = {t:String} AND project_id = {p:String} AND timestamp >= {from:DateTime64(3, 'UTC')} AND timestamp < {to:DateTime64(3, 'UTC')}
    GROUP BY model SETTINGS do_not_merge_across_partitions_select_final = 1 FORMAT Null`;
  };
  const params = { t: TENANT, p: PROJECT, from: '2026-10-01 00:00:00.000', to: '2026-12-01 00:00:00.000' };
  const variants: Record<string, string> = {};
  for (const name of chosen) {
    variants[`FINAL, ${name}`] = models(`lookout.${name} FINAL`);
    variants[`plain, ${name}`] = models(`lookout.${name}`);
    variants[`DSL form FINAL, ${name}`] = dsl(`lookout.${name} FINAL`);
    variants[`distinct traces, ${name}`] = distinctTraces(name);
  }
  const times: Record<string, number[]> = {};
  for (let r = 0; r < RUNS; r++) {
    for (const [label, query] of Object.entries(variants)) {
      const t = performance.now();
      await ch.client.command({ query, query_params: params });
      (times[label] ??= []).push(performance.now() - t);
    }
  }
  console.log(`${ROWS} rows in ${INSERTS} time-ordered inserts, ${RUNS} interleaved runs; load ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  for (const [label, list] of Object.entries(times)) {
    list.sort((a, b) => a - b);
    console.log(`${label.padEnd(32)} p50 ${list[Math.floor(list.length / 2)].toFixed(0).padStart(6)}  min ${list[0].toFixed(0).padStart(6)}`);
  }
} finally {
  await ch.close();
  fs.rmSync(dir, { recursive: true, force: true });
}
