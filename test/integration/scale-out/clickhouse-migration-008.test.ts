/**
 * ClickHouse migration 008 (tenant_id and project_id of the event tables FINAL reads become
 * LowCardinality(String)) on an installation with data. The analytics-views data set is sent through
 * OTLP ingestion into a current installation; every stored version of every row is copied into a
 * database built from the migrations before 008, which is then migrated. Afterwards its columns
 * equal a current installation's, every row version reads back unchanged, every preset view and
 * golden DSL query answers as before the migration and as the current installation does (whose
 * answers analytics-views checks against independently computed values), and a second run applies
 * nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrationDirs } from '../../../src/app/service.js';
import type { ClickHouseStore } from '../../../src/platform/clickhouse/clickhouse.js';
import { SHARDING_KEYS } from '../../../src/platform/clickhouse/clickhouse-layout.js';
import { migrateClickHouse, readMigrations } from '../../../src/platform/migrations.js';
import { allRows, columns, previousInstallation, rows, tablesBefore, withCodecs010, type Column, type PreviousInstallation } from '../../helpers/previous-clickhouse.js';
import { baseInstant } from '../analytics-views/dataset.js';
import { seedThroughIngestion, startHarness, type Harness } from '../analytics-views/harness.js';
import { datasetAnswers } from './dataset-answers.js';

const MIGRATION = '008_tenant_keys_low_cardinality.sql';
const CHANGED = ['event_generation_completed', 'event_tool_called', 'event_span_errored', 'event_trace_processed'];
const TABLES = tablesBefore(MIGRATION, Object.keys(SHARDING_KEYS));
const base = baseInstant();

let h: Harness;
let previous: ClickHouseStore;
let installation: PreviousInstallation;
let tenantId: string;
let projectId: string;
let previousColumns: Record<string, Column[]>;
let before: Record<string, unknown>;
let applied: string[];

const current = () => h.svc.service.deps.ch;
const answers = (ch: ClickHouseStore) => datasetAnswers(ch, h.svc.service.deps.sql, { tenantId, projectId, base });

const typeOf = (list: Column[], name: string) => list.find((c) => c.name === name)?.type;

beforeAll(async () => {
  h = await startHarness();
  tenantId = h.svc.service.bootstrap!.tenantId;
  projectId = (await h.svc.newProject('migrated-008')).id;
  await seedThroughIngestion(h.svc, projectId, base);
  installation = await previousInstallation(current(), h.svc.dataDir, MIGRATION, TABLES);
  previous = installation.store;
  previousColumns = installation.columns;
  before = await answers(previous);
  applied = await migrateClickHouse(previous, migrationDirs.clickhouse);
}, 180_000);

afterAll(async () => {
  await installation?.close();
  await h?.stop();
});

describe('ClickHouse migration 008 on an installation with data', () => {
  it('started from String tenant and project ids, with rows in every table it changes', async () => {
    for (const table of CHANGED) {
      expect([table, typeOf(previousColumns[table], 'tenant_id'), typeOf(previousColumns[table], 'project_id')]).toEqual([table, 'String', 'String']);
      expect([table, (await allRows(previous, table)).length > 0]).toEqual([table, true]);
    }
  });

  it('stores tenant_id and project_id as LowCardinality(String), every column as a current installation has it', async () => {
    // 008 and every later migration.
    expect(applied).toEqual(readMigrations(migrationDirs.clickhouse).map((f) => f.name).filter((name) => name >= MIGRATION));
    expect(applied[0]).toBe(MIGRATION);
    for (const table of TABLES) {
      const after = await columns(previous, table);
      expect([table, after]).toEqual([table, await columns(current(), table)]);
      // Only the two key columns' types changed, and only in the event tables FINAL reads (and the
      // per-span tables' ids, which 009 stores as UUID and UInt64; its own test checks them).
      const changed = CHANGED.includes(table) ? ['tenant_id', 'project_id'] : [];
      const LATER: Record<string, string> = table === 'event_trace_processed' ? {} : { trace_id: 'UUID', span_id: 'UInt64' };
      const expected = previousColumns[table].map((c) =>
        changed.includes(c.name) ? { ...c, type: 'LowCardinality(String)' } : CHANGED.includes(table) && LATER[c.name] ? { ...c, type: LATER[c.name] } : c);
      // (and the codecs 010 sets, checked by its own test)
      expect([table, after]).toEqual([table, withCodecs010(table, expected)]);
    }
    // The parts were rewritten by the time the migration answered (no mutation left running).
    const [pending] = await rows(previous, `SELECT count() AS n FROM system.mutations WHERE database = '${previous.database}' AND NOT is_done`);
    expect(Number(pending.n)).toBe(0);
  });

  it('keeps every row version unchanged', async () => {
    // The installation was copied in one insert per table, which keeps one version of a key: the
    // versions a read with FINAL sees (settling may leave an older one beside a newer in other parts).
    for (const table of TABLES) expect([table, await allRows(previous, table)]).toEqual([table, await allRows(current(), table, { final: true })]);
  });

  it('answers every view and golden DSL query as before, and as a current installation does', async () => {
    const after = await answers(previous);
    expect(after).toEqual(await answers(current()));
    for (const [key, value] of Object.entries(before)) expect([key, after[key]]).toEqual([key, value]);
    // Not a vacuous comparison: the scorecard counted model calls.
    const scorecard = after['view model_scorecard'] as { rows: { calls?: number; generations?: number }[] };
    expect(scorecard.rows.length).toBeGreaterThan(0);
  });

  it('is a no-op the second time', async () => {
    expect(await migrateClickHouse(previous, migrationDirs.clickhouse)).toEqual([]);
  });
});
