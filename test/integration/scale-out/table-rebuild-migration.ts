/**
 * The suite every ClickHouse migration written by the table-rebuild recipe
 * (scripts/clickhouse-rebuilds/table-rebuild.ts) runs on an installation with data. The
 * analytics-views data set is sent through OTLP ingestion into a current installation; every stored
 * version of every row is copied into a database built from the migrations before the one tested,
 * which is then migrated. Afterwards the rebuilt tables look as the migration's part says, no rebuild
 * copy is left, every row version reads back unchanged, every preset view and golden DSL query
 * answers as before and as the current installation does, and a second run applies nothing.
 *
 * The recipe's own promises run for every migration on installations of their own: a run stopped
 * before its first EXCHANGE TABLES (a half-made copy) and one interrupted right after it (the live
 * table rebuilt, the old data under the copy's name) are finished by a later run with the same rows;
 * a row an older process writes into a table while its copy is made is carried over by the catch-up
 * after the swap, also when it was written early in a long copy and a row written after the swap
 * looks older (another node's clock); and a table whose rows fall on more than 100 days is copied in
 * one insert block without being refused.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REBUILD_MIGRATIONS } from '../../../scripts/clickhouse-rebuilds/rebuilds.js';
import { migrationDirs } from '../../../src/app/service.js';
import type { ClickHouseStore } from '../../../src/platform/clickhouse/clickhouse.js';
import { SHARDING_KEYS } from '../../../src/platform/clickhouse/clickhouse-layout.js';
import { migrateClickHouse, readMigrations } from '../../../src/platform/migrations.js';
import { allRows, migrationStatements, previousInstallation, rows, tableNames, tablesBefore, type PreviousInstallation } from '../../helpers/previous-clickhouse.js';
import { baseInstant } from '../analytics-views/dataset.js';
import { seedThroughIngestion, startHarness, type Harness } from '../analytics-views/harness.js';
import { datasetAnswers } from './dataset-answers.js';

/** What a migration's checks see: the installations and what was read before the migration ran. */
export interface RebuildContext<Before> {
  /** The current installation (every migration applied at start-up). */
  current: ClickHouseStore;
  /** The installation built on the previous schema, migrated in the suite's beforeAll. */
  previous: ClickHouseStore;
  installation: PreviousInstallation;
  /** What `inspect` read from `previous` before it was migrated. */
  before: Before;
  /** Every row version of every table before the migration (ids as text). */
  rowsBefore: Record<string, Record<string, unknown>[]>;
  /** The tables the migration rebuilds. */
  rebuilt: readonly string[];
  tables: readonly string[];
}

/** SQL expressions for an event row's two ids, from a UUID's text and 16 hex characters of the span id. */
export type IdColumns = (traceIdText: string, spanIdHex: string) => { trace_id: string; span_id: string };

/** The ids as the current schema stores them (UUID trace_id, UInt64 span_id). */
export const currentIds: IdColumns = (trace, span) => ({ trace_id: `toUUID(${trace})`, span_id: `reinterpretAsUInt64(reverse(unhex(${span})))` });

/** What differs between the migrations the recipe writes. */
export interface RebuildMigration<Before> {
  /** The migration file, e.g. `010_event_partitions_by_day.sql`. */
  migration: string;
  /** Reads what the checks need from the previous schema before it is migrated. */
  inspect(store: ClickHouseStore): Promise<Before>;
  /** What the installation started from (the schema the migration changes, with data to change). */
  startedFrom: { title: string; check(ctx: RebuildContext<Before>): Promise<void> };
  /** What the rebuilt tables must look like after the migration. */
  rebuiltAs: { title: string; check(ctx: RebuildContext<Before>): Promise<void> };
  /**
   * A table's shape where the migration changes it (a column's type, the partition key), as one
   * string: the rebuilt table's and the old table's differ, so an interrupted run's state is visible.
   */
  shape(store: ClickHouseStore, table: string): Promise<string>;
  shapes: { old: string; rebuilt: string };
  /** How an older process (the schema before the migration) writes an event row's ids. */
  previousIds: IdColumns;
}

const ALL_TABLES = Object.keys(SHARDING_KEYS);
const LATE_TABLE = 'event_generation_completed';
const base = baseInstant();

/** Defines the suite of migration `spec.migration` on an installation with data. */
export function describeTableRebuildMigration<Before>(spec: RebuildMigration<Before>): void {
  const { migration } = spec;
  // The tables the previous schema has: a later migration's table is not there yet.
  const TABLES = tablesBefore(migration, ALL_TABLES);
  const number = migration.slice(0, 3);
  const suffix = REBUILD_MIGRATIONS[migration].suffix;
  const rebuilt = REBUILD_MIGRATIONS[migration].tables.map((t) => t.table);

  let h: Harness;
  let tenantId: string;
  let projectId: string;
  let ctx: RebuildContext<Before>;
  let answersBefore: Record<string, unknown>;
  let applied: string[];
  const shapesBefore: Record<string, string> = {};
  const others: PreviousInstallation[] = [];

  const current = () => h.svc.service.deps.ch;
  const answers = (ch: ClickHouseStore) => datasetAnswers(ch, h.svc.service.deps.sql, { tenantId, projectId, base });

  beforeAll(async () => {
    h = await startHarness();
    tenantId = h.svc.service.bootstrap!.tenantId;
    projectId = (await h.svc.newProject(`migrated-${number}`)).id;
    await seedThroughIngestion(h.svc, projectId, base);
    const installation = await previousInstallation(current(), h.svc.dataDir, migration, TABLES);
    const previous = installation.store;
    const before = await spec.inspect(previous);
    for (const table of rebuilt) shapesBefore[table] = await spec.shape(previous, table);
    const rowsBefore = Object.fromEntries(await Promise.all(TABLES.map(async (t) => [t, await allRows(previous, t)] as const)));
    answersBefore = await answers(previous);
    ctx = { current: current(), previous, installation, before, rowsBefore, rebuilt, tables: TABLES };
    applied = await migrateClickHouse(previous, migrationDirs.clickhouse);
  }, 240_000);

  afterAll(async () => {
    for (const other of others) await other.close();
    await ctx?.installation.close();
    await h?.stop();
  });

  /** Another installation on the previous schema, with the same rows, closed after the suite. */
  async function another(name: string): Promise<ClickHouseStore> {
    const other = await previousInstallation(current(), h.svc.dataDir, migration, TABLES, `lookout_previous_${number}_${name}`);
    others.push(other);
    return other.store;
  }

  /** An event row written by `ids`' process; `spanIdHex` and `insertedAt` are SQL expressions. */
  function writeRow(store: ClickHouseStore, ids: IdColumns, row: { tenant: string; model: string; traceIdText: string; spanIdHex: string; insertedAt?: string }) {
    const { trace_id, span_id } = ids(row.traceIdText, row.spanIdHex);
    const version = row.insertedAt ? ', inserted_at' : '';
    return store.client.command({
      query: `INSERT INTO ${store.table(LATE_TABLE)} (tenant_id, project_id, timestamp, model, trace_id, span_id${version})
        SELECT '${row.tenant}', '${row.tenant}', now64(3), '${row.model}', ${trace_id}, ${span_id}${row.insertedAt ? `, ${row.insertedAt}` : ''}`,
    });
  }

  /** The migration's statements, with the index of its first EXCHANGE TABLES. */
  function statementsOf(store: ClickHouseStore) {
    const statements = migrationStatements(store, migration);
    return { statements, firstExchange: statements.findIndex((s) => s.startsWith('EXCHANGE TABLES')) };
  }

  /**
   * Another installation with the migration's statements run up to (not including) its first
   * EXCHANGE TABLES, and then a row of an older process in the old generation table: it came after
   * the copy's snapshot. `lateRows` reads such rows back (ids as text).
   */
  async function copiedThenLateRow(name: string, late: { trace_id: string; span_id: string }) {
    const store = await another(name);
    const { statements, firstExchange } = statementsOf(store);
    for (const statement of statements.slice(0, firstExchange)) await store.client.command({ query: statement });
    await writeRow(store, spec.previousIds, { tenant: 'late', model: 'm', traceIdText: `'${late.trace_id}'`, spanIdHex: `'${late.span_id}'` });
    const lateRows = () =>
      rows(store, `SELECT toString(trace_id) AS trace_id, lower(leftPad(hex(span_id), 16, '0')) AS span_id FROM ${store.table(LATE_TABLE)} WHERE tenant_id = 'late'`);
    return { store, rest: statements.slice(firstExchange), lateRows };
  }

  /** Every row version of every table as before the migration, the `late` rows aside. */
  async function expectRowsAsBefore(store: ClickHouseStore) {
    for (const t of TABLES) expect([t, (await allRows(store, t)).filter((r) => r.tenant_id !== 'late')]).toEqual([t, ctx.rowsBefore[t]]);
  }

  /** A late row's ids, distinct per migration and case. */
  const lateIds = (n: number) => ({ trace_id: `0a1b2c3d-0000-5000-8000-000000${number}${String(n).padStart(3, '0')}`, span_id: `0000000000${number}${String(n).padStart(3, '0')}` });

  describe(`ClickHouse migration ${number} on an installation with data`, () => {
    it(spec.startedFrom.title, async () => {
      for (const table of rebuilt) {
        expect([table, shapesBefore[table]]).toEqual([table, spec.shapes.old]);
        expect([table, ctx.rowsBefore[table].length > 0]).toEqual([table, true]);
      }
      await spec.startedFrom.check(ctx);
    });

    it(`${spec.rebuiltAs.title}; no copy left`, async () => {
      expect(applied).toEqual(readMigrations(migrationDirs.clickhouse).map((f) => f.name).filter((name) => name >= migration));
      expect(applied[0]).toBe(migration);
      for (const table of rebuilt) expect([table, await spec.shape(ctx.previous, table)]).toEqual([table, spec.shapes.rebuilt]);
      await spec.rebuiltAs.check(ctx);
      expect(await tableNames(ctx.previous)).toEqual(await tableNames(current()));
      expect((await tableNames(ctx.previous)).filter((n) => n.endsWith(`_${suffix}`))).toEqual([]);
    });

    it('keeps every row version unchanged (ids read back as the same text)', async () => {
      for (const table of TABLES) {
        const after = await allRows(ctx.previous, table);
        expect([table, after]).toEqual([table, ctx.rowsBefore[table]]);
        // A copy is one insert, and ReplacingMergeTree keeps one version of a key within an inserted
        // block (optimize_on_insert): the copies hold the versions the current installation reads
        // with FINAL, where settling's newer versions may still sit beside ingestion's in other parts.
        expect([table, after]).toEqual([table, await allRows(current(), table, { final: true })]);
      }
    });

    it('answers every view and golden DSL query as before, and as a current installation does', async () => {
      const after = await answers(ctx.previous);
      expect(after).toEqual(await answers(current()));
      for (const [key, value] of Object.entries(answersBefore)) expect([key, after[key]]).toEqual([key, value]);
      // Not a vacuous comparison: the tool view counted traces, the scorecard model calls.
      const tools = after['view tool_aggregates'] as { rows: { traces: number }[] };
      expect(tools.rows.some((r) => r.traces > 0)).toBe(true);
      const scorecard = after['view model_scorecard'] as { rows: unknown[] };
      expect(scorecard.rows.length).toBeGreaterThan(0);
    });

    it('is a no-op the second time', async () => {
      expect(await migrateClickHouse(ctx.previous, migrationDirs.clickhouse)).toEqual([]);
    });

    it('finishes a run stopped before its first EXCHANGE TABLES (a half-made copy left) with the same rows, no version twice', async () => {
      const late = lateIds(3);
      const { store, lateRows } = await copiedThenLateRow('half_made', late);
      // The copy exists and holds every row but the late one; the live table is the old one.
      expect(await spec.shape(store, LATE_TABLE)).toBe(spec.shapes.old);
      expect(await spec.shape(store, `${LATE_TABLE}_${suffix}`)).toBe(spec.shapes.rebuilt);
      expect(await migrateClickHouse(store, migrationDirs.clickhouse)).toEqual(applied);
      expect(await lateRows()).toEqual([late]);
      await expectRowsAsBefore(store);
      expect(await tableNames(store)).toEqual(await tableNames(current()));
    }, 120_000);

    it('finishes a run interrupted after its first EXCHANGE TABLES with the same rows, a row written during the copy included', async () => {
      // An older process's row lands in the old table after the copy; then the run stops right after the swap.
      const late = lateIds(2);
      const { store, rest, lateRows } = await copiedThenLateRow('interrupted', late);
      await store.client.command({ query: rest[0] });
      // The state a crash leaves: the first table rebuilt, its old data (the late row too) under the copy's name.
      expect(await spec.shape(store, LATE_TABLE)).toBe(spec.shapes.rebuilt);
      expect(await spec.shape(store, `${LATE_TABLE}_${suffix}`)).toBe(spec.shapes.old);
      expect(await migrateClickHouse(store, migrationDirs.clickhouse)).toEqual(applied);
      expect(await lateRows()).toEqual([late]);
      await expectRowsAsBefore(store);
      expect(await tableNames(store)).toEqual(await tableNames(current()));
    }, 120_000);

    it('carries over rows written early in a long copy, even after a row written after the swap that looks older', async () => {
      // An older process writes A ten minutes before B during the copy; after the swap another node,
      // its clock a second behind, writes S. An anchor taken from the live table's newest row before
      // the swap, minus 2 minutes, would have been S and left A behind.
      const store = await another('skew');
      const { statements, firstExchange } = statementsOf(store);
      for (const statement of statements.slice(0, firstExchange)) await store.client.command({ query: statement });
      const at = Date.now();
      const write = (ids: IdColumns, model: string, insertedAt: number) =>
        writeRow(store, ids, {
          tenant: 'skew',
          model,
          traceIdText: 'toString(generateUUIDv4())',
          spanIdHex: `lower(leftPad(hex(toUInt64(${insertedAt})), 16, '0'))`,
          insertedAt: `fromUnixTimestamp64Milli(toInt64(${insertedAt}), 'UTC')`,
        });
      await write(spec.previousIds, 'A', at - 600_000);
      await write(spec.previousIds, 'B', at);
      await store.client.command({ query: statements[firstExchange] });
      await write(currentIds, 'S', at - 1000);
      for (const statement of statements.slice(firstExchange + 1)) await store.client.command({ query: statement });
      const written = await rows(store, `SELECT model FROM ${store.table(LATE_TABLE)} WHERE tenant_id = 'skew' ORDER BY model`);
      expect(written.map((r) => r.model)).toEqual(['A', 'B', 'S']);
    }, 120_000);

    it('rebuilds a table whose rows fall on more than 100 days (one insert block per copy) without refusing it', async () => {
      const store = await another('many_days');
      // 150 days, all inside the rows' lifetime: from 80 days back to 69 days ahead.
      const { trace_id, span_id } = spec.previousIds('toString(generateUUIDv4())', "lower(leftPad(hex(number + 1), 16, '0'))");
      await store.client.command({
        query: `INSERT INTO ${store.table(LATE_TABLE)} (tenant_id, project_id, timestamp, model, trace_id, span_id)
          SELECT 'days', 'days', toStartOfDay(now64(3)) - INTERVAL 80 DAY + toIntervalDay(number) + INTERVAL 1 HOUR, 'm', ${trace_id}, ${span_id} FROM numbers(150)`,
      });
      expect(await migrateClickHouse(store, migrationDirs.clickhouse)).toEqual(applied);
      // Partitioned by day since 010, whichever migration ran first.
      const [stored] = await rows(store, `SELECT count() AS n, uniqExact(_partition_id) AS partitions FROM ${store.table(LATE_TABLE)} WHERE tenant_id = 'days'`);
      expect(stored).toEqual({ n: 150, partitions: 150 });
    }, 120_000);

    it('carries over a row an older process writes while the copy is made', async () => {
      // An older process inserts into the old table after the copy's snapshot, before the swap.
      const late = lateIds(1);
      const { store, rest, lateRows } = await copiedThenLateRow('rolling', late);
      for (const statement of rest) await store.client.command({ query: statement });
      await store.client.insert({ table: store.table('schema_migrations'), values: [{ name: migration }], format: 'JSONEachRow' });
      expect(await lateRows()).toEqual([late]);
      // Nothing else copied twice: every other row version as before.
      const withoutLate = (await allRows(store, LATE_TABLE)).filter((r) => r.tenant_id !== 'late');
      expect(withoutLate).toEqual(ctx.rowsBefore[LATE_TABLE]);
      expect(await migrateClickHouse(store, migrationDirs.clickhouse)).toEqual(applied.slice(1));
    }, 120_000);
  });
}
