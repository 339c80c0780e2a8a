/**
 * Golden SQL and parameters of the analytics compiler (STYLE: Kysely asserts the exact SQL *and*
 * parameters). Run with UPDATE_GOLDEN=1 to rewrite the files after an intended change, then review
 * the diff like code.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { compileAnalyticsQuery } from '../../../src/analytics/query/run.js';
import { Printer } from '../../../src/analytics/query/print.js';
import { GOLDEN_CASES, GOLDEN_PROJECT, GOLDEN_TENANT } from './cases.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const context = { tenantId: GOLDEN_TENANT, projectId: GOLDEN_PROJECT, qualify: (t: string) => `\`lookout\`.\`${t}\`` };

function render(name: string): string {
  const compiled = compileAnalyticsQuery(GOLDEN_CASES[name], context, { timeoutSeconds: 15 });
  let text = `${compiled.sql}\n\n-- params\n${JSON.stringify(compiled.params, null, 2)}\n`;
  if (compiled.query.cost) {
    // What the cost module receives: the primary read's WHERE and the group expressions.
    const where = Printer.where(compiled.compiled.primary, context);
    const groups = compiled.compiled.groups.map((g) => `${g.alias}: ${Printer.expression(g.expr, context).sql}`);
    text += `\n-- cost where\n${where.sql}\n-- cost params\n${JSON.stringify(where.params, null, 2)}\n-- cost groups\n${groups.join('\n')}\n`;
  }
  return text;
}

describe('analytics query golden SQL', () => {
  for (const name of Object.keys(GOLDEN_CASES)) {
    test(name, () => {
      const file = path.join(here, `${name}.sql`);
      const actual = render(name);
      if (process.env.UPDATE_GOLDEN === '1' || !fs.existsSync(file)) fs.writeFileSync(file, actual);
      expect(actual).toBe(fs.readFileSync(file, 'utf8'));
    });
  }

  test('no caller value ever appears in the SQL text', () => {
    const compiled = compileAnalyticsQuery(GOLDEN_CASES['hostile-values'], context, { timeoutSeconds: 15 });
    // Strip the placeholders (one hostile value is itself the text of a placeholder) and look for every value.
    const text = compiled.sql.replace(/\{p\d+:[^}]+\}/g, '?');
    for (const value of Object.values(compiled.params)) if (value.length > 2) expect(text).not.toContain(value);
    expect(compiled.sql).not.toContain('DROP');
    expect(compiled.sql).not.toContain('OR 1=1');
    expect(Object.values(compiled.params)).toContain("b'); DROP TABLE lookout.event_tool_called; --");
    expect(Object.values(compiled.params)).toContain('1e+308');
  });
});
