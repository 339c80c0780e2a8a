/**
 * An installation on the previous schema (clickhouse/001–004, plain String
 * dimensions, no run coverage counts) migrates in place. The data set of analytics-views is sent
 * through OTLP ingestion into a current installation; its rows are copied, every version of every
 * row, into a second database built from the previous migrations only; that database is migrated.
 * Afterwards its rows (read FINAL, all columns, with the backfilled counts), its column types, every
 * preset view and every golden DSL query answer exactly what the current installation answers —
 * whose answers analytics-views checks against independently computed values.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ViewName } from '../../../src/analytics/views/preset-views.js';
import { migrationDirs } from '../../../src/app/service.js';
import { openClickHouse, type ClickHouseStore } from '../../../src/platform/clickhouse/clickhouse.js';
import { SHARDING_KEYS } from '../../../src/platform/clickhouse/clickhouse-layout.js';
import { migrateClickHouse, readMigrations } from '../../../src/platform/migrations.js';
import { asText, CODECS_010, copyRows, tablesBefore, LATER_COLUMNS } from '../../helpers/previous-clickhouse.js';
import { tempDataDir } from '../../helpers/temp-dir.js';
import { baseInstant, viewsOverDataset } from '../analytics-views/dataset.js';
import { seedThroughIngestion, startHarness, type Harness } from '../analytics-views/harness.js';
import { datasetAnswers } from './dataset-answers.js';

const MIGRATION = '005_compact_columns_and_run_coverage.sql';
let h: Harness;
let previous: ClickHouseStore;
let previousDir: string;
let tenantId: string;
let projectId: string;
const base = baseInstant();
const { views: VIEWS } = viewsOverDataset(base);
const TABLES = tablesBefore(MIGRATION, Object.keys(SHARDING_KEYS));

const current = () => h.svc.service.deps.ch;

async function rows(store: ClickHouseStore, query: string): Promise<Record<string, unknown>[]> {
  const result = await store.client.query({ query, format: 'JSONEachRow', clickhouse_settings: { output_format_json_quote_64bit_integers: 0 } });
  return result.json();
}

/** Columns later migrations add (compared up to this migration's schema). */
const LATER: Record<string, string[]> = { event_trace_processed: ['first_processing'] };
/** Columns whose codec a later migration changes (007: ids back to LZ4; its own test checks them). */
const LATER_CODEC = new Set([
  ...['event_generation_completed', 'event_tool_called', 'event_span_errored'].flatMap((t) => [`${t}.trace_id`, `${t}.span_id`]),
  // 010: timestamps as deltas, token counts bit-packed.
  ...Object.entries(CODECS_010).flatMap(([t, codecs]) => Object.keys(codecs).map((c) => `${t}.${c}`)),
]);

/**
 * Columns whose type a later migration changes (008: LowCardinality tenant and project; 009: the
 * per-span tables' ids as UUID and UInt64; their own tests check them).
 */
const LATER_TYPE = new Set([
  ...['event_generation_completed', 'event_tool_called', 'event_span_errored', 'event_trace_processed'].flatMap((t) => [`${t}.tenant_id`, `${t}.project_id`]),
  ...['event_generation_completed', 'event_tool_called', 'event_span_errored'].flatMap((t) => [`${t}.trace_id`, `${t}.span_id`]),
]);

async function columns(store: ClickHouseStore, table: string): Promise<{ name: string; type: string; compression_codec: string }[]> {
  const all = (await rows(store, `SELECT name, type, compression_codec FROM system.columns WHERE database = '${store.database}' AND table = '${table}' ORDER BY position`)) as { name: string; type: string; compression_codec: string }[];
  return all.filter((c) => !(LATER[table] ?? []).includes(c.name) && !LATER_COLUMNS.has(c.name));
}

/** The columns as this migration leaves them: types and codecs a later one changes are compared by its test. */
async function columnsAsOf005(store: ClickHouseStore, table: string): Promise<{ name: string; type?: string; compression_codec?: string }[]> {
  return (await columns(store, table)).map(({ compression_codec, type, name }) => ({
    name,
    ...(LATER_TYPE.has(`${table}.${name}`) ? {} : { type }),
    ...(LATER_CODEC.has(`${table}.${name}`) ? {} : { compression_codec }),
  }));
}

/** Every row of a table, newest version per key, all columns, in key order. */
async function finalRows(store: ClickHouseStore, table: string): Promise<Record<string, unknown>[]> {
  // Ids as text: 009 stores the per-span tables' ids as UUID / UInt64 (its own test checks them).
  const list = await columns(store, table);
  return rows(store, `SELECT ${list.map(asText).join(', ')} FROM ${store.table(table)} FINAL ORDER BY ${list.map((c) => `\`${c.name}\``).join(', ')}`);
}

const answers = (ch: ClickHouseStore, views: ViewName[]) => datasetAnswers(ch, h.svc.service.deps.sql, { tenantId, projectId, base }, views);

let before: Record<string, unknown>;
let previousSchema: { modelType: string; processedColumns: string[]; counts: Record<string, number> };
let applied: string[];

beforeAll(async () => {
  h = await startHarness();
  tenantId = h.svc.service.bootstrap!.tenantId;
  projectId = (await h.svc.newProject('migrated')).id;
  await seedThroughIngestion(h.svc, projectId, base);
  // The previous schema: the migrations main had before this one, in a database of the same engine.
  previousDir = tempDataDir('lookout-migrations-');
  for (const file of readMigrations(migrationDirs.clickhouse).filter((f) => f.name < MIGRATION)) fs.writeFileSync(path.join(previousDir, file.name), file.text);
  previous = await openClickHouse({ url: null, user: '', password: '', database: 'lookout_previous', cluster: null, dataDir: h.svc.dataDir });
  expect(await migrateClickHouse(previous, previousDir)).toEqual(['001_spans.sql', '002_events.sql', '003_traces.sql', '004_cache_write_tokens.sql']);
  // Every stored version of every row (re-settled traces, rewritten tool rows), as the old tables hold them.
  for (const table of TABLES) await copyRows(current(), previous, table);
  // Everything but the window view reads only columns the previous schema has.
  before = await answers(previous, ['general', 'base', 'agent_scorecard', 'tool_aggregates', 'model_scorecard', 'roi']);
  const counts: Record<string, number> = {};
  for (const table of TABLES) counts[table] = Number((await rows(previous, `SELECT count() AS n FROM ${previous.table(table)}`))[0].n);
  previousSchema = {
    modelType: Object.fromEntries((await columns(previous, 'event_generation_completed')).map((c) => [c.name, c.type])).model,
    processedColumns: (await columns(previous, 'event_trace_processed')).map((c) => c.name),
    counts,
  };
  // Migrated up to this migration only: later ones (006's first_processing) have tests of their own.
  for (const file of readMigrations(migrationDirs.clickhouse).filter((f) => f.name === MIGRATION)) fs.writeFileSync(path.join(previousDir, file.name), file.text);
  applied = await migrateClickHouse(previous, previousDir);
}, 180_000);

afterAll(async () => {
  await previous?.close();
  await h?.stop();
  if (previousDir) fs.rmSync(previousDir, { recursive: true, force: true });
});

describe('ClickHouse migration 005 on an installation with data', () => {
  it('started from the previous schema: plain String dimensions, no coverage counts, rows in every table', () => {
    expect(previousSchema.modelType).toBe('String');
    expect(previousSchema.processedColumns).not.toContain('tool_calls');
    for (const table of TABLES) expect([table, previousSchema.counts[table] > 0]).toEqual([table, true]);
  });

  it('converts every table to the current schema, and the rows (with backfilled counts) equal a current installation\'s', async () => {
    expect(applied).toEqual([MIGRATION]);
    for (const table of TABLES) {
      expect([table, await columnsAsOf005(previous, table)]).toEqual([table, await columnsAsOf005(current(), table)]);
      expect([table, await finalRows(previous, table)]).toEqual([table, await finalRows(current(), table)]);
    }
    // The counts were really backfilled (not defaults on both sides): the data set has both.
    const [counted] = await rows(previous, `SELECT sum(generations) AS g, sum(generations_with_provider) AS p, countIf(tool_calls > 0) AS t FROM ${previous.table('event_trace_processed')} FINAL`);
    expect(Number(counted.g)).toBeGreaterThan(Number(counted.p));
    expect(Number(counted.p)).toBeGreaterThan(0);
    expect(Number(counted.t)).toBeGreaterThan(0);
    const types = Object.fromEntries((await columns(previous, 'event_generation_completed')).map((c) => [c.name, c]));
    expect(types.model.type).toBe('LowCardinality(String)');
    expect(types.trace_id.compression_codec).toBe('CODEC(ZSTD(1))');
  });

  it('answers every view and golden DSL query as before, and as a current installation does', async () => {
    const after = await answers(previous, VIEWS.map(([v]) => v));
    const fresh = await answers(current(), VIEWS.map(([v]) => v));
    expect(after).toEqual(fresh);
    for (const [key, value] of Object.entries(before)) expect([key, after[key]]).toEqual([key, value]);
    // Not a vacuous comparison: the window view's coverage saw model calls and tool calls.
    const window = after['view window'] as { coverage: { window: { provider: { eligible: number }; tools: { observed: number } } } };
    expect(window.coverage.window.provider.eligible).toBeGreaterThan(0);
    expect(window.coverage.window.tools.observed).toBeGreaterThan(0);
  });

  it('is a no-op the second time', async () => {
    expect(await migrateClickHouse(previous, previousDir)).toEqual([]);
  });
});
