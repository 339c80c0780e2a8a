/**
 * The preset views write no SQL text: their statements are trees of the analytics AST, printed by
 * its printer, which adds the tenant guard to every table it reads. So no file of
 * src/analytics/views may take the SQL layer's text builders (sql, raw, fromText, param, join),
 * its table marker or guard (scopedTable, tenantGuard) or trace.processed's read (processedTraces);
 * type imports are fine.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const viewsDir = path.resolve(import.meta.dirname, '..', '..', '..', 'src', 'analytics', 'views');

/** Value imports (not `import type`) from a module of the ClickHouse SQL layer, with the names they take. */
function sqlLayerValueImports(text: string): string[] {
  const found: string[] = [];
  for (const match of text.matchAll(/import\s+(type\s+)?\{([^}]*)\}\s+from\s+'([^']+)'/g)) {
    const [, typeOnly, names, from] = match;
    if (typeOnly || !from.includes('platform/clickhouse/sql/')) continue;
    const values = names
      .split(',')
      .map((n) => n.trim())
      .filter((n) => n && !n.startsWith('type '));
    const forbidden = values.filter((n) => ['sql', 'raw', 'fromText', 'param', 'join', 'scopedTable', 'tenantGuard', 'processedTraces', 'traceKeysGuard'].includes(n.split(/\s+as\s+/)[0]));
    if (forbidden.length > 0) found.push(`${from}: ${forbidden.join(', ')}`);
  }
  return found;
}

describe('the preset views go through the analytics AST', () => {
  it('recognises what it forbids', () => {
    expect(sqlLayerValueImports("import { raw, sql } from '../../platform/clickhouse/sql/fragment.js';")).toHaveLength(1);
    expect(sqlLayerValueImports("import { scopedTable, tenantGuard } from '../../platform/clickhouse/sql/tenant-guard.js';")).toHaveLength(1);
    expect(sqlLayerValueImports("import type { Fragment } from '../../platform/clickhouse/sql/fragment.js';")).toHaveLength(0);
    expect(sqlLayerValueImports("import { type Fragment } from '../../platform/clickhouse/sql/fragment.js';")).toHaveLength(0);
  });

  it('no view file takes the SQL layer\'s text builders, table marker or guard', () => {
    const offences = fs
      .readdirSync(viewsDir)
      .filter((f) => f.endsWith('.ts'))
      .flatMap((f) => sqlLayerValueImports(fs.readFileSync(path.join(viewsDir, f), 'utf8')).map((o) => `${f}: ${o}`));
    expect(offences).toEqual([]);
  });
});
