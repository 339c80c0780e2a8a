import fs from 'node:fs';
import { configDefaults, defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

// chdb loads one embedded ClickHouse engine per process, and two engines in one
// process crash: every test file therefore runs in its own forked process.
//
// Two projects: every test as the service runs (on chdb, values bound as typed literals), and the
// injection suites once more with server-side `{name:Type}` parameters, the binding a ClickHouse
// server uses, so both binding paths of the SQL layer are exercised here, where no server runs.
// (The golden test compiles both bindings itself; it needs no second run.)
const INJECTION_SUITES = [
  'test/integration/security/bad-input.test.ts',
  'test/integration/analytics-query/engine.test.ts',
  // Id filters bind {p:UUID} / {p:UInt64} values (ClickHouse migration 009).
  'test/integration/analytics-query/stored-ids.test.ts',
];

// The suites that run once more against a real ClickHouse server (the `server` project: one server
// process for the run, test/server-global-setup.ts; each file's data in databases of its own). They
// are the ones whose statements reach ClickHouse through paths that differ on a server: server-side
// `{name:Type}` parameters over HTTP (size limits, types), per-request settings (lanes, insert
// settings, readonly, the time limit), HTTP errors and timeouts, and DDL on a real server's engine.
// Suites that only test PostgreSQL state, HTTP validation or the compute pool stay on the embedded
// engine alone: a second run would exercise nothing new and cost CI minutes.
const SERVER_SUITES = [
  // The harness itself, and what only a server has (workloads, query_log, readonly, 504).
  'test/integration/clickhouse-server/*.test.ts',
  // Ingest and settling: inserts with the server's settings, settle rounds' parameters.
  'test/integration/ingest/otlp-endpoint.test.ts',
  'test/integration/ingest/settling-and-backpressure.test.ts',
  'test/integration/ingest/stored-json-columns.test.ts',
  'test/integration/ingest/spans-across-many-days.test.ts',
  'test/integration/ingest/stored-trace-backfill.test.ts',
  // A stale model-call row found by key (a DateTime64 array parameter) and removed by a lightweight delete.
  'test/integration/ingest/model-call-chain-settles.test.ts',
  // Traces: list, detail and page reads (keyset cursors bound as parameters).
  'test/integration/traces/traces-api.test.ts',
  'test/integration/traces/trace-pages.test.ts',
  // The list's filters (Float64 bounds, has() on models) and its total.
  'test/integration/traces/trace-list-filters.test.ts',
  // The query DSL: every operator, aggregate and join, over HTTP and with its timeout.
  'test/integration/analytics-query/aggregates.test.ts',
  'test/integration/analytics-query/joins-and-limits.test.ts',
  'test/integration/analytics-query-http/routes.test.ts',
  'test/integration/analytics-query-http/timeout.test.ts',
  // Preset views, over HTTP and in the store.
  'test/integration/analytics-views/views.test.ts',
  'test/integration/analytics-views/http.test.ts',
  // Cost: windows, the settled-cost read and the backfill.
  'test/integration/cost/cost-window.test.ts',
  'test/integration/cost/cost-query-backfill.test.ts',
  'test/integration/cost-http/backfill-route.test.ts',
  'test/integration/metrics/metrics.test.ts',
  // Migrations that rebuild tables (ids as ids, partitions by day) on a server's engine.
  'test/integration/scale-out/clickhouse-migration-009.test.ts',
  'test/integration/scale-out/clickhouse-migration-010.test.ts',
  // Issue events written and read back.
  'test/integration/issues/issue-extraction.test.ts',
  'test/integration/issues/issue-lifecycle.test.ts',
  // The issue list's agents: trace ids looked up in chunks of an Array(String) parameter.
  'test/integration/issues/issue-list-insights.test.ts',
  // Deletion jobs: lightweight DELETEs with bound values, mutations awaited on a server's engine.
  'test/integration/lifecycle/deletions.test.ts',
  // Exports: streamed reads (the server's HTTP answer read as the client takes it), Parquet read back.
  'test/integration/lifecycle/export.test.ts',
  // The export's read pauses while its client reads nothing (system.processes of a server).
  'test/integration/lifecycle/export-back-pressure.test.ts',
  // Parquet slices joined from a server's streamed answers; traces read in slices.
  'test/integration/lifecycle/export-parquet-slices.test.ts',
  'test/integration/lifecycle/export-trace-slices.test.ts',
  // Retention: settings read by insert defaults (a Join table), ALTER … UPDATE with bound values and the TTL it runs.
  'test/integration/lifecycle/retention.test.ts',
  // Isolation lanes: per-lane clients, concurrency and settings.
  'test/integration/isolation/workload-lanes.test.ts',
  'test/integration/isolation/interactive-lane.test.ts',
];

// The files that take longest (tens of seconds each, mostly waiting on stores, servers and settle
// windows), started first in every project that runs them, longest first.
const LONG_FILES = [
  'test/integration/clickhouse-cluster/two-shards.test.ts',
  'test/integration/ingest/settle-model.test.ts',
  'test/integration/faults/full-disk.test.ts',
  'test/integration/isolation/deep-traces.test.ts',
  'test/integration/isolation/workload-lanes.test.ts',
  'test/integration/faults/clickhouse-server-faults.test.ts',
  'test/e2e/dashboard/dashboard.test.ts',
];

/**
 * Runs the files of all projects as one queue, longest first, so the two forks finish together
 * instead of one idling while the other runs a long file that happened to come last. Vitest's own
 * order runs project after project (the last project's long files close the run) and within one
 * by the durations of earlier runs, which a fresh CI clone does not have (then by file size). Here:
 * LONG_FILES first, then the rest by the durations of an earlier run when every file has one, else by file size.
 */
class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const relative = (spec: TestSpecification) => spec.moduleId.slice(root.length + 1);
    const rank = (spec: TestSpecification) => {
      const i = LONG_FILES.indexOf(relative(spec));
      return i === -1 ? LONG_FILES.length : i;
    };
    const duration = (spec: TestSpecification) => this.ctx.cache.getFileTestResults(`${spec.project.name}:${relative(spec)}`)?.duration;
    // One measure for every file (mixing the two would not be one order): durations when each file has one.
    const durations = new Map(files.map((spec) => [spec, duration(spec)]));
    const known = [...durations.values()].every((d) => d !== undefined);
    const weight = new Map(files.map((spec) => [spec, known ? durations.get(spec)! : fs.statSync(spec.moduleId).size]));
    return [...files].sort((a, b) => rank(a) - rank(b) || weight.get(b)! - weight.get(a)!);
  }
}

export default defineConfig({
  test: {
    pool: 'forks',
    isolate: true,
    testTimeout: 60_000,
    hookTimeout: 120_000,
    maxWorkers: 2,
    sequence: { sequencer: LongestFirst },
    // typebox is ~700 small ES modules; loaded as they are, every test process that imports the
    // service spends ~0.2 s of CPU on them. Pre-bundled once per run into one file, ~10 ms.
    deps: { optimizer: { ssr: { enabled: true, include: ['typebox'] } } },
    // One temporary root per run, removed at its end (test/global-setup.ts).
    globalSetup: ['test/global-setup.ts'],
    projects: [
      { extends: true, test: { name: 'default', include: ['test/**/*.test.ts'], exclude: [...configDefaults.exclude, 'test/integration/clickhouse-server/*.test.ts', 'test/integration/clickhouse-cluster/*.test.ts'] } },
      { extends: true, test: { name: 'server-params', include: INJECTION_SUITES, env: { CLICKHOUSE_PARAM_BINDING: 'server' } } },
      {
        extends: true,
        test: { name: 'server', include: SERVER_SUITES, globalSetup: ['test/server-global-setup.ts'], setupFiles: ['test/server-setup.ts'] },
      },
      // A sharded cluster of real server processes: each file starts its own (two servers as two shards).
      { extends: true, test: { name: 'cluster', include: ['test/integration/clickhouse-cluster/*.test.ts'] } },
    ],
  },
});
