/**
 * What the trace list's `total` (include_total=true) costs beside the page, and what the model,
 * release, duration, cost and thread filters cost (docs/traces.md "The trace list"): a project of
 * --traces trace summaries (default 1 million) seeded inside ClickHouse with varied models, releases,
 * durations, costs and threads of five traces over 30 days, then GET /api/projects/{id}/traces
 * timed through HTTP, each case with and without include_total, alternated so neither gets the
 * warm cache alone. It prints each case's median and the total's cost as a ratio to the page alone:
 * a relative figure, which stays meaningful on a busy machine where the absolute times do not.
 *
 *   npx tsx bench/traces/list-total-bench.ts [--traces 1000000] [--runs 7]
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { loadConfig } from '../../src/app/config.js';
import { startService } from '../../src/app/service.js';
import { clickHouseServerEnv } from '../service-process.js';

const args = process.argv.slice(2);
const flag = (name: string, fallback: number) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const TRACES = flag('traces', 1_000_000);
const RUNS = flag('runs', 7);
/** Threads of five traces each, their traces spread over the 30 days. */
const THREADS = Math.max(1, Math.floor(TRACES / 5));
const KEY = 'lk_bench_list_total_key_0123456789ab';
const DAY = 86_400_000;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main() {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lookout-bench-list-total-'));
  fs.chmodSync(dataDir, 0o755);
  const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', OTLP_GRPC_PORT: '0', DATA_DIR: dataDir, LOOKOUT_BOOTSTRAP_KEY: KEY, LOG_LEVEL: 'silent', ...clickHouseServerEnv() });
  const service = await startService(config, { logger: pino({ level: 'silent' }) });
  try {
    const api = `${service.url}/api`;
    const headers = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' };
    const project = (await (await fetch(`${api}/projects`, { method: 'POST', headers, body: JSON.stringify({ name: 'bench' }) })).json()) as { id: string };
    const ch = service.deps.ch;
    const started = performance.now();
    await ch.client.command({
      query: `INSERT INTO ${ch.table('traces')} (tenant_id, project_id, trace_id, otel_trace_id, timestamp, agent_name, thread_id, release, tool_calls, has_error,
                total_duration_ms, span_count, models_used, estimated_cost_usd)
              SELECT {tenant:String}, {project:String}, lower(hex(MD5(toString(n)))), lower(hex(MD5(toString(n)))),
                fromUnixTimestamp64Milli(toInt64({base:Int64} + (n * 2591) % ${30 * DAY}), 'UTC'), 'support', concat('thread-', toString(n % ${THREADS})),
                ['1.0.0', '2.0.0', '2.1.0'][1 + n % 3], '[]', n % 10 = 0, (cityHash64(n) % 30000) / 3, 10,
                [['gpt-4o'], ['gpt-4o-mini'], ['gpt-4o', 'gpt-4o-mini'], ['local-llm']][1 + n % 4],
                if(n % 4 = 3, NULL, (cityHash64(n, 1) % 100000) / 1e6)
              FROM (SELECT number AS n FROM numbers(${TRACES}))`,
      query_params: { tenant: service.bootstrap!.tenantId, project: project.id, base: Date.now() - 30 * DAY },
    });
    console.log(`seeded ${TRACES} trace summaries in ${((performance.now() - started) / 1000).toFixed(1)} s`);

    const cases: [string, string][] = [
      ['page', 'limit=50'],
      ['model', 'limit=50&model=gpt-4o-mini'],
      ['release + duration', 'limit=50&release=2.0.0&min_duration_ms=5000'],
      ['cost range (rare)', 'limit=50&min_cost_usd=0.0999&max_cost_usd=0.1'],
      ['thread (5 traces)', `limit=50&thread_id=thread-${Math.floor(THREADS / 2)}`],
    ];
    const time = async (query: string) => {
      const t = performance.now();
      const res = await fetch(`${api}/projects/${project.id}/traces?${query}`, { headers });
      if (res.status !== 200) throw new Error(`${query}: ${res.status} ${await res.text()}`);
      const body = (await res.json()) as { total?: number };
      return { ms: performance.now() - t, total: body.total };
    };
    for (const [name, query] of cases) {
      const plain: number[] = [];
      const counted: number[] = [];
      let total: number | undefined;
      await time(query);
      for (let i = 0; i < RUNS; i++) {
        plain.push((await time(query)).ms);
        const withTotal = await time(`${query}&include_total=true`);
        counted.push(withTotal.ms);
        total = withTotal.total;
      }
      console.log(
        `${name.padEnd(20)} page ${median(plain).toFixed(0).padStart(6)} ms   with total ${median(counted).toFixed(0).padStart(6)} ms   ` +
          `(${(median(counted) / median(plain)).toFixed(2)}×, total ${total})`,
      );
    }
  } finally {
    await service.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
