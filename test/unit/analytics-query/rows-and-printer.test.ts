/**
 * Result shaping (large integers) and the printer's own guarantees: identifiers only from the
 * allowlist pattern, the tenant guard on every table read, every value a placeholder.
 */
import { describe, expect, test } from 'vitest';
import { integerValue, shapeRow } from '../../../src/analytics/query/rows.js';
import { Printer, quoteIdentifier } from '../../../src/analytics/query/print.js';
import { compile } from '../../../src/platform/clickhouse/sql/compile.js';
import { sql } from '../../../src/platform/clickhouse/sql/fragment.js';
import { aggregate, and, column, compare, leftJoin, ref, select, selectItem, subquery, table, value } from '../../../src/analytics/query/ast.js';
import { formatUtcSecond, parseWindowBound } from '../../../src/analytics/query/window.js';

const context = { tenantId: "t'1", projectId: 'p1', qualify: (t: string) => `\`db\`.\`${t}\`` };

describe('integers', () => {
  test('numbers up to 2^53-1, numeric strings beyond', () => {
    expect(integerValue('42')).toBe(42);
    expect(integerValue(7)).toBe(7);
    expect(integerValue(String(Number.MAX_SAFE_INTEGER))).toBe(Number.MAX_SAFE_INTEGER);
    expect(integerValue('9007199254740992')).toBe('9007199254740992');
    expect(integerValue('18446744073709551615')).toBe('18446744073709551615');
    expect(integerValue('-9007199254740993')).toBe('-9007199254740993');
    expect(integerValue(null)).toBeNull();
  });

  test('shapeRow maps internal keys to aliases and keeps string dimensions as text', () => {
    const row = shapeRow({ g0: '123', m0: '5', m1: 1.5, m2: null }, [
      { key: 'g0', alias: 'user_id', kind: 'string' },
      { key: 'm0', alias: 'n', kind: 'integer' },
      { key: 'm1', alias: 'avg', kind: 'float' },
      { key: 'm2', alias: 'p95', kind: 'float' },
    ]);
    expect(row).toEqual({ user_id: '123', n: 5, avg: 1.5, p95: null });
  });
});

describe('printer', () => {
  test('refuses identifiers outside the allowlist pattern', () => {
    for (const bad of ['a`b', 'A', 'x y', 'a;', '', '1a', 'ü']) expect(() => quoteIdentifier(bad)).toThrow();
    expect(() => Printer.query(select({ items: [selectItem(column('x`; DROP'), 'm0')], from: table('t'), where: null, groupBy: [], orderBy: [], limit: null, settings: [] }), context)).toThrow();
    expect(() => Printer.query(select({ items: [selectItem(column('x'), 'm0')], from: table('t`'), where: null, groupBy: [], orderBy: [], limit: null, settings: [] }), context)).toThrow();
  });

  test('injects the tenant and project guard on every table, also inside a join, as parameters', () => {
    const read = (name: string) => select({ items: [selectItem(column('trace_id'), 'k'), selectItem(aggregate('count', null, null), 'm0')], from: table(name), where: compare('=', column('x'), value('String', "v'")), groupBy: [ref('k')], orderBy: [], limit: null, settings: [] });
    const statement = select({
      items: [selectItem(ref('k', 'p'), 'g0')],
      from: leftJoin(subquery(read('a'), 'p'), subquery(read('b'), 'j'), ref('k', 'p'), ref('k', 'j')),
      where: null, groupBy: [], orderBy: [], limit: null, settings: [],
    });
    const printed = compile(Printer.query(statement, context).statement, 'server');
    expect(printed.sql.match(/`tenant_id` = \{p\d+:String\} AND `project_id` = \{p\d+:String\}/g)).toHaveLength(2);
    expect(printed.sql).toContain('`db`.`a` FINAL');
    expect(printed.sql).toContain('`db`.`b` FINAL');
    expect(printed.sql).not.toContain("t'1");
    expect(Object.values(printed.params).filter((v) => v === "t'1")).toHaveLength(2);
  });

  test('where() prints the guard plus the condition, carrying its own values', () => {
    const node = select({ items: [], from: table('t'), where: and([compare('>', column('n'), value('Float64', '1'))]), groupBy: [], orderBy: [], limit: null, settings: [] });
    expect(compile(Printer.where(node, context), 'server')).toEqual({ sql: '`tenant_id` = {p0:String} AND `project_id` = {p1:String} AND `n` > {p2:Float64}', params: { p0: "t'1", p1: 'p1', p2: '1' } });
  });

  test('expression() keeps the values of a group expression, and they never collide once combined', () => {
    const group = Printer.expression(compare('=', column('tool'), value('String', 'search')), context);
    const where = Printer.where(select({ items: [], from: table('t'), where: compare('=', column('n'), value('Float64', '2')), groupBy: [], orderBy: [], limit: null, settings: [] }), context);
    const combined = compile(sql`SELECT ${group} AS g FROM t WHERE ${where}`, 'server');
    expect(combined.sql).toBe('SELECT `tool` = {p0:String} AS g FROM t WHERE `tenant_id` = {p1:String} AND `project_id` = {p2:String} AND `n` = {p3:Float64}');
    expect(combined.params).toEqual({ p0: 'search', p1: "t'1", p2: 'p1', p3: '2' });
  });
});

describe('window bounds', () => {
  test('parses UTC whole seconds and echoes them in one form', () => {
    expect(formatUtcSecond(parseWindowBound('2026-11-01T10:20:30Z', 'start'))).toBe('2026-11-01T10:20:30Z');
    expect(formatUtcSecond(parseWindowBound('2026-11-01t10:20:30.000z', 'start'))).toBe('2026-11-01T10:20:30Z');
    expect(formatUtcSecond(parseWindowBound('2026-11-01T10:20:30-00:00', 'start'))).toBe('2026-11-01T10:20:30Z');
  });
});
