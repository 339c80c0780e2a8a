import fs from 'node:fs';
import { afterAll, beforeAll } from 'vitest';
import { runAnalyticsQuery, type AnalyticsQueryResponse } from '../../../src/analytics/query/run.js';
import type { ClickHouseStore } from '../../../src/platform/clickhouse/clickhouse.js';
import { migrateClickHouse } from '../../../src/platform/migrations.js';
import { openTestClickHouse } from '../../helpers/test-clickhouse.js';
import { tempDataDir } from '../../helpers/temp-dir.js';
import { buildDataset, END, PROJECT, seedDataset, START, TENANT, type Dataset } from './dataset.js';
import { isoSecond } from './seed.js';

export interface SeededQueryStore {
  /** The rows a query over the window should see (references are computed from these). */
  live: Dataset;
  /** The dataset's window, as the query body spells it. */
  window: { start: string; end_exclusive: string };
  /** Runs a query body over the dataset's window for a tenant and project (default: the seeded ones). */
  run: (body: Record<string, unknown>, tenant?: string, project?: string) => Promise<AnalyticsQueryResponse>;
}

/**
 * One ClickHouse per test file (embedded, or databases of its own on the run's server), migrated and seeded with the shared dataset in beforeAll,
 * closed and removed in afterAll.
 */
export function useSeededQueryStore(): SeededQueryStore {
  let store: ClickHouseStore;
  let dataDir: string;
  const window = { start: isoSecond(START), end_exclusive: isoSecond(END) };
  const seeded: SeededQueryStore = {
    live: undefined as unknown as Dataset,
    window,
    run: (body, tenant = TENANT, project = PROJECT) =>
      runAnalyticsQuery({ ch: store, config: { queryTimeoutSeconds: 15 } }, tenant, project, { ...window, ...body }),
  };
  beforeAll(async () => {
    dataDir = tempDataDir('lookout-aq-');
    store = await openTestClickHouse({ database: 'lookout', dataDir });
    await migrateClickHouse(store, 'clickhouse');
    const data = buildDataset();
    seeded.live = data.live;
    await seedDataset(store, data.all);
  });
  afterAll(async () => {
    await store?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });
  return seeded;
}
