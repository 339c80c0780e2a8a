/**
 * The embedded engine's value binding: every typed literal, run through chdb, answers
 * exactly what the same value bound as a server-side `{p:Type}` parameter answers — same value,
 * same type — for hostile strings and every type Lookout binds.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openClickHouse, type ClickHouseStore } from '../../../src/platform/clickhouse/clickhouse.js';
import { compile } from '../../../src/platform/clickhouse/sql/compile.js';
import { param, raw, sql } from '../../../src/platform/clickhouse/sql/fragment.js';
import { quoteString, typedLiteral } from '../../../src/platform/clickhouse/sql/typed-literal.js';
import { tempDataDir } from '../../helpers/temp-dir.js';

let store: ClickHouseStore;
beforeAll(async () => {
  store = await openClickHouse({ url: null, user: 'default', password: '', database: 'literal_test', cluster: null, dataDir: tempDataDir() });
});
afterAll(async () => {
  await store?.close();
});

const HOSTILE = [
  '',
  "it's",
  "'; DROP TABLE x; --",
  'back\\slash',
  'trailing backslash \\',
  "\\'",
  "\\\\'' OR 1=1 --",
  'nul\u0000byte',
  'line\nbreak\r\nand\ttab',
  '\u0001\u001f\u007f controls',
  'unicode: é 中文 😀 \u2028 \u2029',
  '{p0:String}',
  '{p1:String} {p0:UInt8}',
  '$1 ? :name @x',
  '\x1b[31m',
  "' || '",
  '}{',
];

async function viaBoth(type: string, value: unknown) {
  const statement = sql`SELECT ${param(type, value)} AS v, toTypeName(${param(type, value)}) AS t`;
  const literal = compile(statement, 'literal');
  const server = compile(statement, 'server');
  expect(literal.params).toEqual({});
  const [a] = await store.read<{ v: unknown; t: string }>(raw(literal.sql), { lane: 'system' });
  const result = await store.client.query({ query: server.sql, query_params: server.params, format: 'JSONEachRow' });
  const [b] = await result.json<{ v: unknown; t: string }>();
  return { literal: a, server: b };
}

describe('typedLiteral round-trips through chdb', () => {
  for (const value of HOSTILE) {
    it(`String ${JSON.stringify(value)}`, async () => {
      const { literal, server } = await viaBoth('String', value);
      expect(literal).toEqual({ v: value, t: 'String' });
      expect(literal).toEqual(server);
    });
  }

  it('hostile strings inside arrays and Nullable', async () => {
    const { literal, server } = await viaBoth('Array(String)', HOSTILE);
    expect(literal).toEqual({ v: HOSTILE, t: 'Array(String)' });
    expect(literal).toEqual(server);
    const nullable = await viaBoth('Nullable(String)', "x'\\");
    expect(nullable.literal).toEqual({ v: "x'\\", t: 'Nullable(String)' });
    expect((await viaBoth('Nullable(String)', null)).literal).toEqual({ v: null, t: 'Nullable(String)' });
  });

  const cases: [string, unknown, unknown][] = [
    ['UInt8', 7, 7],
    ['UInt32', '10000', 10000],
    ['Int64', '-9223372036854775808', '-9223372036854775808'],
    ['UInt64', '18446744073709551615', '18446744073709551615'],
    ['UInt64', 12n, '12'],
    ['Float64', '1e+308', 1e308],
    ['Float64', -2.5, -2.5],
    ['Float64', '2500.5', 2500.5],
    ['DateTime64(3, \'UTC\')', '2026-11-15 00:00:00.123', '2026-11-15 00:00:00.123'],
    ['DateTime64(3, \'UTC\')', new Date('2026-11-15T01:02:03.004Z'), '2026-11-15 01:02:03.004'],
    ['DateTime(\'UTC\')', '2026-11-15 00:00:01', '2026-11-15 00:00:01'],
    ['Date', '2026-11-15', '2026-11-15'],
    ['UUID', '0190a8b2-7c1e-7a2b-9c3d-4e5f6a7b8c9d', '0190a8b2-7c1e-7a2b-9c3d-4e5f6a7b8c9d'],
    ['Array(UInt8)', [], []],
    ['Array(Array(UInt64))', [[1, 2], [], [3]], [[1, 2], [], [3]]],
    ['Array(Nullable(Float64))', [1, null, 2.5], [1, null, 2.5]],
    ['LowCardinality(String)', "a'b", "a'b"],
    ['Bool', true, true],
  ];
  for (const [type, value, expected] of cases) {
    it(`${type} ${String(value)}`, async () => {
      const { literal, server } = await viaBoth(type, value);
      expect(literal.t).toBe(type.replace("DateTime64(3, 'UTC')", "DateTime64(3, 'UTC')"));
      // 64-bit integers come back as text when quoted; compare as text so both forms agree.
      expect(JSON.stringify(literal.v)).toBe(JSON.stringify(server.v));
      if (!type.includes('64') || type.startsWith('Float') || type.startsWith('DateTime')) expect(literal.v).toEqual(expected);
    });
  }
});

describe('typedLiteral refuses what the type cannot hold', () => {
  it.each([
    ['UInt64', '1 OR 1=1'],
    ['UInt64', 1.5],
    ['Int32', '1e3'],
    ['Float64', 'NaN; DROP'],
    ['Float64', Number.POSITIVE_INFINITY],
    ['DateTime64(3, \'UTC\')', "2026-01-01' OR '1"],
    ['String', null],
    ['String', { toString: () => 'x' }],
    ['Array(String)', 'not an array'],
    ['Map(String, String)', {}],
  ])('%s %s', (type, value) => {
    expect(() => typedLiteral(type, value)).toThrow();
  });

  it('never leaves a raw control byte or an unescaped quote in the text', () => {
    for (const value of HOSTILE) {
      const text = quoteString(value);
      expect(text).not.toMatch(/[\u0000-\u001f\u007f]/);
      // Strip escape pairs; what is left holds no quote but the two that delimit it.
      expect(text.slice(1, -1).replace(/\\./g, '')).not.toContain("'");
    }
  });

  it('refuses a malformed type', () => {
    expect(() => param('String} OR 1', 'x')).toThrow();
    expect(() => param('Array(String)) OR (1', 'x')).toThrow();
  });
});
