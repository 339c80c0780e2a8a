/**
 * The printer's nodes the preset views need (GROUPING SETS, WITH, parametric aggregates, reads
 * without FINAL, another module's columns) keep its guarantees: every table read carries the
 * guard, and a fragment of columns cannot bring a table or a guard of its own.
 */
import { describe, expect, test } from 'vitest';
import { Printer } from '../../../src/analytics/query/print.js';
import { compile } from '../../../src/platform/clickhouse/sql/compile.js';
import { fromText, raw, sql } from '../../../src/platform/clickhouse/sql/fragment.js';
import { scopedTable, tenantGuard } from '../../../src/platform/clickhouse/sql/tenant-guard.js';
import { aggregateOf, call, column, foreignColumns, literal, minus, ref, select, selectItem, table, value, type SelectNode } from '../../../src/analytics/query/ast.js';

const context = { tenantId: 't1', projectId: 'p1', qualify: (t: string) => `\`db\`.\`${t}\`` };
const base = { where: null, groupBy: [], orderBy: [], limit: null, settings: [] };
const print = (node: SelectNode) => compile(Printer.query(node, context).statement, 'server');

describe('printer nodes of the preset views', () => {
  test('GROUPING SETS, WITH and parametric aggregates print as ClickHouse writes them', () => {
    const node = select({
      ...base,
      with: [selectItem(minus(call('toRelativeDayNum', column('timestamp')), call('toRelativeDayNum', value('Date', '2026-11-01'))), 'bucket_index')],
      items: [
        selectItem(call('toDate', column('timestamp')), 'date'),
        selectItem(call('grouping', ref('date')), 'is_total'),
        selectItem(aggregateOf('countResample', [ref('bucket_index')], { levels: [0, 3, 1] }), 'calls'),
        selectItem(aggregateOf('uniqExact', [column('trace_id')], { condition: call('notEmpty', column('models')) }), 'traces'),
      ],
      from: table('event_tool_called'),
      groupingSets: [[ref('date')], []],
    });
    expect(print(node).sql).toBe(
      'WITH toRelativeDayNum(`timestamp`) - toRelativeDayNum({p0:Date}) AS `bucket_index`\n' +
        'SELECT toDate(`timestamp`) AS `date`, grouping(`date`) AS `is_total`, countResample(0, 3, 1)(`bucket_index`) AS `calls`, uniqExactIf(`trace_id`, notEmpty(`models`)) AS `traces`\n' +
        'FROM `db`.`event_tool_called` FINAL\n' +
        'WHERE `tenant_id` = {p1:String} AND `project_id` = {p2:String}\n' +
        'GROUP BY GROUPING SETS ((`date`), ())',
    );
  });

  test('a difference inside a difference keeps its parentheses', () => {
    const node = select({ ...base, items: [selectItem(minus(column('a'), minus(column('b'), literal(1))), 'd')], from: table('t') });
    expect(print(node).sql).toContain('`a` - (`b` - 1) AS `d`');
  });

  test('a read without FINAL still carries the guard', () => {
    const node = select({ ...base, items: [selectItem(literal(1), 'found')], from: table('event_trace_processed', { final: false }), limit: value('UInt32', '1') });
    const printed = print(node);
    expect(printed.sql).toBe('SELECT 1 AS `found`\nFROM `db`.`event_trace_processed`\nWHERE `tenant_id` = {p0:String} AND `project_id` = {p1:String}\nLIMIT {p2:UInt32}');
  });

  test('another module\'s columns print in place with their values, after the items', () => {
    const node = select({ ...base, items: [selectItem(aggregateOf('count', []), 'traces')], foreignColumns: [foreignColumns(fromText('sum(x) AS s, groupUniqArray({cap:UInt32})(y) AS ys', { cap: 5 }))], from: table('t') });
    const printed = print(node);
    expect(printed.sql.split('\n')[0]).toBe('SELECT count() AS `traces`, sum(x) AS s, groupUniqArray({p0:UInt32})(y) AS ys');
    expect(printed.params).toEqual({ p0: 5, p1: 't1', p2: 'p1' });
  });

  test('refuses columns that bring a table or a guard of their own', () => {
    const withTable = sql`(SELECT max(x) FROM ${scopedTable('`db`.`other`')}) AS m`;
    const withGuard = sql`countIf(${tenantGuard({ tenantId: 't2' })}) AS n`;
    for (const fragment of [withTable, withGuard]) {
      const node = select({ ...base, items: [], foreignColumns: [foreignColumns(fragment)], from: table('t') });
      expect(() => Printer.query(node, context)).toThrow(/refusing foreign columns/);
    }
    // Plain text is what the cost module hands over; it passes.
    expect(() => Printer.query(select({ ...base, items: [], foreignColumns: [foreignColumns(raw('sum(x) AS s'))], from: table('t') }), context)).not.toThrow();
  });

  test('refuses a select that groups both ways', () => {
    const node = select({ ...base, items: [selectItem(column('a'), 'a')], from: table('t'), groupBy: [ref('a')], groupingSets: [[ref('a')]] });
    expect(() => Printer.query(node, context)).toThrow(/GROUPING SETS or by columns/);
  });
});
