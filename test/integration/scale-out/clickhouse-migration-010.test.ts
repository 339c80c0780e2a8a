/**
 * ClickHouse migration 010 (the per-span event tables rebuilt partitioned by day, with new codecs) on
 * an installation with data. The analytics-views data set is sent through OTLP ingestion into a
 * current installation; every stored version of every row is copied into a database built from the
 * migrations before 010, which is then migrated. Afterwards the three tables are partitioned by day
 * (one partition per day their rows fall on) with every column as before but the timestamp's and token
 * counts' codecs, no rebuild copy is left, every row version reads back unchanged, every preset view
 * and golden DSL query answers as before and as the current installation does, and a second run
 * applies nothing.
 *
 * Five more installations: one with rows on 150 days (more partitions than one insert block may
 * touch by default), which the rebuild copies whole; one whose run stopped before its first EXCHANGE
 * TABLES (a half-made copy) and one interrupted right after it (the live table rebuilt, the old data
 * under the copy's name), which a later run finishes with the same rows; one where an older process
 * writes a row into a table while its copy is being made, which the catch-up after the swap carries
 * over; and one where such rows were written early in a long copy and a row written after the swap
 * looks older than them (another node's clock), which the catch-up carries over all the same.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrationDirs } from '../../../src/app/service.js';
import type { ClickHouseStore } from '../../../src/platform/clickhouse/clickhouse.js';
import { SHARDING_KEYS } from '../../../src/platform/clickhouse/clickhouse-layout.js';
import { migrateClickHouse, readMigrations } from '../../../src/platform/migrations.js';
import { allRows, columns, migrationStatements, previousInstallation, rows, tableNames, withCodecs010, type PreviousInstallation } from '../../helpers/previous-clickhouse.js';
import { baseInstant } from '../analytics-views/dataset.js';
import { seedThroughIngestion, startHarness, type Harness } from '../analytics-views/harness.js';
import { datasetAnswers } from './dataset-answers.js';

const MIGRATION = '010_event_partitions_by_day.sql';
const CHANGED = ['event_generation_completed', 'event_tool_called', 'event_span_errored'];
const TABLES = Object.keys(SHARDING_KEYS);
const base = baseInstant();

let h: Harness;
let installation: PreviousInstallation;
let previous: ClickHouseStore;
let tenantId: string;
let projectId: string;
let keysBefore: Record<string, string>;
let rowsBefore: Record<string, Record<string, unknown>[]>;
let before: Record<string, unknown>;
let applied: string[];
const others: PreviousInstallation[] = [];

const current = () => h.svc.service.deps.ch;
const answers = (ch: ClickHouseStore) => datasetAnswers(ch, h.svc.service.deps.sql, { tenantId, projectId, base });

/** Each table's partition key, as system.tables gives it. */
async function partitionKeys(store: ClickHouseStore): Promise<Record<string, string>> {
  const list = await rows(store, `SELECT name, partition_key FROM system.tables WHERE database = '${store.database}' AND name IN (${TABLES.map((t) => `'${t}'`).join(', ')})`);
  return Object.fromEntries(list.map((r) => [String(r.name), String(r.partition_key)]));
}

/** The partitions a table's active parts are in, and the distinct days of its rows. */
async function partitionsAndDays(store: ClickHouseStore, table: string): Promise<{ partitions: string[]; days: string[] }> {
  const partitions = await rows(store, `SELECT DISTINCT partition FROM system.parts WHERE database = '${store.database}' AND table = '${table}' AND active ORDER BY partition`);
  const days = await rows(store, `SELECT DISTINCT toString(toDate(timestamp)) AS day FROM ${store.table(table)} ORDER BY day`);
  return { partitions: partitions.map((r) => String(r.partition)), days: days.map((r) => String(r.day)) };
}

beforeAll(async () => {
  h = await startHarness();
  tenantId = h.svc.service.bootstrap!.tenantId;
  projectId = (await h.svc.newProject('migrated-010')).id;
  await seedThroughIngestion(h.svc, projectId, base);
  installation = await previousInstallation(current(), h.svc.dataDir, MIGRATION, TABLES);
  previous = installation.store;
  keysBefore = await partitionKeys(previous);
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
 * A copy of the previous schema with 010's statements run up to (not including) its first EXCHANGE
 * TABLES, and then a row of an older process in the old generation table: it came after the copy's
 * snapshot. `lateRows` reads such rows back.
 */
async function copiedThenLateRow(name: string, late: { trace_id: string; span_id: string }) {
  const other = await previousInstallation(current(), h.svc.dataDir, MIGRATION, TABLES, name);
  others.push(other);
  const store = other.store;
  const statements = migrationStatements(store, MIGRATION);
  const firstExchange = statements.findIndex((s) => s.startsWith('EXCHANGE TABLES'));
  for (const statement of statements.slice(0, firstExchange)) await store.client.command({ query: statement });
  await store.client.command({
    query: `INSERT INTO ${store.table('event_generation_completed')} (tenant_id, project_id, timestamp, model, trace_id, span_id)
      SELECT 'late', 'late', now64(3), 'm', toUUID('${late.trace_id}'), reinterpretAsUInt64(reverse(unhex('${late.span_id}')))`,
  });
  const lateRows = () =>
    rows(store, `SELECT toString(trace_id) AS trace_id, lower(leftPad(hex(span_id), 16, '0')) AS span_id FROM ${store.table('event_generation_completed')} WHERE tenant_id = 'late'`);
  return { store, rest: statements.slice(firstExchange), lateRows };
}

describe('ClickHouse migration 010 on an installation with data', () => {
  it('started from month partitions, with rows on several days in every table it rebuilds', async () => {
    for (const table of CHANGED) {
      expect([table, keysBefore[table]]).toEqual([table, 'toYYYYMM(timestamp)']);
      expect([table, (await partitionsAndDays(current(), table)).days.length > 1]).toEqual([table, true]);
    }
  });

  it('partitions the per-span tables by day, one partition per day of their rows; columns as before but their new codecs, other tables unchanged, no copy left', async () => {
    expect(applied).toEqual(readMigrations(migrationDirs.clickhouse).map((f) => f.name).filter((name) => name >= MIGRATION));
    expect(applied[0]).toBe(MIGRATION);
    const keys = await partitionKeys(previous);
    expect(keys).toEqual(await partitionKeys(current()));
    for (const table of TABLES) {
      expect([table, keys[table]]).toEqual([table, CHANGED.includes(table) ? 'toDate(timestamp)' : keysBefore[table]]);
      const after = await columns(previous, table);
      expect([table, after]).toEqual([table, await columns(current(), table)]);
      // Names and types as before; only the codecs 010 sets changed.
      expect([table, after]).toEqual([table, withCodecs010(table, installation.columns[table])]);
      if (CHANGED.includes(table)) expect([table, after]).not.toEqual([table, installation.columns[table]]);
    }
    for (const table of CHANGED) {
      const { partitions, days } = await partitionsAndDays(previous, table);
      expect([table, partitions]).toEqual([table, days]);
    }
    expect(await tableNames(previous)).toEqual(await tableNames(current()));
    expect((await tableNames(previous)).filter((n) => n.endsWith('_v010'))).toEqual([]);
  });

  it('keeps every row version unchanged', async () => {
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

  it('finishes a run stopped before its first EXCHANGE TABLES (a half-made copy left) with the same rows, no version twice', async () => {
    const late = { trace_id: '0a1b2c3d-0000-5000-8000-000000000013', span_id: '0000000000000456' };
    const { store, lateRows } = await copiedThenLateRow('lookout_previous_010_half_made', late);
    // The copy exists and holds every row but the late one; the live table is the old one.
    expect((await rows(store, `SELECT partition_key FROM system.tables WHERE database = '${store.database}' AND name = 'event_generation_completed'`))[0]).toEqual({ partition_key: 'toYYYYMM(timestamp)' });
    expect(await migrateClickHouse(store, migrationDirs.clickhouse)).toEqual(applied);
    expect(await lateRows()).toEqual([late]);
    for (const t of TABLES) expect([t, (await allRows(store, t)).filter((r) => r.tenant_id !== 'late')]).toEqual([t, rowsBefore[t]]);
    expect(await tableNames(store)).toEqual(await tableNames(current()));
  }, 120_000);

  it('finishes a run interrupted after its first EXCHANGE TABLES with the same rows, a row written during the copy included', async () => {
    // An older process's row lands in the old table after the copy; then the run stops right after the swap.
    const late = { trace_id: '0a1b2c3d-0000-5000-8000-000000000012', span_id: '0000000000000123' };
    const { store, rest, lateRows } = await copiedThenLateRow('lookout_previous_010_interrupted', late);
    await store.client.command({ query: rest[0] });
    // The state a crash leaves: the first table rebuilt, its old data (the late row too) under the copy's name.
    const keys = await rows(store, `SELECT name, partition_key FROM system.tables WHERE database = '${store.database}' AND name LIKE 'event_generation_completed%' ORDER BY name`);
    expect(keys).toEqual([
      { name: 'event_generation_completed', partition_key: 'toDate(timestamp)' },
      { name: 'event_generation_completed_v010', partition_key: 'toYYYYMM(timestamp)' },
    ]);
    expect(await migrateClickHouse(store, migrationDirs.clickhouse)).toEqual(applied);
    expect(await lateRows()).toEqual([late]);
    for (const t of TABLES) expect([t, (await allRows(store, t)).filter((r) => r.tenant_id !== 'late')]).toEqual([t, rowsBefore[t]]);
    expect(await tableNames(store)).toEqual(await tableNames(current()));
  }, 120_000);

  it('carries over rows written early in a long copy, even after a row written after the swap that looks older', async () => {
    // An older process writes A ten minutes before B during the copy; after the swap another node,
    // its clock a second behind, writes S. 009's anchor (the newest pre-swap row of the live table,
    // minus 2 minutes) would have been S and left A behind.
    const other = await previousInstallation(current(), h.svc.dataDir, MIGRATION, TABLES, 'lookout_previous_010_skew');
    others.push(other);
    const store = other.store;
    const statements = migrationStatements(store, MIGRATION);
    const firstExchange = statements.findIndex((s) => s.startsWith('EXCHANGE TABLES'));
    for (const statement of statements.slice(0, firstExchange)) await store.client.command({ query: statement });
    const at = Date.now();
    const write = (label: string, insertedAt: number) =>
      store.client.command({
        query: `INSERT INTO ${store.table('event_generation_completed')} (tenant_id, project_id, timestamp, model, trace_id, span_id, inserted_at)
          SELECT 'skew', 'skew', now64(3), '${label}', generateUUIDv4(), ${insertedAt}, fromUnixTimestamp64Milli(toInt64(${insertedAt}), 'UTC')`,
      });
    await write('A', at - 600_000);
    await write('B', at);
    await store.client.command({ query: statements[firstExchange] });
    await write('S', at - 1000);
    for (const statement of statements.slice(firstExchange + 1)) await store.client.command({ query: statement });
    const written = await rows(store, `SELECT model FROM ${store.table('event_generation_completed')} WHERE tenant_id = 'skew' ORDER BY model`);
    expect(written.map((r) => r.model)).toEqual(['A', 'B', 'S']);
  }, 120_000);

  it('rebuilds a table whose rows fall on more than 100 days (one insert block per copy) without refusing it', async () => {
    const other = await previousInstallation(current(), h.svc.dataDir, MIGRATION, TABLES, 'lookout_previous_010_many_days');
    others.push(other);
    const store = other.store;
    // 150 days, all inside the rows' lifetime: from 80 days back to 69 days ahead.
    await store.client.command({
      query: `INSERT INTO ${store.table('event_generation_completed')} (tenant_id, project_id, timestamp, model, trace_id, span_id)
        SELECT 'days', 'days', toStartOfDay(now64(3)) - INTERVAL 80 DAY + toIntervalDay(number) + INTERVAL 1 HOUR, 'm', generateUUIDv4(), number + 1 FROM numbers(150)`,
    });
    expect(await migrateClickHouse(store, migrationDirs.clickhouse)).toEqual(applied);
    const [stored] = await rows(store, `SELECT count() AS n, uniqExact(_partition_id) AS partitions FROM ${store.table('event_generation_completed')} WHERE tenant_id = 'days'`);
    expect(stored).toEqual({ n: 150, partitions: 150 });
  }, 120_000);

  it('carries over a row an older process writes while the copy is made', async () => {
    // An older process inserts into the old table after the copy's snapshot, before the swap.
    const late = { trace_id: '0a1b2c3d-0000-5000-8000-000000000011', span_id: '00000000000000ff' };
    const { store, rest, lateRows } = await copiedThenLateRow('lookout_previous_010_rolling', late);
    for (const statement of rest) await store.client.command({ query: statement });
    await store.client.insert({ table: store.table('schema_migrations'), values: [{ name: MIGRATION }], format: 'JSONEachRow' });
    expect(await lateRows()).toEqual([late]);
    // Nothing else copied twice: every other row version as before.
    const withoutLate = (await allRows(store, 'event_generation_completed')).filter((r) => r.tenant_id !== 'late');
    expect(withoutLate).toEqual(rowsBefore.event_generation_completed);
    expect(await migrateClickHouse(store, migrationDirs.clickhouse)).toEqual(applied.slice(1));
  }, 120_000);
});
