/**
 * Benchmark of trace search (docs/search.md): a project of --traces traces (default 1 million, about
 * 10 spans' worth of content each) seeded inside ClickHouse — the `traces` summaries and their
 * `trace_content` rows, text drawn from a mixed-script vocabulary with a skewed word frequency — then
 * searches timed through HTTP (GET /api/projects/{id}/traces?q=, the whole API):
 *
 *   rare     a word in 1 trace of 100,000          target p95 < 300 ms
 *   common   a word in most traces, limit=50       target p95 < 500 ms
 *   phrase   a three-word phrase in 1 trace of 1000  target < 1 s
 *   cjk      a two-character Chinese word in 1 trace of 1000
 *
 * Before timing it waits until the engine has merged what the seeding inserted (no merge of either
 * table running for a few seconds, at most --settle-seconds), as a store that has held its traces a
 * while is, and prints the parts it timed against; --no-settle times right after seeding instead.
 *
 * It also prints what search costs besides: trace_content's bytes on disk (compressed, and the text
 * index's share) beside `traces`, the CPU of building content rows per 1000 spans at settling beside
 * the summary built there from the same spans (both on the compute pool, off the ingest path), and
 * the insert time of the same content rows into trace_content with and without its text index.
 *
 *   npx tsx bench/search/search-bench.ts [--traces 1000000] [--runs 20] [--inserts 16] [--settle-seconds 900] [--no-settle]
 *
 * Take figures on a quiet machine only (bench/README.md).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { loadConfig } from '../../src/app/config.js';
import { startService } from '../../src/app/service.js';
import { normalizeExport } from '../../src/spans/normalized-span.js';
import type { Attributes, DecodedSpan } from '../../src/spans/otlp-types.js';
import { traceContentRows } from '../../src/spans/trace-content.js';
import { summarizeTrace } from '../../src/spans/trace-summary.js';
import { SYSTEM_ORIGIN } from '../../src/spans/origin.js';
import { clickHouseServerEnv } from '../service-process.js';

const args = process.argv.slice(2);
const flag = (name: string, fallback: number) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const TRACES = flag('traces', 1_000_000);
const RUNS = flag('runs', 20);
const INSERTS = Math.max(1, flag('inserts', 16));
const SETTLE_SECONDS = flag('settle-seconds', 900);
const SETTLE = !args.includes('--no-settle');
const KEY = 'lk_bench_search_key_0123456789abcdef';
const DAY = 86_400_000;

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)];
}

/** Words as stored (already in their searchable form), a few very common, most rare. */
const VOCABULARY = [
  'the', 'order', 'customer', 'please', 'refund', 'shipping', 'account', 'password', 'invoice', 'delivery', 'agent', 'tool',
  'search', 'result', 'error', 'timeout', 'retry', 'policy', 'payment', 'card', 'address', 'update', 'cancel', 'subscription',
  'заказ', 'доставка', 'возврат', 'платёж', 'привет', 'спасибо', 'مرحبا', 'استرداد', 'طلب', 'شكرا', 'الشحن',
  '注文', '返金', '配送', 'ありがとう', 'タイムアウト', '订单', '物流', '申请', '退款', '客服', '환불', '주문', '배송', '요청', '감사합니다',
  'café', 'crème', 'naïve', 'über', 'straße', 'señor', 'ação', 'città',
];
const vocabularySql = `[${VOCABULARY.map((w) => `'${w}'`).join(', ')}]`;

/** `count` words drawn with a skewed frequency (squared uniform: low indexes are common), seeded by n and `salt`. */
const words = (count: number, salt: number) =>
  `arrayStringConcat(arrayMap(i -> ${vocabularySql}[1 + intDiv(toUInt64(pow(cityHash64(n, ${salt}, i) % 1000, 2)) * ${VOCABULARY.length}, 1000000)], range(${count})), ' ')`;

async function main() {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lookout-bench-search-'));
  fs.chmodSync(dataDir, 0o755);
  const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', OTLP_GRPC_PORT: '0', DATA_DIR: dataDir, LOOKOUT_BOOTSTRAP_KEY: KEY, LOG_LEVEL: 'silent', ...clickHouseServerEnv() });
  const service = await startService(config, { logger: pino({ level: 'silent' }) });
  try {
    const api = `${service.url}/api`;
    const headers = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' };
    const project = (await (await fetch(`${api}/projects`, { method: 'POST', headers, body: JSON.stringify({ name: 'bench' }) })).json()) as { id: string };
    const tenantId = service.bootstrap!.tenantId;
    const ch = service.deps.ch;
    const params = { tenant: tenantId, project: project.id, base: Date.now() - 30 * DAY };
    const traceId = `lower(hex(MD5(toString(n))))`;
    const timestamp = `fromUnixTimestamp64Milli(toInt64({base:Int64} + (n * 2591) % ${30 * DAY}), 'UTC')`;
    // Per field: the text a trace of ~10 spans carries there. Marker words: rare in 1/100,000 traces'
    // input, the phrase and the Chinese word in 1/1000.
    const fields: [string, string][] = [
      ['input', `concat(${words(60, 1)}, if(n % 100000 = 7, ' quasarblue', ''), if(n % 1000 = 3, ' a late delivery fee', ''), if(n % 1000 = 5, ' 我想申请退货', ''))`],
      ['output', words(120, 2)],
      ['tool', `concat('lookup_order ', ${words(40, 3)})`],
      ['error', `if(n % 10 = 0, concat('timeouterror ', ${words(12, 4)}), '')`],
      ['name', `'invoke_agent support\nchat gpt-4o\nexecute_tool lookup_order'`],
      ['attribute', words(20, 5)],
    ];
    let started = performance.now();
    for (let i = 0; i < INSERTS; i++) {
      const lo = Math.floor((TRACES * i) / INSERTS);
      const count = Math.floor((TRACES * (i + 1)) / INSERTS) - lo;
      if (count === 0) continue;
      await ch.client.command({
        query: `INSERT INTO ${ch.table('traces')} (tenant_id, project_id, trace_id, otel_trace_id, timestamp, agent_name, tool_calls, has_error, span_count, models_used)
                SELECT {tenant:String}, {project:String}, ${traceId}, ${traceId}, ${timestamp}, 'support', '[]', n % 10 = 0, 10, ['gpt-4o']
                FROM (SELECT number AS n FROM numbers(${lo}, ${count}))`,
        query_params: params,
      });
      for (const [field, text] of fields) {
        await ch.client.command({
          query: `INSERT INTO ${ch.table('trace_content')} (tenant_id, project_id, trace_id, field, timestamp, text, text_norm, processed_at)
                  SELECT {tenant:String}, {project:String}, ${traceId}, '${field}', ${timestamp}, t, t, ${timestamp}
                  FROM (SELECT number AS n, ${text} AS t FROM numbers(${lo}, ${count}))`,
          query_params: params,
        });
      }
    }
    console.log(`seeded ${TRACES} traces (${TRACES * fields.length} content rows) in ${INSERTS} insert(s) per table, ${((performance.now() - started) / 1000).toFixed(1)} s`);

    if (SETTLE) await settleMerges(ch.client, ch.database);
    const parts = await (await ch.client.query({
      query: `SELECT table, count() AS parts FROM system.parts WHERE database = {db:String} AND active AND table IN ('traces', 'trace_content') GROUP BY table ORDER BY table`,
      query_params: { db: ch.database },
      format: 'JSONEachRow',
    })).json<{ table: string; parts: string }>();
    console.log(`timed against ${parts.map((p) => `${p.table} ${p.parts} parts`).join(', ')} (${SETTLE ? 'merges settled' : 'right after seeding'})`);

    const disk = await (await ch.client.query({
      query: `SELECT table, sum(data_compressed_bytes) AS compressed, sum(data_uncompressed_bytes) AS uncompressed, sum(secondary_indices_compressed_bytes) AS index_bytes
              FROM system.parts WHERE database = {db:String} AND active AND table IN ('traces', 'trace_content') GROUP BY table ORDER BY table`,
      query_params: { db: ch.database },
      format: 'JSONEachRow',
    })).json<{ table: string; compressed: string; uncompressed: string; index_bytes: string }>();
    for (const d of disk) {
      console.log(`disk ${d.table}: ${(Number(d.compressed) / 2 ** 20).toFixed(1)} MiB compressed (${(Number(d.uncompressed) / 2 ** 20).toFixed(1)} MiB raw), text index ${(Number(d.index_bytes) / 2 ** 20).toFixed(1)} MiB`);
    }

    const cases: [string, string, string][] = [
      ['rare', 'quasarblue', ''],
      ['common', 'the', '&limit=50'],
      ['phrase', '"late delivery fee"', ''],
      ['cjk', '退货', ''],
    ];
    for (const [label, q, extra] of cases) {
      const times: number[] = [];
      let hits = 0;
      const before = await engineReads(ch.client);
      for (let r = 0; r < RUNS; r++) {
        started = performance.now();
        const res = await fetch(`${api}/projects/${project.id}/traces?q=${encodeURIComponent(q)}${extra}`, { headers });
        const body = (await res.json()) as { traces?: unknown[]; detail?: string };
        if (!res.ok) throw new Error(`${label}: ${res.status} ${body.detail}`);
        times.push(performance.now() - started);
        hits = body.traces!.length;
      }
      const after = await engineReads(ch.client);
      times.sort((a, b) => a - b);
      const per = (name: keyof typeof after) => (after[name] - before[name]) / RUNS;
      console.log(
        `${label.padEnd(7)} q=${q.padEnd(16)} hits on page ${String(hits).padStart(3)}  p50 ${percentile(times, 0.5).toFixed(1)} ms  p95 ${percentile(times, 0.95).toFixed(1)} ms` +
          `  per search: ${Math.round(per('SelectedRows')).toLocaleString('en')} rows in ${Math.round(per('SelectedMarks')).toLocaleString('en')} granules, ${(per('ReadCompressedBytes') / 2 ** 20).toFixed(1)} MiB read`,
      );
    }

    await settleCost();
    await indexInsertCost(ch.client, ch.table('trace_content'), ch.table('trace_content_bench_noindex'), tenantId, project.id);
  } finally {
    await service.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

/**
 * Waits until no merge of the seeded tables has run for three polls in a row (a merge often follows
 * another), at most SETTLE_SECONDS: the searches then read the parts a store that has held its traces
 * a while has, not the seeding's many small ones, and the engine's merging takes no CPU from them.
 */
async function settleMerges(client: import('@clickhouse/client').ClickHouseClient, database: string): Promise<void> {
  const started = performance.now();
  let quiet = 0;
  while (quiet < 3 && performance.now() - started < SETTLE_SECONDS * 1000) {
    const [row] = await (await client.query({
      query: `SELECT count() AS merges FROM system.merges WHERE database = {db:String} AND table IN ('traces', 'trace_content')`,
      query_params: { db: database },
      format: 'JSONEachRow',
    })).json<{ merges: string }>();
    quiet = Number(row.merges) === 0 ? quiet + 1 : 0;
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  const seconds = (performance.now() - started) / 1000;
  console.log(quiet >= 3 ? `merges settled after ${seconds.toFixed(0)} s` : `merges still running after ${SETTLE_SECONDS} s: timing anyway`);
}

/**
 * The engine's cumulative read counters (system.events; the embedded engine keeps no query log):
 * their change over a case's searches, divided by the runs, is what one search read — a figure the
 * machine's load does not change. Nothing else runs in the engine meanwhile (no ingest, no settling).
 */
async function engineReads(client: import('@clickhouse/client').ClickHouseClient): Promise<Record<'SelectedRows' | 'SelectedMarks' | 'ReadCompressedBytes', number>> {
  const rows = await (await client.query({ query: `SELECT event, value FROM system.events WHERE event IN ('SelectedRows', 'SelectedMarks', 'ReadCompressedBytes')`, format: 'JSONEachRow' })).json<{ event: string; value: string }>();
  const value = (name: string) => Number(rows.find((r) => r.event === name)?.value ?? 0);
  return { SelectedRows: value('SelectedRows'), SelectedMarks: value('SelectedMarks'), ReadCompressedBytes: value('ReadCompressedBytes') };
}

const chatAttributes = (t: number): Attributes => ({
  'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'gpt-4o', 'gen_ai.usage.input_tokens': 900, 'gen_ai.usage.output_tokens': 200,
  'gen_ai.input.messages': JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: `Where is my refund for order ${t}? `.repeat(20) }] }]),
  'gen_ai.output.messages': JSON.stringify([{ role: 'assistant', parts: [{ type: 'text', content: 'It ships tomorrow. '.repeat(40) }] }]),
});
const toolAttributes = (t: number): Attributes => ({
  'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'lookup_order',
  'gen_ai.tool.call.arguments': JSON.stringify({ order_id: String(t) }), 'gen_ai.tool.call.result': JSON.stringify({ status: 'shipped', items: ['a', 'b'] }),
});

/** CPU of trace-content rows beside the summary, over the same synthetic spans (the settle task's two parts). */
async function settleCost(): Promise<void> {
  const traces = 200;
  const sets = Array.from({ length: traces }, (_, t) => {
    const traceId = t.toString(16).padStart(32, '0');
    const spans: DecodedSpan[] = Array.from({ length: 10 }, (_, i) => ({
      traceId, spanId: (i + 1).toString(16).padStart(16, '0'), parentSpanId: i === 0 ? '' : '0000000000000001', traceState: '', name: i === 0 ? 'invoke_agent support' : i % 2 ? 'chat gpt-4o' : 'execute_tool lookup_order',
      kind: 1, startNs: String(1_700_000_000_000_000_000n + BigInt(i)), endNs: String(1_700_000_001_000_000_000n), links: [], statusCode: 0, statusMessage: '', events: [],
      attributes: i % 2 ? chatAttributes(t) : toolAttributes(t),
    }));
    return normalizeExport({ resourceSpans: [{ resource: { 'service.name': 'bench' }, scopes: [{ scopeName: 'b', scopeVersion: '', spans }] }] }, { tenantId: 't', projectId: 'p' });
  });
  const cpu = (work: () => void) => {
    const before = process.cpuUsage();
    for (let round = 0; round < 5; round++) work();
    const used = process.cpuUsage(before);
    return (used.user + used.system) / 1000 / 5 / ((traces * 10) / 1000);
  };
  const summary = cpu(() => sets.forEach((spans) => summarizeTrace(spans, { processedAt: '2026-11-20 10:00:00.000', origin: SYSTEM_ORIGIN })));
  const content = cpu(() => sets.forEach((spans) => traceContentRows(spans, { timestamp: '2026-11-20 10:00:00.000', processedAt: '2026-11-20 10:00:00.000' })));
  console.log(`settle CPU per 1000 spans: summary ${summary.toFixed(1)} ms, content rows ${content.toFixed(1)} ms (+${((content / summary) * 100).toFixed(0)} % of the summary)`);
}

/** The same content rows inserted into trace_content as it is and into a copy without its text index. */
async function indexInsertCost(client: import('@clickhouse/client').ClickHouseClient, table: string, copy: string, tenantId: string, projectId: string): Promise<void> {
  await client.command({ query: `CREATE TABLE ${copy} AS ${table}` });
  await client.command({ query: `ALTER TABLE ${copy} DROP INDEX text_norm_bigrams` });
  const source = `SELECT tenant_id, project_id, concat(trace_id, '-copy') AS trace_id, field, timestamp, text, text_norm, processed_at FROM ${table} WHERE tenant_id = {tenant:String} AND project_id = {project:String} LIMIT 200000`;
  const time = async (target: string) => {
    const started = performance.now();
    await client.command({ query: `INSERT INTO ${target} (tenant_id, project_id, trace_id, field, timestamp, text, text_norm, processed_at) ${source}`, query_params: { tenant: tenantId, project: projectId } });
    return performance.now() - started;
  };
  // Alternated, twice each, so neither side gets the warm cache alone.
  const withIndex: number[] = [];
  const without: number[] = [];
  for (let i = 0; i < 2; i++) {
    without.push(await time(copy));
    withIndex.push(await time(table));
  }
  const best = (xs: number[]) => Math.min(...xs);
  console.log(`insert of up to 200,000 content rows: ${best(without).toFixed(0)} ms without the text index, ${best(withIndex).toFixed(0)} ms with it (${((best(withIndex) / best(without) - 1) * 100).toFixed(0)} %)`);
  await client.command({ query: `DROP TABLE ${copy} SYNC` });
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
