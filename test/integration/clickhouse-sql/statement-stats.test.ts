import fs from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';
import { openClickHouse } from '../../../src/platform/clickhouse/clickhouse.js';
import { param, raw, sql } from '../../../src/platform/clickhouse/sql/fragment.js';
import { statementKind } from '../../../src/platform/clickhouse/sql/statement-stats.js';
import { tempDataDir } from '../../helpers/temp-dir.js';

// The ClickHouse statistics file: the benchmark's view of what the engine did per statement kind (the embedded
// engine keeps no system.query_log).

it('names a statement by lane, verb, first table and grouping', () => {
  const check = sql`SELECT trace_id, uniqExact(span_id) FROM ${raw('`lookout`.`spans`')} WHERE trace_id IN ${param('Array(String)', ['a'])} GROUP BY trace_id`;
  expect(statementKind('ingest', check)).toBe('ingest select spans grouped');
  expect(statementKind('ingest', 'INSERT INTO `lookout`.`event_tool_called`')).toBe('ingest insert event_tool_called');
  expect(statementKind('analytics', sql`WITH x AS (SELECT 1) SELECT count() FROM ${raw('`lookout`.`event_trace_processed`')} FINAL`)).toBe(
    'analytics select event_trace_processed',
  );
});

it('writes statements per kind and the engine counters of the run on close', async () => {
  const dir = tempDataDir();
  const file = path.join(dir, 'engine-stats.json');
  const ch = await openClickHouse({ url: null, user: '', password: '', database: 'stats_test', cluster: null, dataDir: dir, statsFile: file });
  await ch.command(raw(`CREATE TABLE ${ch.table('t')} (a UInt64) ENGINE = MergeTree ORDER BY a`), 'system');
  await ch.insertLines(ch.table('t'), ['{"a":1}', '{"a":2}', '{"a":3}'], 'ingest');
  await ch.insertLines(ch.table('t'), ['{"a":4}'], 'ingest');
  expect(await ch.read(sql`SELECT count() AS n FROM ${raw(ch.table('t'))}`, { lane: 'ingest' })).toEqual([{ n: 4 }]);
  await ch.close();
  const stats = JSON.parse(fs.readFileSync(file, 'utf8')) as { kinds: Record<string, { statements: number; bytes: number }>; events: Record<string, number> };
  expect(stats.kinds['ingest insert t']).toMatchObject({ statements: 2, bytes: 32 });
  expect(stats.kinds['ingest select t'].statements).toBe(1);
  expect(stats.kinds['system create t'].statements).toBe(1);
  expect(stats.events.InsertedRows).toBeGreaterThanOrEqual(4);
  expect(stats.events.InsertQuery).toBeGreaterThanOrEqual(2);
});
