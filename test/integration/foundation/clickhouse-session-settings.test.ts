import { afterAll, beforeAll, expect, it } from 'vitest';
import { openClickHouse, type ClickHouseStore } from '../../../src/platform/clickhouse/clickhouse.js';
import { tempDataDir } from '../../helpers/temp-dir.js';

// Regression: on chdb's connection, clickhouse_settings of one call stayed in force for every later
// call of the process (64-bit integers turned into strings everywhere, readonly blocked all inserts).
let store: ClickHouseStore;
beforeAll(async () => {
  store = await openClickHouse({ url: process.env.CLICKHOUSE_URL ?? null, user: process.env.CLICKHOUSE_USER ?? 'default', password: process.env.CLICKHOUSE_PASSWORD ?? '', database: 'settings_test', cluster: null, dataDir: tempDataDir() });
});
afterAll(async () => {
  await store?.close();
});

const probe = async (settings?: Record<string, string | number>) => {
  const result = await store.client.query({
    query: "SELECT toUInt64(5) AS n, getSetting('join_use_nulls') AS j",
    format: 'JSONEachRow',
    clickhouse_settings: settings,
  });
  return (await result.json<{ n: unknown; j: unknown }>())[0];
};

it('applies clickhouse_settings to one call only', async () => {
  expect(await probe()).toEqual({ n: 5, j: false });
  expect(await probe({ output_format_json_quote_64bit_integers: 1, join_use_nulls: 1 })).toEqual({ n: '5', j: true });
  expect(await probe()).toEqual({ n: 5, j: false });
});

it('keeps readonly out of session settings so inserts keep working', async () => {
  if (store.embedded) await expect(probe({ readonly: '2' })).rejects.toThrow(/SETTINGS clause/);
  const readOnly = await store.client.query({ query: "SELECT getSetting('readonly') AS r SETTINGS readonly = 2", format: 'JSONEachRow' });
  expect(await readOnly.json()).toEqual([{ r: 2 }]);
  await store.client.command({ query: `CREATE TABLE IF NOT EXISTS ${store.table('t')} (a UInt8) ENGINE = MergeTree ORDER BY a` });
  await store.client.insert({ table: store.table('t'), values: [{ a: 1 }], format: 'JSONEachRow' });
  const count = await store.client.query({ query: `SELECT count() AS c FROM ${store.table('t')}`, format: 'JSONEachRow' });
  expect(await count.json()).toEqual([{ c: 1 }]);
});
