/**
 * Benchmark of the preset analytics views: 1 million trace.processed, 10 million
 * generation.completed and 3 million tool.called rows generated inside the embedded ClickHouse
 * over the last 30 days, then every view timed through HTTP (auth, project check, validation,
 * every statement of the view including the cost module's, JSON).
 *
 *   npx tsx bench/query/views.ts [--runs 20] [--traces 1000000] [--generations 10000000] [--tools 3000000]
 *                                [--scale 1] [--query-timeout 15] [--unwritten-every 0] [--optimize]
 *                                [--data-dir DIR] [--only TEXT] [--trace-inserts 8] [--reprocessed-percent 2] [--pre-mark]
 *                                [--engine-stats]
 *
 * --scale multiplies the three sizes (--scale 10: 100 M generations, 10 M traces, 30 M tool calls,
 * what a user should expect at 10× the target size) and, unless --query-timeout is given, lets
 * each statement run up to 15 s × scale instead of the service's 15 s.
 *
 * Every trace is written with its cost (basis stored, 1 in 13 partial), the steady state when a
 * price catalog is loaded. --unwritten-every N writes every Nth trace without prices instead, so
 * the cost module prices it at query time from its generations (docs/cost.md). --data-dir keeps
 * the data (and reuses it when it is already seeded) so views can be re-timed without seeding
 * again; --only times the cases whose name contains TEXT.
 *
 * trace.processed is written in --trace-inserts inserts (default 8), each holding every 8th run:
 * ingestion's settle rounds write runs whose ids are SHA-1 UUIDs, so every fresh part spans the
 * table's whole key (tenant, project, trace_id) and FINAL must merge across all of them. Seeding
 * the runs as one insert in id order gives parts that do not overlap, where FINAL costs nothing,
 * and hides that cost (--trace-inserts 1 seeds it that way).
 * Rows carry first_processing as the settler writes it (clickhouse/006): 1 on each run's first row;
 * --reprocessed-percent (default 2) of the runs are processed again one settle round later (a late
 * span), that row 0 in the next insert
 * (--pre-mark: every row 0, as data written before migration 006).
 *
 * The per-span tables (generation.completed, tool.called) are written as ingestion lays them out:
 * rows in time order, each block of the insert a part covering a stretch of the month (about 3 days
 * for generations), neighbours overlapping by the seconds a run's calls follow its start. Their key
 * is (tenant, project, timestamp, …), so FINAL over such parts reads the non-overlapping ranges
 * without merging (run.ts's --seeding month is the worst case this does not produce).
 *
 * --engine-stats (needs CLICKHOUSE_URL: a server, e.g. `npm run clickhouse-server`; the embedded
 * engine keeps no query log) prints under each view the engine's own figures for each of its
 * statements from system.query_log, medians over the timed runs: CPU, rows, marks and parts
 * selected, bytes read, memory (statement-log.ts). On a shared machine those compare two builds
 * where milliseconds do not. Seeding a server goes through a client of its own without the
 * service's request time limits (an insert of 10 M generations takes minutes).
 *
 * Target: p95 under 300 ms per view on this machine. Figures: bench/README.md.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { loadConfig } from '../../src/app/config.js';
import { clickHouseServerEnv } from '../service-process.js';
import { startService } from '../../src/app/service.js';
import { createClient, type ClickHouseClient } from '@clickhouse/client';
import type { ClickHouseStore } from '../../src/platform/clickhouse/clickhouse.js';
import { spanIdSql, traceIdSql } from './seed-ids.js';
import { hasQueryLog, serverNow, statementFigures, statementLines } from './statement-log.js';

const args = process.argv.slice(2);
const flag = (name: string, fallback: number) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const RUNS = flag('runs', 20);
const SCALE = flag('scale', 1);
const TRACES = Math.round(flag('traces', 1_000_000) * SCALE);
const GENERATIONS = Math.round(flag('generations', 10_000_000) * SCALE);
const TOOLS = Math.round(flag('tools', 3_000_000) * SCALE);
const QUERY_TIMEOUT = flag('query-timeout', Math.max(15, Math.round(15 * SCALE)));
const UNWRITTEN_EVERY = flag('unwritten-every', 0);
const TRACE_INSERTS = Math.max(1, flag('trace-inserts', 8));
/** Share of runs written a second time (first_processing 0), in per mille of runs. */
const REPROCESSED_PERMILLE = Math.round(flag('reprocessed-percent', 2) * 10);
const PRE_MARK = args.includes('--pre-mark');
const OPTIMIZE = args.includes('--optimize');
const ENGINE_STATS = args.includes('--engine-stats');
/** A seeding insert on a server may take this long (the service's own clients give up far sooner). */
const SEED_TIMEOUT_MS = 60 * 60 * 1000;
const text = (name: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : null;
};
const KEEP_DIR = text('data-dir');
const ONLY = text('only');
const KEY = 'lk_bench_views_key_0123456789abcdef';
const DAY = 86_400_000;

const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
const chTime = (ms: number) => new Date(ms).toISOString().replace('T', ' ').replace('Z', '');

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)];
}

/** Trace n starts at from + n/TRACES of the span; its generations and tools follow it by seconds. */
const TRACE_TIME = `toDateTime64({from:String}, 3, 'UTC') + toIntervalMillisecond(intDiv(toUInt64(n) * {span:UInt64}, {traces:UInt64}))`;
/** Ids shaped like the real ones (seed-ids.ts): Lookout trace UUIDs spread over the space, 16-hex-digit span ids. */
const TRACE_ID = traceIdSql('n');
const MODELS = `['gpt-4o', 'gpt-4o-mini', 'claude-3-5-sonnet-20241022', 'claude-3-5-haiku-20241022', 'gemini-1.5-flash', 'in-house-model']`;

/**
 * One insert of the runs n ≡ part (mod parts) — each part holds ids from the whole key range, as settle
 * rounds write them — with first_processing 1, plus the re-processings of the previous part's runs
 * (REPROCESSED_PERMILLE of them, chosen by hash) with 0; part = parts writes only the last re-processings.
 */
async function seedTraces(ch: ClickHouseStore, client: ClickHouseClient, params: Record<string, string>): Promise<void> {
  // Every --unwritten-every'th trace is written without prices (priced at query time from its generations).
  // Each run's model calls (and those naming a provider) and tool calls, as settling counts them:
  // generation `number` belongs to run intDiv(number, per) and has no provider when number % 11 = 0;
  // tool call m to run intDiv(m * traces, tools). ceil(x / k) is intDiv(x + k - 1, k).
  await client.command({
    query: `INSERT INTO ${ch.table('event_trace_processed')}
      (tenant_id, project_id, timestamp, actor, surface, trace_id, agent_name, root_status_code, has_root, root_duration_ms,
       error_count, failing_tool_calls, input_tokens, output_tokens, total_tokens, estimated_cost_usd, estimated_cost_basis,
       cost_priced_tokens, cost_unpriced_models, cost_priced_at, cost_model_costs, models, generations, generations_with_provider, tool_calls,
       first_processing)
      SELECT {t:String}, {p:String}, ${TRACE_TIME}, 'sdk', 'otlp', ${TRACE_ID}, concat('agent-', toString(n % 25)),
        if(n % 17 = 0, 'ERROR', 'UNSET'), if(n % 50 = 0, 0, 1), if(n % 50 = 0, NULL, toFloat64(cityHash64(n, 1) % 60000)),
        if(n % 17 = 0, 2, if(n % 9 = 0, 1, 0)), if(n % 9 = 0, 1, 0), 8000, 1500, 9500,
        if(u, NULL, 0.0125), if(u, 'unavailable', if(n % 13 = 0, 'partial', 'stored')),
        if(u, 0, 8000), if(n % 13 = 0 AND NOT u, ['in-house-model'], []), now64(3),
        map('gpt-4o', 0.01, 'claude-3-5-sonnet-20241022', 0.0025), ['gpt-4o', 'claude-3-5-sonnet-20241022'],
        g_to - g_from, (g_to - g_from) - (intDiv(g_to + 10, 11) - intDiv(g_from + 10, 11)),
        intDiv((n + 1) * ${TOOLS} + {traces:UInt64} - 1, {traces:UInt64}) - intDiv(n * ${TOOLS} + {traces:UInt64} - 1, {traces:UInt64}),
        if({premark:UInt8} = 1, 0, first)
      FROM (SELECT number AS n, {unwritten:UInt64} > 0 AND number % greatest({unwritten:UInt64}, 1) = 0 AS u,
              least(n * {per:UInt64}, ${GENERATIONS}) AS g_from, least((n + 1) * {per:UInt64}, ${GENERATIONS}) AS g_to,
              number % {parts:UInt64} = {part:UInt64} AS first
            FROM numbers({traces:UInt64})
            WHERE (number % {parts:UInt64} = {part:UInt64} AND {part:UInt64} < {parts:UInt64})
              OR ({part:UInt64} > 0 AND number % {parts:UInt64} = {part:UInt64} - 1 AND cityHash64(number, 12) % 1000 < {reprocessed:UInt64}))`,
    query_params: params,
  });
}

async function seed(ch: ClickHouseStore, client: ClickHouseClient, params: Record<string, string>): Promise<void> {
  let t0 = performance.now();
  const marks = { reprocessed: String(REPROCESSED_PERMILLE), premark: PRE_MARK ? '1' : '0' };
  const rounds = TRACE_INSERTS + (REPROCESSED_PERMILLE > 0 ? 1 : 0);
  for (let part = 0; part < rounds; part++) await seedTraces(ch, client, { ...params, ...marks, parts: String(TRACE_INSERTS), part: String(part) });
  console.log(
    `seeded ${TRACES} traces in ${rounds} inserts (re-processed: ${REPROCESSED_PERMILLE / 10} %${PRE_MARK ? ', every row 0 as before migration 006' : ''}; ` +
      `unwritten: ${UNWRITTEN_EVERY > 0 ? `1 in ${UNWRITTEN_EVERY}` : 'none'}) in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
  );
  t0 = performance.now();
  await client.command({
    query: `INSERT INTO ${ch.table('event_generation_completed')}
      (tenant_id, project_id, timestamp, actor, surface, model, provider, trace_id, span_id, duration_ms, input_tokens, output_tokens, tps, error)
      SELECT {t:String}, {p:String}, ${TRACE_TIME} + toIntervalMillisecond(number % {per:UInt64} * 700), 'sdk', 'otlp',
        ${MODELS}[1 + cityHash64(number, 2) % 6], if(number % 11 = 0, '', 'openai'), ${TRACE_ID}, ${await spanIdSql(ch, 'event_generation_completed', 'number')},
        (cityHash64(number, 3) % 600000) / 100, cityHash64(number, 4) % 8000, cityHash64(number, 5) % 2000,
        if(number % 7 = 0, NULL, (cityHash64(number, 6) % 20000) / 100), if(number % 23 = 0, 1, 0)
      FROM (SELECT number, intDiv(number, {per:UInt64}) AS n FROM numbers(${GENERATIONS}))
      SETTINGS max_insert_block_size = 1000000`,
    query_params: params,
  });
  console.log(`seeded ${GENERATIONS} generations in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  t0 = performance.now();
  await client.command({
    query: `INSERT INTO ${ch.table('event_tool_called')}
      (tenant_id, project_id, timestamp, actor, surface, tool, agent_name, trace_id, span_id, duration_ms, output_tokens, error)
      SELECT {t:String}, {p:String}, ${TRACE_TIME} + toIntervalMillisecond(number % 3 * 900), 'sdk', 'otlp',
        concat('tool-', toString(cityHash64(number, 7) % 40)), concat('agent-', toString(n % 25)), ${TRACE_ID}, ${await spanIdSql(ch, 'event_tool_called', 'number')},
        (cityHash64(number, 8) % 300000) / 100, cityHash64(number, 9) % 500, if(number % 29 = 0, 1, 0)
      FROM (SELECT number, intDiv(number * {traces:UInt64}, ${TOOLS}) AS n FROM numbers(${TOOLS}))`,
    query_params: params,
  });
  console.log(`seeded ${TOOLS} tool calls in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}

async function main() {
  const dataDir = KEEP_DIR ? path.resolve(KEEP_DIR) : fs.mkdtempSync(path.join(os.tmpdir(), 'lookout-bench-views-'));
  fs.mkdirSync(dataDir, { recursive: true });
  fs.chmodSync(dataDir, 0o755);
  const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', OTLP_GRPC_PORT: '0', DATA_DIR: dataDir, LOOKOUT_BOOTSTRAP_KEY: KEY, LOG_LEVEL: 'silent', QUERY_TIMEOUT_SECONDS: String(QUERY_TIMEOUT), ...clickHouseServerEnv() });
  const service = await startService(config, { logger: pino({ level: 'silent' }) });
  try {
    const api = `${service.url}/api`;
    const headers = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' };
    const listed = (await (await fetch(`${api}/projects`, { headers })).json()) as { projects: { id: string; name: string }[] };
    const existing = listed.projects.find((p) => p.name === 'bench');
    const project = existing ?? (await (await fetch(`${api}/projects`, { method: 'POST', headers, body: JSON.stringify({ name: 'bench' }) })).json());
    const ch = service.deps.ch;
    if (ENGINE_STATS && !(await hasQueryLog(ch.client))) throw new Error('--engine-stats reads system.query_log: run against a ClickHouse server (CLICKHOUSE_URL)');
    const [seeded] = await (await ch.client.query({
      query: `SELECT count() AS n, toUnixTimestamp64Milli(max(timestamp)) AS last FROM ${ch.table('event_trace_processed')} WHERE project_id = {p:String}`,
      query_params: { p: project.id },
      format: 'JSONEachRow',
    })).json<{ n: string | number; last: string | number }>();
    const reuse = Number(seeded.n) > 0;
    const end = reuse ? Math.ceil(Number(seeded.last) / DAY) * DAY : Math.floor(Date.now() / DAY) * DAY;
    const start = end - 30 * DAY;
    // A reused data dir has its tenant already: take it from the project row.
    const tenantId = service.bootstrap?.tenantId ?? (await service.deps.sql<{ t: string }[]>`select tenant_id::text as t from projects where id = ${project.id}`)[0].t;
    const params = { t: tenantId, p: project.id, from: chTime(start), span: String(30 * DAY), traces: String(TRACES), unwritten: String(UNWRITTEN_EVERY), per: String(Math.max(1, Math.round(GENERATIONS / TRACES))) };
    if (reuse) console.log(`reusing ${seeded.n} seeded traces in ${dataDir}`);
    else {
      const { url, user, password } = config.clickhouse;
      const client = url ? createClient({ url, username: user, password, request_timeout: SEED_TIMEOUT_MS }) : ch.client;
      try {
        await seed(ch, client, params);
      } finally {
        if (client !== ch.client) await client.close();
      }
    }
    if (OPTIMIZE) {
      for (const table of ['event_trace_processed', 'event_generation_completed', 'event_tool_called']) {
        await ch.client.command({ query: `OPTIMIZE TABLE ${ch.table(table)} FINAL` });
      }
      console.log('tables merged (OPTIMIZE FINAL)');
    }

    const window = `start=${iso(start)}&endExclusive=${iso(end)}`;
    const week = `start=${iso(end - 7 * DAY)}&endExclusive=${iso(end)}`;
    const cases: [string, string][] = [
      ['general (default 24 h)', 'view=general'],
      ['general (hours=168)', 'view=general&hours=168'],
      ['general (hours=720, all data)', 'view=general&hours=720&granularity=week'],
      ['window (7 days)', `view=window&${week}`],
      ['window (30 days)', `view=window&${window}`],
      ['base (7 days)', `view=base&${week}`],
      ['base (30 days)', `view=base&${window}`],
      ['agent_scorecard (7 days)', `view=agent_scorecard&${week}`],
      ['agent_scorecard (30 days)', `view=agent_scorecard&${window}`],
      ['tool_aggregates (7 days)', `view=tool_aggregates&${week}`],
      ['tool_aggregates (30 days)', `view=tool_aggregates&${window}`],
      ['model_scorecard (7 days)', `view=model_scorecard&${week}`],
      ['model_scorecard (30 days)', `view=model_scorecard&${window}`],
      ['roi', 'view=roi'],
    ];
    console.log(`\nload average before timing: ${os.loadavg().map((l) => l.toFixed(2)).join(' ')} (${os.cpus().length} cores)`);
    console.log(`${'view'.padEnd(32)} ${'p50 ms'.padStart(8)} ${'p95 ms'.padStart(8)} ${'max ms'.padStart(8)}`);
    for (const [name, query] of cases.filter(([n]) => !ONLY || n.includes(ONLY))) {
      const url = `${api}/projects/${project.id}/analytics?${query}`;
      const first = await fetch(url, { headers });
      if (first.status !== 200) throw new Error(`${name}: ${first.status} ${await first.text()}`);
      await first.json();
      const since = ENGINE_STATS ? await serverNow(ch.client) : '';
      const times: number[] = [];
      for (let i = 0; i < RUNS; i++) {
        const t = performance.now();
        const res = await fetch(url, { headers });
        await res.json();
        times.push(performance.now() - t);
      }
      times.sort((a, b) => a - b);
      const fmt = (v: number) => v.toFixed(0).padStart(8);
      console.log(`${name.padEnd(32)} ${fmt(percentile(times, 0.5))} ${fmt(percentile(times, 0.95))} ${fmt(times[times.length - 1])}`);
      if (ENGINE_STATS) for (const line of statementLines(await statementFigures(ch.client, config.clickhouse.user, since))) console.log(line);
    }
    console.log(`load average after timing: ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  } finally {
    await service.stop();
    if (!KEEP_DIR) fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
