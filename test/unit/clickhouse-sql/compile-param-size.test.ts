import { describe, expect, it } from 'vitest';
import { compile, SERVER_PARAM_MAX_BYTES, SERVER_PARAMS_MAX_BYTES } from '../../../src/platform/clickhouse/sql/compile.js';
import { join, param, sql } from '../../../src/platform/clickhouse/sql/fragment.js';
import { typedLiteral } from '../../../src/platform/clickhouse/sql/typed-literal.js';

// A server takes one request parameter up to http_max_field_value_size (128 KiB by default) and a
// URL up to http_max_uri_size (1 MiB): server binding keeps every parameter and their sum under half of that.
const ids = (n: number, tag: string) => Array.from({ length: n }, (_, i) => `${tag}${String(i).padStart(31, '0')}`);

describe('server binding of long values', () => {
  it('sends short values as parameters and inlines one longer than a parameter may be as its typed literal', () => {
    const long = ids(5000, 'a');
    const compiled = compile(sql`SELECT 1 WHERE t IN ${param('Array(String)', long)} AND p = ${param('String', "it's")}`, 'server');
    expect(compiled.params).toEqual({ p0: "it's" });
    expect(compiled.sql).toBe(`SELECT 1 WHERE t IN ${typedLiteral('Array(String)', long)} AND p = {p0:String}`);
  });

  it('keeps the sum of a statement\'s parameters under the URL budget: later values are inlined', () => {
    const perValue = Math.floor(SERVER_PARAM_MAX_BYTES / 40) - 10;
    const values = Array.from({ length: 12 }, (_, i) => param('Array(String)', ids(perValue, String.fromCharCode(98 + i))));
    const compiled = compile(sql`SELECT ${join(values)}`, 'server');
    const sent = Object.values(compiled.params).map((v) => typedLiteral('Array(String)', v).length);
    expect(sent.every((n) => n <= SERVER_PARAM_MAX_BYTES)).toBe(true);
    expect(sent.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(SERVER_PARAMS_MAX_BYTES);
    expect(sent.length).toBeGreaterThan(0);
    expect(sent.length).toBeLessThan(values.length);
  });
});
