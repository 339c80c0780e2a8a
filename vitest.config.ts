import { defineConfig } from 'vitest/config';

// chdb loads one embedded ClickHouse engine per process, and two engines in one
// process crash: every test file therefore runs in its own forked process.
export default defineConfig({
  test: {
    pool: 'forks',
    isolate: true,
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    maxWorkers: 2,
  },
});
