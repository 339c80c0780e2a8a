/**
 * Golden SQL and parameters of the preset views, as the SQL layer compiles them for a ClickHouse
 * server (`{pN:Type}` placeholders) with the settings every view statement carries. A missing or
 * different file fails. `UPDATE_GOLDEN=1 npx vitest run test/golden` rewrites the files after an
 * intended change; review the diff like code (a changed statement is a changed query plan).
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { DEFAULT_MAX_MEMORY_BYTES } from '../../../src/analytics/query/build.js';
import { printView, VIEW_SETTINGS } from '../../../src/analytics/views/view-sql.js';
import { compile } from '../../../src/platform/clickhouse/sql/compile.js';
import { countGuards } from '../../../src/platform/clickhouse/sql/tenant-guard.js';
import { GOLDEN_PROJECT, GOLDEN_TENANT, VIEW_GOLDEN_CASES } from './cases.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const context = { tenantId: GOLDEN_TENANT, projectId: GOLDEN_PROJECT, qualify: (t: string) => `\`lookout\`.\`${t}\`` };

function render(name: string): string {
  const statement = compile(printView(VIEW_GOLDEN_CASES[name], context), 'server', { ...VIEW_SETTINGS, max_memory_usage: DEFAULT_MAX_MEMORY_BYTES });
  return `${statement.sql}\n\n-- params\n${JSON.stringify(statement.params, null, 2)}\n`;
}

describe('preset view golden SQL', () => {
  for (const name of Object.keys(VIEW_GOLDEN_CASES)) {
    test(name, () => {
      const file = path.join(here, `${name}.sql`);
      const actual = render(name);
      if (process.env.UPDATE_GOLDEN === '1') fs.writeFileSync(file, actual);
      expect(fs.existsSync(file), `${name}.sql is missing; create it with UPDATE_GOLDEN=1 and review it`).toBe(true);
      expect(actual).toBe(fs.readFileSync(file, 'utf8'));
    });
  }

  test('every golden file belongs to a case (a deleted case takes its file with it)', () => {
    const files = fs.readdirSync(here).filter((f) => f.endsWith('.sql')).map((f) => f.slice(0, -4));
    expect(files.sort()).toEqual(Object.keys(VIEW_GOLDEN_CASES).sort());
  });

  test('every table a view statement reads carries the guard of the caller, and nobody else', () => {
    for (const [name, node] of Object.entries(VIEW_GOLDEN_CASES)) {
      const counts = countGuards(printView(node, context), GOLDEN_TENANT);
      expect(counts.tables, name).toBeGreaterThan(0);
      expect(counts.guards, name).toBe(counts.tables);
      expect(counts.foreignGuards, name).toBe(0);
      const { params } = compile(printView(node, context), 'server');
      expect(Object.values(params), name).toContain(GOLDEN_PROJECT);
    }
  });
});
