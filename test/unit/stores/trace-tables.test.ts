/**
 * The list of per-trace ClickHouse tables (src/platform/clickhouse/trace-tables.ts) is what a
 * deletion removes a trace from. It must name every table the migrations create with a `trace_id`
 * column, with the type that column has now: a table added later is deleted from only once listed.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { SHARDING_KEYS } from '../../../src/platform/clickhouse/clickhouse-layout.js';
import { PROJECT_ONLY_TABLES, TRACE_TABLES } from '../../../src/platform/clickhouse/trace-tables.js';

const dir = path.resolve(import.meta.dirname, '..', '..', '..', 'clickhouse');
const CREATE = /CREATE TABLE IF NOT EXISTS \{db\}\.([a-z_0-9]+) \{on_cluster\}\s*\(([\s\S]*?)\)\s*ENGINE/g;

/** Each table's trace_id type as the last migration that creates it (or its rebuild copy) declares it. */
function traceIdColumns(): Map<string, string | null> {
  const tables = new Map<string, string | null>();
  for (const file of fs.readdirSync(dir).filter((f) => f.endsWith('.sql')).sort()) {
    const text = fs.readFileSync(path.join(dir, file), 'utf8');
    for (const [, name, columns] of text.matchAll(CREATE)) {
      const column = /^\s*trace_id\s+([A-Za-z0-9()]+)/m.exec(columns);
      tables.set(name.replace(/_v\d{3}$/, ''), column ? column[1] : null);
    }
  }
  return tables;
}

describe('the per-trace ClickHouse tables', () => {
  it('name every table with a trace_id column, with its id type', () => {
    const columns = traceIdColumns();
    const withTrace = [...columns].filter(([, type]) => type !== null);
    expect(withTrace.length).toBeGreaterThanOrEqual(7);
    expect(Object.fromEntries(withTrace.map(([name, type]) => [name, type === 'UUID' ? 'uuid' : 'text']))).toEqual({ ...TRACE_TABLES });
  });

  it('with the per-project tables, cover every table the cluster layout knows', () => {
    expect([...Object.keys(TRACE_TABLES), ...PROJECT_ONLY_TABLES].sort()).toEqual(Object.keys(SHARDING_KEYS).sort());
  });
});
