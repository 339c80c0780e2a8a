import type { ClickHouseStore } from '../../src/platform/clickhouse/clickhouse.js';

/**
 * The insert methods of `store` with failures injected: before each insert into a table,
 * `failHere(table)` decides whether it throws instead (a store failing between two steps of a flush
 * or a settle round). Spread over the store: `{ ...store, ...failingInserts(store, failHere) }`.
 */
export function failingInserts(store: ClickHouseStore, failHere: (table: string) => boolean): Pick<ClickHouseStore, 'insertBody' | 'insertLines'> {
  const check = (table: string) => {
    if (failHere(table)) throw new Error(`injected failure inserting into ${table}`);
  };
  return {
    insertBody: async (table, parts, lane, columns, settings) => {
      check(table);
      await store.insertBody(table, parts, lane, columns, settings);
    },
    insertLines: async (table, lines, lane) => {
      check(table);
      await store.insertLines(table, lines, lane);
    },
  };
}
