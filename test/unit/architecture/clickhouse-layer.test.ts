/**
 * Outside src/platform/clickhouse, no module calls the ClickHouse driver
 * (`ch.client`) or writes its own tenant condition into ClickHouse SQL; statements go through the
 * layer's read / command / insert and take the guard from src/platform/clickhouse/sql/tenant-guard.ts.
 * (PostgreSQL statements, `sql\`… tenant_id = ${tenantId}\``, are another store and stay allowed.)
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

/** The driver reached directly: `ch.client`, `store.client.query(…)`, `deps.ch.client`. */
const DRIVER = /\.client\s*\.\s*(query|insert|command|exec|ping|close)\b|\bch\.client\b/;
/**
 * A tenant condition in ClickHouse SQL: followed by a `{name:Type}` placeholder, a layer value
 * (`${param(…)}`), raw text or a quoted literal. A postgres.js value (`${tenantId}`) is not matched.
 */
const CLICKHOUSE_TENANT_CONDITION = /tenant_id`?\s*(=|IN\b)\s*(\{[A-Za-z_]|\$\{\s*(param|raw|fromText)\s*\(|')/i;

function offences(pattern: RegExp): string[] {
  const found: string[] = [];
  for (const file of sourceFiles(path.join(root, 'src'))) {
    const relative = path.relative(root, file);
    if (relative.startsWith(`src${path.sep}platform${path.sep}clickhouse${path.sep}`)) continue;
    fs.readFileSync(file, 'utf8')
      .split('\n')
      .forEach((line, i) => {
        if (pattern.test(line)) found.push(`${relative}:${i + 1}: ${line.trim()}`);
      });
  }
  return found;
}

describe('the ClickHouse SQL layer is the only way to ClickHouse', () => {
  it('recognises what it forbids (the patterns main had before the layer)', () => {
    expect(DRIVER.test('const result = await ch.client.query({')).toBe(true);
    expect(DRIVER.test('await this.options.ch.client.insert({ table })')).toBe(true);
    expect(DRIVER.test('deps.ch.client.ping()')).toBe(true);
    expect(DRIVER.test('await ch.insert(ch.table(t), rows, "ingest")')).toBe(false);
    expect(CLICKHOUSE_TENANT_CONDITION.test("WHERE tenant_id = {tenant:String} AND project_id = {project:String}")).toBe(true);
    expect(CLICKHOUSE_TENANT_CONDITION.test("`tenant_id` = {p0:String}")).toBe(true);
    expect(CLICKHOUSE_TENANT_CONDITION.test("WHERE tenant_id IN {tenants:Array(String)}")).toBe(true);
    expect(CLICKHOUSE_TENANT_CONDITION.test("sql`tenant_id = ${param('String', t)}`")).toBe(true);
    expect(CLICKHOUSE_TENANT_CONDITION.test("where tenant_id = ${tenantId} and id = ${id}")).toBe(false);
  });

  it('no module outside src/platform/clickhouse calls the ClickHouse driver', () => {
    expect(offences(DRIVER)).toEqual([]);
  });

  it('no module outside src/platform/clickhouse writes a tenant condition into ClickHouse SQL', () => {
    expect(offences(CLICKHOUSE_TENANT_CONDITION)).toEqual([]);
  });
});
