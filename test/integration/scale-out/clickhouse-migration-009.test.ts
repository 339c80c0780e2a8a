/**
 * ClickHouse migration 009 (the per-span event tables rebuilt with trace_id UUID and span_id UInt64)
 * on an installation with data. The analytics-views data set is sent through OTLP ingestion into a
 * current installation; every stored version of every row is copied (ids as the text the old schema
 * held) into a database built from the migrations before 009, which is then migrated. Afterwards its
 * columns equal a current installation's with only the two id types changed, no rebuild copy is
 * left, every row version reads back unchanged, every preset view and golden DSL query answers as
 * before and as the current installation does, and a second run applies nothing.
 *
 * Two more installations: one whose run was interrupted right after its first EXCHANGE TABLES (the
 * live table converted, the old data under the copy's name), which a later run finishes with the
 * same rows; and one where an older process writes a row into a table while its copy is being made
 * (a rolling upgrade), which the catch-up after the swap carries over.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrationDirs } from '../../../src/app/service.js';
import type { ClickHouseStore } from '../../../src/platform/clickhouse/clickhouse.js';
import { SHARDING_KEYS } from '../../../src/platform/clickhouse/clickhouse-layout.js';
import { migrateClickHouse, readMigrations } from '../../../src/platform/migrations.js';
import { allRows, columns, migrationStatements, previousInstallation, rows, tableNames, withCodecs010, type Column, type PreviousInstallation } from '../../helpers/previous-clickhouse.js';
import { baseInstant } from '../analytics-views/dataset.js';
import { seedThroughIngestion, startHarness, type Harness } from '../analytics-views/harness.js';
import { datasetAnswers } from './dataset-answers.js';

const MIGRATION = '009_event_ids_uuid_uint64.sql';
const CHANGED = ['event_generation_completed', 'event_tool_called', 'event_span_errored'];
const TABLES = Object.keys(SHARDING_KEYS);
const base = baseInstant();

let h: Harness;
let installation: PreviousInstallation;
let previous: ClickHouseStore;
let tenantId: string;
let projectId: string;
let previousColumns: Record<string, Column[]>;
let rowsBefore: Record<string, Record<string, unknown>[]>;
let before: Record<string, unknown>;
let applied: string[];
const others: PreviousInstallation[] = [];

const current = () => h.svc.service.deps.ch;
const answers = (ch: ClickHouseStore) => datasetAnswers(ch, h.svc.service.deps.sql, { tenantId, projectId, base });
const typeOf = (list: Column[], name: string) => list.find((c) => c.name === name)?.type;

beforeAll(async () => {
  h = await startHarness();
  tenantId = h.svc.service.bootstrap!.tenantId;
  projectId = (await h.svc.newProject('migrated-009')).id;
  await seedThroughIngestion(h.svc, projectId, base);
  installation = await previousInstallation(current(), h.svc.dataDir, MIGRATION, TABLES);
  previous = installation.store;
  previousColumns = installation.columns;
  rowsBefore = Object.fromEntries(await Promise.all(TABLES.map(async (t) => [t, await allRows(previous, t)] as const)));
  before = await answers(previous);
  applied = await migrateClickHouse(previous, migrationDirs.clickhouse);
}, 240_000);

afterAll(async () => {
  for (const other of others) await other.close();
  await installation?.close();
  await h?.stop();
});


/**
 * A copy of the previous schema with 009's statements run up to (not including) its first EXCHANGE
 * TABLES, and then a row of an older process (text ids) in the old generation table: it came after
 * the copy's snapshot. `lateRows` reads such rows back as text.
 */
async function copiedThenLateRow(name: string, late: { trace_id: string; span_id: string }) {
  const other = await previousInstallation(current(), h.svc.dataDir, MIGRATION, TABLES, name);
  others.push(other);
  const store = other.store;
  const statements = migrationStatements(store, MIGRATION);
  const firstExchange = statements.findIndex((s) => s.startsWith('EXCHANGE TABLES'));
  for (const statement of statements.slice(0, firstExchange)) await store.client.command({ query: statement });
  await store.client.command({
    query: `INSERT INTO ${store.table('event_generation_completed')} (tenant_id, project_id, timestamp, model, trace_id, span_id) VALUES ('late', 'late', now64(3), 'm', '${late.trace_id}', '${late.span_id}')`,
  });
  const lateRows = () =>
    rows(store, `SELECT toString(trace_id) AS trace_id, lower(leftPad(hex(span_id), 16, '0')) AS span_id FROM ${store.table('event_generation_completed')} WHERE tenant_id = 'late'`);
  return { store, rest: statements.slice(firstExchange), lateRows };
}

describe('ClickHouse migration 009 on an installation with data', () => {
  it('started from text ids, with rows in every table it rebuilds', async () => {
    for (const table of CHANGED) {
      expect([table, typeOf(previousColumns[table], 'trace_id'), typeOf(previousColumns[table], 'span_id')]).toEqual([table, 'String', 'String']);
      expect([table, rowsBefore[table].length > 0]).toEqual([table, true]);
    }
  });

  it('stores trace_id as UUID and span_id as UInt64, every column as a current installation has it, no copy left', async () => {
    expect(applied).toEqual(readMigrations(migrationDirs.clickhouse).map((f) => f.name).filter((name) => name >= MIGRATION));
    expect(applied[0]).toBe(MIGRATION);
    for (const table of TABLES) {
      const after = await columns(previous, table);
      expect([table, after]).toEqual([table, await columns(current(), table)]);
      const ids: Record<string, string> = CHANGED.includes(table) ? { trace_id: 'UUID', span_id: 'UInt64' } : {};
      // (and the codecs 010 sets, checked by its own test)
      expect([table, after]).toEqual([table, withCodecs010(table, previousColumns[table].map((c) => (ids[c.name] ? { ...c, type: ids[c.name] } : c)))]);
    }
    expect(await tableNames(previous)).toEqual(await tableNames(current()));
    expect((await tableNames(previous)).filter((n) => n.endsWith('_v009'))).toEqual([]);
  });

  it('keeps every row version unchanged (ids read back as the same text)', async () => {
    for (const table of TABLES) {
      const after = await allRows(previous, table);
      expect([table, after]).toEqual([table, rowsBefore[table]]);
      expect([table, after]).toEqual([table, await allRows(current(), table)]);
    }
  });

  it('answers every view and golden DSL query as before, and as a current installation does', async () => {
    const after = await answers(previous);
    expect(after).toEqual(await answers(current()));
    for (const [key, value] of Object.entries(before)) expect([key, after[key]]).toEqual([key, value]);
    // Not a vacuous comparison: the tool view counted traces, the scorecard model calls.
    const tools = after['view tool_aggregates'] as { rows: { traces: number }[] };
    expect(tools.rows.some((r) => r.traces > 0)).toBe(true);
    const scorecard = after['view model_scorecard'] as { rows: unknown[] };
    expect(scorecard.rows.length).toBeGreaterThan(0);
  });

  it('is a no-op the second time', async () => {
    expect(await migrateClickHouse(previous, migrationDirs.clickhouse)).toEqual([]);
  });

  it('finishes a run interrupted after its first EXCHANGE TABLES with the same rows, a row written during the copy included', async () => {
    // An older process's row lands in the old table after the copy; then the run stops right after the swap.
    const late = { trace_id: '0a1b2c3d-0000-5000-8000-000000000002', span_id: '0000000000000123' };
    const { store, rest, lateRows } = await copiedThenLateRow('lookout_previous_009_interrupted', late);
    await store.client.command({ query: rest[0] });
    // The state a crash leaves: the first table converted, its old data (the late row too) under the copy's name.
    expect(typeOf(await columns(store, 'event_generation_completed'), 'trace_id')).toBe('UUID');
    expect(typeOf(await columns(store, 'event_generation_completed_v009'), 'trace_id')).toBe('String');
    expect(await migrateClickHouse(store, migrationDirs.clickhouse)).toEqual(applied);
    expect(await lateRows()).toEqual([late]);
    for (const t of TABLES) expect([t, (await allRows(store, t)).filter((r) => r.tenant_id !== 'late')]).toEqual([t, rowsBefore[t]]);
    expect(await tableNames(store)).toEqual(await tableNames(current()));
  }, 120_000);

  it('carries over a row an older process writes while the copy is made', async () => {
    // An older process inserts into the old table (text ids) after the copy's snapshot, before the swap.
    const late = { trace_id: '0a1b2c3d-0000-5000-8000-000000000001', span_id: '00000000000000ff' };
    const { store, rest, lateRows } = await copiedThenLateRow('lookout_previous_009_rolling', late);
    for (const statement of rest) await store.client.command({ query: statement });
    await store.client.insert({ table: store.table('schema_migrations'), values: [{ name: MIGRATION }], format: 'JSONEachRow' });
    expect(await lateRows()).toEqual([late]);
    // Nothing else copied twice: every other row version as before.
    const withoutLate = (await allRows(store, 'event_generation_completed')).filter((r) => r.tenant_id !== 'late');
    expect(withoutLate).toEqual(rowsBefore.event_generation_completed);
    expect(await migrateClickHouse(store, migrationDirs.clickhouse)).toEqual(applied.slice(1));
  }, 120_000);
});
