/**
 * Golden SQL and parameters of the analytics compiler (STYLE: Kysely asserts the exact SQL *and*
 * parameters), as the SQL layer compiles it for a ClickHouse server (`{pN:Type}` placeholders).
 * A missing or different file fails. `UPDATE_GOLDEN=1 npx vitest run test/golden` rewrites the
 * files after an intended change; review the diff like code.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { compileAnalyticsQuery } from '../../../src/analytics/query/run.js';
import { Printer } from '../../../src/analytics/query/print.js';
import { compile } from '../../../src/platform/clickhouse/sql/compile.js';
import { quoteString } from '../../../src/platform/clickhouse/sql/typed-literal.js';
import { GOLDEN_CASES, GOLDEN_PROJECT, GOLDEN_TENANT } from './cases.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const context = { tenantId: GOLDEN_TENANT, projectId: GOLDEN_PROJECT, qualify: (t: string) => `\`lookout\`.\`${t}\`` };

function render(name: string): string {
  const compiled = compileAnalyticsQuery(GOLDEN_CASES[name], context, { timeoutSeconds: 15 });
  const statement = compile(compiled.statement, 'server', compiled.settings);
  let text = `${statement.sql}\n\n-- params\n${JSON.stringify(statement.params, null, 2)}\n`;
  if (compiled.query.cost) {
    // What the cost module receives: the primary read's WHERE and the group expressions, each with its own values.
    const where = compile(Printer.where(compiled.compiled.primary, context), 'server');
    const groups = compiled.compiled.groups.map((g) => {
      const group = compile(Printer.expression(g.expr, context), 'server');
      return `${g.alias}: ${group.sql}${Object.keys(group.params).length > 0 ? ` -- ${JSON.stringify(group.params)}` : ''}`;
    });
    text += `\n-- cost where\n${where.sql}\n-- cost params\n${JSON.stringify(where.params, null, 2)}\n-- cost groups\n${groups.join('\n')}\n`;
  }
  return text;
}

describe('analytics query golden SQL', () => {
  for (const name of Object.keys(GOLDEN_CASES)) {
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
    expect(files.sort()).toEqual(Object.keys(GOLDEN_CASES).sort());
  });

  test('no caller value ever appears in the SQL text', () => {
    const printed = compileAnalyticsQuery(GOLDEN_CASES['hostile-values'], context, { timeoutSeconds: 15 });
    const compiled = compile(printed.statement, 'server', printed.settings);
    // Strip the placeholders (one hostile value is itself the text of a placeholder) and look for every value.
    const text = compiled.sql.replace(/\{p\d+:[^}]+\}/g, '?');
    for (const value of Object.values(compiled.params)) if (String(value).length > 2) expect(text).not.toContain(String(value));
    expect(compiled.sql).not.toContain('DROP');
    expect(compiled.sql).not.toContain('OR 1=1');
    expect(Object.values(compiled.params)).toContain("b'); DROP TABLE lookout.event_tool_called; --");
    expect(Object.values(compiled.params)).toContain('1e+308');
  });

  test('bound as literals (the embedded engine), every caller value stays inside one quoted literal', () => {
    const printed = compileAnalyticsQuery(GOLDEN_CASES['hostile-values'], context, { timeoutSeconds: 15 });
    const server = compile(printed.statement, 'server', printed.settings);
    const literal = compile(printed.statement, 'literal', printed.settings);
    expect(literal.params).toEqual({});
    // Outside its quoted literals (escapes skipped) the text is the server text with values taken out.
    const outside = literal.sql.replace(/'(?:\\.|[^'\\])*'/g, "''");
    expect(outside).not.toContain('DROP');
    expect(outside).not.toContain('OR 1=1');
    expect(outside).not.toMatch(/\{p\d+:/);
    for (const value of Object.values(server.params)) expect(literal.sql).toContain(quoteString(String(value)));
  });
});
