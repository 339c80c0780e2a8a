/**
 * Migrations 009 and 010 are written by the one table-rebuild recipe: each file's statements are
 * exactly what scripts/clickhouse-rebuilds/ makes of its spec (`npm run generate:rebuilds` rewrites
 * them below the hand-written header).
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REBUILD_MIGRATIONS } from '../../../scripts/clickhouse-rebuilds/rebuilds.js';
import { rebuildBodyStart, withRebuildStatements } from '../../../scripts/clickhouse-rebuilds/rebuild-file.js';
import { tableRebuildStatements } from '../../../scripts/clickhouse-rebuilds/table-rebuild.js';

const dir = path.resolve(import.meta.dirname, '..', '..', '..', 'clickhouse');

describe('table-rebuild migrations', () => {
  for (const [file, rebuild] of Object.entries(REBUILD_MIGRATIONS)) {
    it(`${file} holds the recipe's statements for its spec`, () => {
      const text = fs.readFileSync(path.join(dir, file), 'utf8');
      expect(withRebuildStatements(text, rebuild)).toBe(text);
      // A spec that differs gives different statements: the comparison above can fail.
      expect(withRebuildStatements(text, { ...rebuild, suffix: 'v999' })).not.toBe(text);
    });

    it(`${file}: per table the recipe's order — carry-over, drop, copy, swap, catch-up, drop`, () => {
      for (const table of rebuild.tables) {
        const kinds = tableRebuildStatements(rebuild, table).map((statement) => statement.split(/\s+/).slice(0, 2).join(' '));
        expect(kinds).toEqual(['CREATE TABLE', 'INSERT INTO', 'DROP TABLE', 'CREATE TABLE', 'INSERT INTO', 'EXCHANGE TABLES', 'INSERT INTO', 'DROP TABLE']);
      }
      const text = fs.readFileSync(path.join(dir, file), 'utf8');
      expect(rebuildBodyStart(text, rebuild)).toBeGreaterThan(0);
    });
  }
});
