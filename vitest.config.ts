import { defineConfig } from 'vitest/config';

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

export default defineConfig({
  test: {
    pool: 'forks',
    isolate: true,
    testTimeout: 60_000,
    hookTimeout: 120_000,
    maxWorkers: 2,
    // One temporary root per run, removed at its end (test/global-setup.ts).
    globalSetup: ['test/global-setup.ts'],
    projects: [
      { extends: true, test: { name: 'default', include: ['test/**/*.test.ts'] } },
      { extends: true, test: { name: 'server-params', include: INJECTION_SUITES, env: { CLICKHOUSE_PARAM_BINDING: 'server' } } },
    ],
  },
});
