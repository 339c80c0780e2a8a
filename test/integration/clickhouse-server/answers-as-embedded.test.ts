/**
 * Every preset view and every golden DSL query answers on a ClickHouse server exactly as on the
 * embedded engine, over the same rows (the `server` test project). The analytics-views data set goes
 * through OTLP ingestion into a service on the server; every stored version of every row of every
 * table is then copied into an embedded engine migrated to the same schema; both answer every view
 * and query. They differ only in how values are bound (`{name:Type}` parameters sent beside the
 * statement, or typed literals in its text) and in the engine's process.
 */
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrationDirs } from '../../../src/app/service.js';
import { openClickHouse, type ClickHouseStore } from '../../../src/platform/clickhouse/clickhouse.js';
import { SHARDING_KEYS } from '../../../src/platform/clickhouse/clickhouse-layout.js';
import { migrateClickHouse } from '../../../src/platform/migrations.js';
import { tempDataDir } from '../../helpers/temp-dir.js';
import { baseInstant } from '../analytics-views/dataset.js';
import { seedThroughIngestion, startHarness, type Harness } from '../analytics-views/harness.js';
import { datasetAnswers } from '../scale-out/dataset-answers.js';

const TABLES = Object.keys(SHARDING_KEYS);
const base = baseInstant();
let h: Harness;
let embedded: ClickHouseStore;
let embeddedDir: string;
let tenantId: string;
let projectId: string;

/** Every row version of `table` on the server, inserted as it is into the embedded engine. */
async function copyTable(server: ClickHouseStore, table: string): Promise<number> {
  const result = await server.client.query({
    query: `SELECT * FROM ${server.table(table)}`,
    format: 'JSONEachRow',
    clickhouse_settings: { output_format_json_quote_64bit_integers: 1 },
  });
  const rows = await result.json<Record<string, unknown>>();
  // Every version as it is: one insert would otherwise keep only each key's newest (optimize_on_insert).
  if (rows.length > 0) {
    await embedded.client.insert({ table: embedded.table(table), values: rows, format: 'JSONEachRow', clickhouse_settings: { optimize_on_insert: 0 } });
  }
  return rows.length;
}

beforeAll(async () => {
  h = await startHarness();
  tenantId = h.svc.service.bootstrap!.tenantId;
  projectId = (await h.svc.newProject('server-and-embedded')).id;
  await seedThroughIngestion(h.svc, projectId, base);
  embeddedDir = tempDataDir('lookout-embedded-');
  embedded = await openClickHouse({ url: null, user: '', password: '', database: 'lookout', cluster: null, dataDir: embeddedDir });
  await migrateClickHouse(embedded, migrationDirs.clickhouse);
}, 240_000);

afterAll(async () => {
  await embedded?.close();
  if (embeddedDir) fs.rmSync(embeddedDir, { recursive: true, force: true });
  await h?.stop();
});

describe('a ClickHouse server and the embedded engine, on the same rows', () => {
  it('hold the same rows after the copy', async () => {
    const server = h.svc.service.deps.ch;
    expect(server.embedded).toBe(false);
    for (const table of TABLES) {
      const copied = await copyTable(server, table);
      const count = async (store: ClickHouseStore) => Number((await (await store.client.query({ query: `SELECT count() AS n FROM ${store.table(table)}`, format: 'JSONEachRow' })).json<{ n: string }>())[0].n);
      expect([table, await count(embedded)]).toEqual([table, copied]);
    }
    expect(await (async () => Number((await (await server.client.query({ query: `SELECT count() AS n FROM ${server.table('spans')}`, format: 'JSONEachRow' })).json<{ n: string }>())[0].n))()).toBeGreaterThan(0);
  });

  it('answer every preset view and every golden DSL query exactly alike', async () => {
    const scope = { tenantId, projectId, base };
    const onServer = await datasetAnswers(h.svc.service.deps.ch, h.svc.service.deps.sql, scope);
    const onEmbedded = await datasetAnswers(embedded, h.svc.service.deps.sql, scope);
    expect(Object.keys(onServer).length).toBeGreaterThan(10);
    // Not vacuous: the data set's answers have rows.
    expect(JSON.stringify(onServer['query model-latency-scorecard'])).toMatch(/gpt|claude/);
    expect(onEmbedded).toEqual(onServer);
  });
});
