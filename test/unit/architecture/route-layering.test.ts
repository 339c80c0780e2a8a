import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * Every route is route → service → store. A route file validates the request and
 * shapes the answer; what spans stores — transactions, the rows a change writes, access checks by
 * id — lives in a service, so REST, MCP and background work share one path to the data.
 *
 * A route file is one named `*-routes.ts`, `*-router.ts` or `router.ts`, or any file outside
 * src/app/route.ts that registers a route with defineRoute. It must not:
 *   - import a store module (`*-store.ts`, or anything under src/platform/) for its values: type-only
 *     imports are allowed, they describe the data a service hands over and call nothing;
 *   - open a transaction (`.begin(`, `withTransaction`);
 *   - write SQL (a postgres.js tagged template such as sql`…` or tx`…`).
 * src/app/route.ts is the route helper itself: its project access check (projectForPrincipal) is the one
 * store read every route makes before its handler, by design.
 */
const srcRoot = path.resolve(import.meta.dirname, '..', '..', '..', 'src');

/** Justified exceptions: `relative path` → reason. None today. */
const EXCEPTIONS = new Map<string, string>();

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name)).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [full] : [];
  });
}

function isRouteFile(root: string, file: string, text: string): boolean {
  const relative = path.relative(root, file);
  if (relative === path.join('app', 'route.ts')) return false;
  const name = path.basename(file);
  return /(-routes|-router)\.ts$/.test(name) || name === 'router.ts' || /\bdefineRoute\s*[<(]/.test(text);
}

const STORE_MODULE = /(^|\/)[\w.-]+-store\.js$|(^|\/)platform\/(postgres|clickhouse)\//;
const TRANSACTION = /\.begin\s*\(|\bwithTransaction\b/;
const SQL_TEMPLATE = /\b(sql|tx)\s*(<[^>]*>)?\s*`/;

/** Value imports (not `import type`, not type-only specifiers) of store modules in one file. */
function storeImports(text: string): string[] {
  const source = ts.createSourceFile('route.ts', text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  for (const statement of source.statements) {
    if (!ts.isImportDeclaration(statement) && !ts.isExportDeclaration(statement)) continue;
    const specifier = statement.moduleSpecifier;
    if (!specifier || !ts.isStringLiteral(specifier) || !STORE_MODULE.test(specifier.text)) continue;
    if (ts.isImportDeclaration(statement)) {
      const clause = statement.importClause;
      if (!clause || clause.isTypeOnly) continue;
      const named = clause.namedBindings;
      const valueNames = clause.name !== undefined
        || (named !== undefined && (ts.isNamespaceImport(named) || named.elements.some((element) => !element.isTypeOnly)));
      if (!valueNames) continue;
    } else if (statement.isTypeOnly) {
      continue;
    }
    found.push(`imports ${specifier.text}`);
  }
  return found;
}

function offences(root: string): string[] {
  const found: string[] = [];
  for (const file of sourceFiles(root)) {
    const text = fs.readFileSync(file, 'utf8');
    if (!isRouteFile(root, file, text)) continue;
    const relative = path.relative(root, file).split(path.sep).join('/');
    if (EXCEPTIONS.has(relative)) continue;
    for (const offence of storeImports(text)) found.push(`${relative}: ${offence}`);
    text.split('\n').forEach((line, i) => {
      if (TRANSACTION.test(line)) found.push(`${relative}:${i + 1}: opens a transaction: ${line.trim()}`);
      if (SQL_TEMPLATE.test(line)) found.push(`${relative}:${i + 1}: writes SQL: ${line.trim()}`);
    });
  }
  return found;
}

describe('route files go through services', () => {
  it('no route file imports a store, opens a transaction or writes SQL', () => {
    expect(offences(srcRoot)).toEqual([]);
  });

  it('every listed exception is a route file that still exists, with a reason', () => {
    for (const [file, reason] of EXCEPTIONS) {
      expect(fs.existsSync(path.join(srcRoot, file)), file).toBe(true);
      expect(reason.length, file).toBeGreaterThan(20);
    }
  });

  it('finds each kind of offence in a fixture tree (what main had before the services)', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'route-layering-'));
    try {
      fs.mkdirSync(path.join(dir, 'app'), { recursive: true });
      fs.writeFileSync(path.join(dir, 'tag-routes.ts'), [
        "import { attachTag } from './tag-store.js';",
        "import type { TagRow } from './other-store.js';",
        "import { type Principal } from '../tenancy/tenancy-store.js';",
        "export const a = (deps) => deps.sql.begin(async (tx) => tx`delete from tags`);",
      ].join('\n'));
      // Registers a route, so it is a route file whatever its name; the store reached via src/platform/postgres/.
      fs.writeFileSync(path.join(dir, 'cost-module.ts'), "import { publishEvent } from '../platform/postgres/shared-events.js';\ndefineRoute(router, deps, {});\n");
      // Clean: a service call, a type import, a file that is not a route file, the route helper.
      fs.writeFileSync(path.join(dir, 'issue-routes.ts'), "import type { Issue } from './issue-store.js';\nimport { issueService } from './issue-service.js';\n");
      fs.writeFileSync(path.join(dir, 'issue-service.ts'), "import { findIssue } from './issue-store.js';\nexport const s = (sql) => sql.begin(() => 1);\n");
      fs.writeFileSync(path.join(dir, 'app', 'route.ts'), "import { findProject } from '../tenancy/project-store.js';\ndefineRoute(x);\n");
      expect(offences(dir)).toEqual([
        'cost-module.ts: imports ../platform/postgres/shared-events.js',
        'tag-routes.ts: imports ./tag-store.js',
        'tag-routes.ts:4: opens a transaction: export const a = (deps) => deps.sql.begin(async (tx) => tx`delete from tags`);',
        'tag-routes.ts:4: writes SQL: export const a = (deps) => deps.sql.begin(async (tx) => tx`delete from tags`);',
      ]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
