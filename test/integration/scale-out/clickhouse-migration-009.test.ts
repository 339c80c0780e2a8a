/**
 * ClickHouse migration 009 (the per-span event tables rebuilt with trace_id UUID and span_id UInt64)
 * on an installation with data, by the suite of every table-rebuild migration
 * (table-rebuild-migration.ts). Its own part: the old tables hold the ids as text, an older process
 * writes them as text, and the rebuilt tables have every column as a current installation has it
 * with only the two id types changed (and the codecs 010 sets, checked by its own test).
 */
import { expect } from 'vitest';
import type { ClickHouseStore } from '../../../src/platform/clickhouse/clickhouse.js';
import { columns, withCodecs010, type Column } from '../../helpers/previous-clickhouse.js';
import { describeTableRebuildMigration } from './table-rebuild-migration.js';

const typeOf = (list: Column[], name: string) => list.find((c) => c.name === name)?.type;

describeTableRebuildMigration({
  migration: '009_event_ids_uuid_uint64.sql',
  inspect: async () => undefined,
  startedFrom: {
    title: 'started from text ids, with rows in every table it rebuilds',
    async check({ installation, rebuilt }) {
      for (const table of rebuilt) expect([table, typeOf(installation.columns[table], 'span_id')]).toEqual([table, 'String']);
    },
  },
  rebuiltAs: {
    title: 'stores trace_id as UUID and span_id as UInt64, every column as a current installation has it',
    async check({ previous, current, installation, rebuilt, tables }) {
      for (const table of tables) {
        const after = await columns(previous, table);
        expect([table, after]).toEqual([table, await columns(current, table)]);
        const ids: Record<string, string> = rebuilt.includes(table) ? { trace_id: 'UUID', span_id: 'UInt64' } : {};
        expect([table, after]).toEqual([table, withCodecs010(table, installation.columns[table].map((c) => (ids[c.name] ? { ...c, type: ids[c.name] } : c)))]);
      }
    },
  },
  // The trace id's type tells the old table from the rebuilt one.
  shape: async (store: ClickHouseStore, table: string) => String(typeOf(await columns(store, table), 'trace_id')),
  shapes: { old: 'String', rebuilt: 'UUID' },
  // Before 009 an older process writes both ids as their text.
  previousIds: (trace, span) => ({ trace_id: trace, span_id: span }),
});
