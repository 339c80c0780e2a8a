/**
 * ClickHouse migration 010 (the per-span event tables rebuilt partitioned by day, with new codecs) on
 * an installation with data, by the suite of every table-rebuild migration
 * (table-rebuild-migration.ts). Its own part: the old tables are partitioned by month with rows on
 * several days, an older process writes the ids as ids already, and the rebuilt tables are partitioned
 * by day (one partition per day their rows fall on) with every column as before but the timestamp's
 * and token counts' codecs, the other tables unchanged.
 */
import { expect } from 'vitest';
import type { ClickHouseStore } from '../../../src/platform/clickhouse/clickhouse.js';
import { SHARDING_KEYS } from '../../../src/platform/clickhouse/clickhouse-layout.js';
import { columns, rows, withCodecs010 } from '../../helpers/previous-clickhouse.js';
import { currentIds, describeTableRebuildMigration } from './table-rebuild-migration.js';

/** A table's partition key, as system.tables gives it. */
async function partitionKey(store: ClickHouseStore, table: string): Promise<string> {
  const [row] = await rows(store, `SELECT partition_key FROM system.tables WHERE database = '${store.database}' AND name = '${table}'`);
  return String(row?.partition_key);
}

/** The partitions a table's active parts are in, and the distinct days of its rows. */
async function partitionsAndDays(store: ClickHouseStore, table: string): Promise<{ partitions: string[]; days: string[] }> {
  const partitions = await rows(store, `SELECT DISTINCT partition FROM system.parts WHERE database = '${store.database}' AND table = '${table}' AND active ORDER BY partition`);
  const days = await rows(store, `SELECT DISTINCT toString(toDate(timestamp)) AS day FROM ${store.table(table)} ORDER BY day`);
  return { partitions: partitions.map((r) => String(r.partition)), days: days.map((r) => String(r.day)) };
}

describeTableRebuildMigration({
  migration: '010_event_partitions_by_day.sql',
  // Every table's partition key before the migration: the tables it does not rebuild keep theirs.
  inspect: async (store) => Object.fromEntries(await Promise.all(Object.keys(SHARDING_KEYS).map(async (t) => [t, await partitionKey(store, t)] as const))),
  startedFrom: {
    title: 'started from month partitions, with rows on several days in every table it rebuilds',
    async check({ current, rebuilt }) {
      for (const table of rebuilt) expect([table, (await partitionsAndDays(current, table)).days.length > 1]).toEqual([table, true]);
    },
  },
  rebuiltAs: {
    title: 'partitions the per-span tables by day, one partition per day of their rows; columns as before but their new codecs, other tables unchanged',
    async check({ previous, current, installation, before, rebuilt, tables }) {
      for (const table of tables) {
        const key = await partitionKey(previous, table);
        expect([table, key]).toEqual([table, await partitionKey(current, table)]);
        if (!rebuilt.includes(table)) expect([table, key]).toEqual([table, before[table]]);
        const after = await columns(previous, table);
        expect([table, after]).toEqual([table, await columns(current, table)]);
        // Names and types as before; only the codecs 010 sets changed.
        expect([table, after]).toEqual([table, withCodecs010(table, installation.columns[table])]);
        if (rebuilt.includes(table)) expect([table, after]).not.toEqual([table, installation.columns[table]]);
      }
      for (const table of rebuilt) {
        const { partitions, days } = await partitionsAndDays(previous, table);
        expect([table, partitions]).toEqual([table, days]);
      }
    },
  },
  shape: partitionKey,
  shapes: { old: 'toYYYYMM(timestamp)', rebuilt: 'toDate(timestamp)' },
  // 009 already stores the ids as ids.
  previousIds: currentIds,
});
