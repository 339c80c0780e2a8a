/**
 * Benchmark of the analytics query DSL: 10 million generation.completed, 1 million
 * trace.processed and 1 million tool.called rows generated inside the embedded ClickHouse, then six
 * representative DSL queries timed through HTTP (the whole API: auth, project check, validation,
 * compile, run, shape, JSON) and, in the same run, their compiled SQL sent straight through
 * @clickhouse/client. Prints p50/p95 of both and the overhead ratio.
 *
 *   npx tsx bench/query/run.ts [--runs 20] [--generations 10000000] [--traces 1000000] [--tools 1000000] [--no-optimize]
 *                              [--scale 1] [--query-timeout 15] [--seeding ingest|month] [--inserts 16] [--stop-merges]
 *
 * --scale multiplies the three sizes (--scale 10: the 100 M-generation run) and, unless
 * --query-timeout is given, lets each query run up to 15 s × scale instead of the service's 15 s.
 *
 * Seeding (--seeding): "ingest" (default) writes each table in --inserts inserts in time order, each
 * covering 1/inserts of the month with a few per cent of overlap into the next one, as ingestion's
 * flushes lay parts out (the per-span tables are ordered (tenant, project, timestamp, …), so FINAL
 * over such parts reads non-overlapping ranges without merging; trace.processed is keyed by trace id
 * and its ids, as text, span the key range in every insert, as settle rounds' UUIDs do). "month" is
 * the old worst case: one insert per table whose every block spans the whole month, so every part
 * overlaps every other and FINAL merges all of them (the figures before 2026-11-24 15:00 use it).
 *
 * --stop-merges keeps the parts as the inserts wrote them while the first pass is timed. Without it
 * background merges run beside the first statements (at 10 M rows for several seconds), so the
 * as-inserted figures depend on how far they got, and before/after comparisons of a schema change
 * can invert (migration 008 did).
 *
 * Two passes: on the tables as inserted, then after OPTIMIZE ... FINAL (merged, as background merges
 * leave a settled table). Each pass also times the compiled SQL without FINAL, to show what reading
 * the newest row per key costs. Target: API at most +20% over direct SQL; p95 < 300 ms.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { loadConfig } from '../../src/app/config.js';
import { clickHouseServerEnv } from '../service-process.js';
import { modules } from '../../src/app/modules.js';
import { startService } from '../../src/app/service.js';
import { analyticsQueryModule } from '../../src/analytics/query/router.js';
import { compileAnalyticsQuery } from '../../src/analytics/query/run.js';
import { compile } from '../../src/platform/clickhouse/sql/compile.js';
import { spanIdSql, traceIdSql } from './seed-ids.js';

const args = process.argv.slice(2);
const flag = (name: string, fallback: number) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const RUNS = flag('runs', 20);
const SCALE = flag('scale', 1);
const GENERATIONS = Math.round(flag('generations', 10_000_000) * SCALE);
const TRACES = Math.round(flag('traces', 1_000_000) * SCALE);
const TOOLS = Math.round(flag('tools', 1_000_000) * SCALE);
const QUERY_TIMEOUT = flag('query-timeout', Math.max(15, Math.round(15 * SCALE)));
const OPTIMIZE = !args.includes('--no-optimize');
const seedingArg = args.indexOf('--seeding');
const SEEDING = seedingArg >= 0 ? args[seedingArg + 1] : 'ingest';
if (SEEDING !== 'ingest' && SEEDING !== 'month') throw new Error(`--seeding is ingest or month, not ${SEEDING}`);
const INSERTS = SEEDING === 'ingest' ? Math.max(1, flag('inserts', 16)) : 1;
const KEY = 'lk_bench_query_key_0123456789abcdef';
const DAY = 86_400_000;

const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
const chTime = (ms: number) => new Date(ms).toISOString().replace('T', ' ').replace('Z', '');

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)];
}

async function main() {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lookout-bench-query-'));
  fs.chmodSync(dataDir, 0o755);
  const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', OTLP_GRPC_PORT: '0', DATA_DIR: dataDir, LOOKOUT_BOOTSTRAP_KEY: KEY, LOG_LEVEL: 'silent', QUERY_TIMEOUT_SECONDS: String(QUERY_TIMEOUT), ...clickHouseServerEnv() });
  const mounted = modules.some((m) => m.name === analyticsQueryModule.name) ? modules : [...modules, analyticsQueryModule];
  const service = await startService(config, { logger: pino({ level: 'silent' }), modules: mounted });
  try {
    const api = `${service.url}/api`;
    const headers = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' };
    const project = await (await fetch(`${api}/projects`, { method: 'POST', headers, body: JSON.stringify({ name: 'bench' }) })).json();
    const tenantId = service.bootstrap!.tenantId;
    const ch = service.deps.ch;
    const now = Date.now();
    const from = now - 30 * DAY;
    const params = { t: tenantId, p: project.id, from: chTime(from), span: String(30 * DAY) };

    let t0 = performance.now();
    // Timestamps spread over the last 30 days; 200 models, 50 agents, 40 tools; 10 generations per trace.
    // Each table is written in INSERTS inserts of consecutive row numbers (numbers(lo, n)): under "ingest"
    // row k of `rows` lies at k/rows of the month plus up to 1/20 of a slice (the overlap with the next
    // insert, as neighbouring flushes overlap); under "month" anywhere in the month (cityHash64).
    const timeOf = (rows: number) =>
      SEEDING === 'month'
        ? `toDateTime64({from:String}, 3, 'UTC') + toIntervalMillisecond(cityHash64(number, 1) % {span:UInt64})`
        : `toDateTime64({from:String}, 3, 'UTC') + toIntervalMillisecond(intDiv(number * ({span:UInt64} - {jitter:UInt64}), ${rows}) + cityHash64(number, 1) % {jitter:UInt64})`;
    const jitter = String(Math.max(1, Math.floor((30 * DAY) / INSERTS / 20)));
    const seedTable = async (label: string, rows: number, statement: (time: string, numbers: string) => string) => {
      const start = performance.now();
      for (let i = 0; i < INSERTS; i++) {
        const lo = Math.floor((rows * i) / INSERTS);
        const hi = Math.floor((rows * (i + 1)) / INSERTS);
        if (hi > lo) await ch.client.command({ query: statement(timeOf(rows), `numbers(${lo}, ${hi - lo})`), query_params: { ...params, jitter } });
      }
      console.log(`seeded ${rows} ${label} in ${INSERTS} insert(s), seeding ${SEEDING}, in ${((performance.now() - start) / 1000).toFixed(1)} s`);
    };
    // --stop-merges: the parts stay as the inserts wrote them while timing (no background merge
    // running beside the statements, which makes the as-inserted pass depend on how far it got).
    if (args.includes('--stop-merges')) {
      for (const table of ['event_generation_completed', 'event_trace_processed', 'event_tool_called']) await ch.client.command({ query: `SYSTEM STOP MERGES ${ch.table(table)}` });
    }
    // Ids as ingestion writes them (seed-ids.ts), in the column types this checkout's schema has.
    const genSpan = await spanIdSql(ch, 'event_generation_completed', 'number');
    const toolSpan = await spanIdSql(ch, 'event_tool_called', 'number + 1000000000');
    await seedTable('generations', GENERATIONS, (time, numbers) => `INSERT INTO ${ch.table('event_generation_completed')}
        (tenant_id, project_id, timestamp, actor, surface, model, provider, trace_id, span_id, duration_ms, input_tokens, output_tokens, tps, error)
        SELECT {t:String}, {p:String}, ${time},
          'sdk', 'otlp', concat('model-', toString(cityHash64(number, 2) % 200)), 'openai',
          ${traceIdSql('intDiv(number, 10)')}, ${genSpan},
          (cityHash64(number, 3) % 600000) / 100, cityHash64(number, 4) % 8000, cityHash64(number, 5) % 2000,
          if(number % 7 = 0, NULL, (cityHash64(number, 6) % 20000) / 100), if(number % 23 = 0, 1, 0)
        FROM ${numbers}`);
    await seedTable('traces', TRACES, (time, numbers) => `INSERT INTO ${ch.table('event_trace_processed')}
        (tenant_id, project_id, timestamp, actor, surface, trace_id, agent_name, root_status_code, has_root, root_duration_ms,
         error_count, failing_tool_calls, input_tokens, output_tokens, total_tokens, estimated_cost_usd, estimated_cost_basis)
        SELECT {t:String}, {p:String}, ${time},
          'sdk', 'otlp', ${traceIdSql('number')}, concat('agent-', toString(number % 50)), if(number % 17 = 0, 'ERROR', 'OK'), 1,
          (cityHash64(number, 3) % 9000000) / 100, if(number % 17 = 0, 1 + number % 3, 0), number % 29 = 0,
          cityHash64(number, 4) % 80000, cityHash64(number, 5) % 20000, 0, (cityHash64(number, 6) % 10000) / 10000, 'stored'
        FROM ${numbers}`);
    await seedTable('tool calls', TOOLS, (time, numbers) => `INSERT INTO ${ch.table('event_tool_called')}
        (tenant_id, project_id, timestamp, actor, surface, tool, agent_name, trace_id, span_id, duration_ms, output_tokens, error)
        SELECT {t:String}, {p:String}, ${time},
          'sdk', 'otlp', concat('tool-', toString(cityHash64(number, 2) % 40)), concat('agent-', toString(number % 50)),
          ${traceIdSql(`number % ${TRACES}`)}, ${toolSpan}, (cityHash64(number, 3) % 300000) / 100, number % 400, number % 11 = 0
        FROM ${numbers}`);
    const showParts = async () => {
      const parts = await (await ch.client.query({ query: `SELECT table, count() AS parts, sum(rows) AS rows FROM system.parts WHERE database = {db:String} AND active AND table LIKE 'event_%' GROUP BY table ORDER BY table`, query_params: { db: ch.database }, format: 'JSONEachRow' })).json();
      console.log('active parts:', JSON.stringify(parts));
    };
    const window30 = { start: iso(from - DAY), end_exclusive: iso(now + DAY) };
    const window7 = { start: iso(now - 7 * DAY), end_exclusive: iso(now + DAY) };
    const queries: Record<string, Record<string, unknown>> = {
      'models: count, p95 latency, tokens (30 d, by model)': {
        from: 'generation.completed', ...window30,
        measures: [{ as: 'calls', agg: 'count' }, { as: 'p95_ms', agg: 'p95', field: 'duration_ms' }, { as: 'input', agg: 'sum', field: 'input_tokens' }, { as: 'output', agg: 'sum', field: 'output_tokens' }],
        group_by: [{ field: 'model' }], order_by: [{ measure: 'calls', direction: 'desc' }], limit: 50,
      },
      'generations per day with errors and traces (30 d)': {
        from: 'generation.completed', ...window30,
        measures: [{ as: 'calls', agg: 'count' }, { as: 'errors', agg: 'count', filter: { field: 'error', op: 'eq', value: 1 } }, { as: 'avg_tps', agg: 'avg', field: 'tps' }],
        group_by: [{ bucket: 'day' }],
      },
      'hourly p50/p99 for three models (7 d)': {
        from: 'generation.completed', ...window7,
        measures: [{ as: 'p50_ms', agg: 'p50', field: 'duration_ms' }, { as: 'p99_ms', agg: 'p99', field: 'duration_ms' }],
        filters: [{ field: 'model', op: 'in', value: ['model-1', 'model-2', 'model-3'] }],
        group_by: [{ bucket: 'hour' }, { field: 'model' }],
      },
      'agents: traces, failures, p95 root duration (30 d)': {
        from: 'trace.processed', ...window30,
        measures: [{ as: 'traces', agg: 'count' }, { as: 'failed', agg: 'count', filter: { field: 'root_status_code', op: 'eq', value: 'ERROR' } }, { as: 'p95_ms', agg: 'p95', field: 'root_duration_ms' }, { as: 'tokens', agg: 'sum', field: 'total_tokens' }],
        group_by: [{ field: 'agent_name' }],
      },
      'weekly tokens per agent (30 d)': {
        from: 'trace.processed', ...window30,
        measures: [{ as: 'input', agg: 'sum', field: 'input_tokens' }, { as: 'output', agg: 'sum', field: 'output_tokens' }],
        group_by: [{ bucket: 'week' }, { field: 'agent_name' }],
      },
      'join: agents with failing tool calls (30 d)': {
        from: 'trace.processed', ...window30,
        measures: [{ as: 'traces', agg: 'count' }, { as: 'errors', agg: 'sum', field: 'error_count' }],
        group_by: [{ field: 'agent_name' }],
        join: { from: 'tool.called', on: 'agent_name', filters: [{ field: 'error', op: 'eq', value: 1 }], measures: [{ as: 'failed_calls', agg: 'count' }, { as: 'failing_tools', agg: 'uniqExact', field: 'tool' }] },
        order_by: [{ measure: 'errors', direction: 'desc' }],
      },
    };

    const context = { tenantId, projectId: project.id, qualify: (t: string) => ch.table(t) };
    const pass = async (label: string) => {
      await showParts();
      const results: { name: string; httpP50: number; httpP95: number; directP50: number; directP95: number; plainP50: number; rows: number }[] = [];
      for (const [name, body] of Object.entries(queries)) {
        const printed = compileAnalyticsQuery(body, context, { timeoutSeconds: config.queryTimeoutSeconds });
        // Bound as the service binds it (typed literals on the embedded engine), so "sql" is the same statement.
        const compiled = compile(printed.statement, ch.binding, printed.settings);
        const withoutFinal = compiled.sql.replace(/ FINAL(?=\n)/g, '');
        const viaHttp = async () => {
          const res = await fetch(`${api}/projects/${project.id}/analytics/query`, { method: 'POST', headers, body: JSON.stringify(body) });
          const json = (await res.json()) as { rows: unknown[] };
          if (res.status !== 200) throw new Error(`${name}: ${res.status} ${JSON.stringify(json)}`);
          return json.rows.length;
        };
        const direct = async (sql: string) => {
          const params = Object.keys(compiled.params).length > 0 ? { query_params: compiled.params } : {};
          const r = await ch.client.query({ query: sql, ...params, format: 'JSONEachRow' });
          return (await r.json()).length;
        };
        for (let i = 0; i < 3; i++) {
          await viaHttp();
          await direct(compiled.sql);
        }
        const http: number[] = [];
        const raw: number[] = [];
        const plain: number[] = [];
        let rows = 0;
        // Interleaved so both sides see the same cache and machine state.
        for (let i = 0; i < RUNS; i++) {
          let s = performance.now();
          rows = await viaHttp();
          http.push(performance.now() - s);
          s = performance.now();
          await direct(compiled.sql);
          raw.push(performance.now() - s);
          s = performance.now();
          await direct(withoutFinal);
          plain.push(performance.now() - s);
        }
        for (const list of [http, raw, plain]) list.sort((a, b) => a - b);
        results.push({ name, httpP50: percentile(http, 0.5), httpP95: percentile(http, 0.95), directP50: percentile(raw, 0.5), directP95: percentile(raw, 0.95), plainP50: percentile(plain, 0.5), rows });
      }
      const f = (n: number) => n.toFixed(1).padStart(7);
      console.log(`\n${label} (seeding ${SEEDING}, ${INSERTS} insert(s) per table): ${RUNS} runs each; milliseconds; load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
      console.log(`${'query'.padEnd(52)} ${'rows'.padStart(5)} ${'http p50'.padStart(9)} ${'http p95'.padStart(9)} ${'sql p50'.padStart(9)} ${'sql p95'.padStart(9)} ${'ratio'.padStart(7)} ${'no FINAL'.padStart(9)}`);
      for (const r of results) {
        console.log(`${r.name.padEnd(52)} ${String(r.rows).padStart(5)}   ${f(r.httpP50)}   ${f(r.httpP95)}   ${f(r.directP50)}   ${f(r.directP95)} ${(r.httpP50 / r.directP50).toFixed(2).padStart(7)}   ${f(r.plainP50)}`);
      }
      const totalHttp = results.reduce((a, r) => a + r.httpP50, 0);
      const totalDirect = results.reduce((a, r) => a + r.directP50, 0);
      console.log(`overall p50 overhead: ${(((totalHttp - totalDirect) / totalDirect) * 100).toFixed(1)}% (${((totalHttp - totalDirect) / results.length).toFixed(1)} ms per query); max p95 through HTTP: ${Math.max(...results.map((r) => r.httpP95)).toFixed(1)} ms`);
    };

    await pass('as inserted');
    if (OPTIMIZE) {
      t0 = performance.now();
      for (const table of ['event_generation_completed', 'event_trace_processed', 'event_tool_called']) {
        // OPTIMIZE is a merge: refused while --stop-merges holds them.
        await ch.client.command({ query: `SYSTEM START MERGES ${ch.table(table)}` });
        await ch.client.command({ query: `OPTIMIZE TABLE ${ch.table(table)} FINAL` });
      }
      console.log(`\noptimized in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
      await pass('merged');
    }
  } finally {
    await service.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
