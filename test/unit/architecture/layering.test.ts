/**
 * The layout is the architecture, kept by this test:
 *   - src/platform/ (http, compute, postgres, clickhouse, small shared pieces) imports nothing of Lookout's
 *     own outside itself: it is the ground every feature stands on.
 *   - src/spans/ (the span and trace model) stands on the platform only.
 *   - Features import the platform, the span model, tenancy (who is asking, which projects exist) and
 *     the composition root's contract (the deps type, the module and route helpers, the configuration);
 *     another feature only through the files that feature declares as its ports below, and only where
 *     the importing feature declares the dependency.
 *   - src/app/ (the composition root), src/cli/ and src/main.ts may import anything: they wire it.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const srcRoot = path.resolve(import.meta.dirname, '..', '..', '..', 'src');

/** Every module any feature may import. */
const FOUNDATION = ['platform', 'spans', 'tenancy'];

/** The files of src/app/ a feature may import: the contract a module is written against. */
const APP_CONTRACT = ['app/app-deps.ts', 'app/module.ts', 'app/route.ts', 'app/config.ts', 'app/secret-box-access.ts', 'app/project-root.ts'];

/** What each module is, and the other features it depends on (besides the foundation). */
const DEPENDENCIES: Record<string, string[]> = {
  platform: [],
  spans: [],
  tenancy: [],
  ingest: [],
  traces: ['ingest', 'lifecycle'],
  analytics: ['cost', 'workspace/artifacts', 'ingest'],
  cost: ['cli'],
  mcp: ['analytics', 'ingest', 'traces', 'workspace/projects'],
  dashboard: [],
  'workspace/artifacts': [],
  'workspace/code-host': [],
  'workspace/issues': ['ingest', 'analytics', 'workspace/tickets', 'workspace/webhooks'],
  'workspace/metrics': [],
  'workspace/monitors': ['ingest', 'workspace/issues'],
  'workspace/projects': ['lifecycle'],
  lifecycle: ['analytics', 'ingest'],
  'workspace/tickets': ['workspace/issues'],
  'workspace/webhooks': [],
};

/** The files through which a feature may be used by another, with what each offers. */
const PORTS: Record<string, Record<string, string>> = {
  ingest: {
    'ingest/trace-hooks.ts': 'what a settled trace tells its listeners (issues, monitors, trace reads)',
    'ingest/trace-hook-registry.ts': 'where a module registers a settled-trace listener',
    'ingest/freshness.ts': 'how fresh answers that read processed traces are (trace list, views)',
    'ingest/freshness-shapes.ts': 'the freshness fields those answers carry (schema and type)',
    'ingest/trace-hook-shapes.ts': 'what the issues module answers through the hooks (schemas and types)',
    'ingest/settle/logged-projects.ts': "a project's mark of having received log records (a project's deletion removes it)",
  },
  cost: {
    'cost/cost-engine.ts': 'cost figures inside preset views',
    'cost/cost-object.ts': 'the cost block of an analytics answer',
    'cost/cost-shapes.ts': 'the cost object\'s schema and type, which view answers embed',
    'cost/cost-sql.ts': 'the SQL fragments that price rows at query time',
    'cost/cost-summary.ts': 'the cost summary of a view',
    'cost/price-catalog.ts': 'the price catalog a view reads its snapshot time from',
    'cost/query-cost.ts': 'cost measures of the query DSL',
    'cost/stored-cost.ts': 'stored-cost sums of views',
  },
  traces: {
    'traces/trace-service.ts': 'the trace list and its search, for the MCP search_traces tool',
    'traces/trace-schemas.ts': 'the trace list\'s query schema (REST and MCP share it)',
  },
  cli: { 'cli/admin-command.ts': 'how a module contributes an admin command' },
  analytics: {
    'analytics/catalog.ts': 'the event catalog (names and fields of analytics events)',
    'analytics/query/event-export.ts': 'an event\'s rows of a window, and the window rule, for the export',
    'analytics/query/export-slices.ts': 'an export window cut into slices of bounded rows',
    'analytics/query/mcp-body.ts': 'the DSL request as MCP sends it',
    'analytics/query/query-shapes.ts': 'the DSL request and answer schemas (REST and MCP share them)',
    'analytics/query/run.ts': 'running a DSL query',
    'analytics/views/preset-views.ts': 'running a preset view',
    'analytics/views/view-params.ts': 'the views\' parameters',
    'analytics/views/view-schemas.ts': 'the views\' query parameter schema (REST and MCP share it)',
  },
  lifecycle: {
    'lifecycle/deletion-access.ts': 'starting a whole project\'s deletion with the project\'s own deletion',
    'lifecycle/deletion-schemas.ts': 'the deletion job\'s answer shape (DELETE /projects/{project_id} answers one)',
    'lifecycle/retention-access.ts': 'when a project\'s raw content expired (the trace reads leave it out)',
  },
  'workspace/artifacts': { 'workspace/artifacts/artifact-store.ts': 'agent understanding versions for the ROI view' },
  'workspace/projects': { 'workspace/projects/project-service.ts': 'project reads for MCP' },
  'workspace/tickets': {
    'workspace/tickets/ticket-routes.ts': 'issue ticket routes, mounted by the issues module',
    'workspace/tickets/tracker-settings-routes.ts': 'tracker settings routes, mounted by the issues module',
  },
  'workspace/webhooks': { 'workspace/webhooks/webhook-access.ts': 'the webhook fan-out an issue change goes through' },
  'workspace/issues': {
    'workspace/issues/issue-access.ts': 'issue reads and the issue change fan-out',
    'workspace/issues/issue-open.ts': 'opening or updating an issue from a finding',
    'workspace/issues/issue-store.ts': 'the issue row a ticket link reads',
    'workspace/issues/issue-types.ts': 'the issue shapes',
  },
};

const WIRING = new Set(['app', 'cli', 'main.ts']);

/** The module a file under src/ belongs to: its first folder, or the second one under workspace/. */
function moduleOf(relative: string): string {
  const parts = relative.split('/');
  if (parts.length === 1) return parts[0];
  return parts[0] === 'workspace' && parts.length > 2 ? `${parts[0]}/${parts[1]}` : parts[0];
}

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [full] : [];
  });
}

/** Relative imports (type-only ones too: they couple the layers as much) of one file, as paths under root. */
function imports(root: string, file: string): string[] {
  const { importedFiles } = ts.preProcessFile(fs.readFileSync(file, 'utf8'), true, false);
  return importedFiles
    .map((ref) => ref.fileName)
    .filter((name) => name.startsWith('.'))
    .map((name) => path.relative(root, path.resolve(path.dirname(file), name.replace(/\.js$/, '.ts'))).split(path.sep).join('/'));
}

function offences(root: string): string[] {
  const found: string[] = [];
  for (const file of sourceFiles(root)) {
    const from = path.relative(root, file).split(path.sep).join('/');
    const fromModule = moduleOf(from);
    if (WIRING.has(fromModule)) continue;
    for (const target of imports(root, file)) {
      const toModule = moduleOf(target);
      if (toModule === fromModule) continue;
      const allowed = (() => {
        if (fromModule === 'platform') return false;
        if (fromModule === 'spans') return toModule === 'platform';
        if (FOUNDATION.includes(toModule)) return true;
        if (toModule === 'app') return APP_CONTRACT.includes(target);
        if (!(DEPENDENCIES[fromModule] ?? []).includes(toModule)) return false;
        return target in (PORTS[toModule] ?? {});
      })();
      if (!allowed) found.push(`${from} imports ${target}`);
    }
  }
  return found.sort();
}

describe('the layers of src/', () => {
  it('every import crosses a layer only where the layering allows it', () => {
    expect(offences(srcRoot)).toEqual([]);
  });

  it('every module of src/ is declared, and every declared port exists', () => {
    const modules = new Set(sourceFiles(srcRoot).map((file) => moduleOf(path.relative(srcRoot, file).split(path.sep).join('/'))));
    for (const module of modules) expect(WIRING.has(module) || module in DEPENDENCIES, module).toBe(true);
    for (const [module, ports] of Object.entries(PORTS)) {
      expect(module in DEPENDENCIES || WIRING.has(module), module).toBe(true);
      for (const file of Object.keys(ports)) expect(fs.existsSync(path.join(srcRoot, file)), file).toBe(true);
    }
    for (const file of APP_CONTRACT) expect(fs.existsSync(path.join(srcRoot, file)), file).toBe(true);
  });

  it('finds each kind of offence in a fixture tree', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'layering-'));
    const write = (file: string, text: string) => {
      fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
      fs.writeFileSync(path.join(dir, file), text);
    };
    try {
      write('platform/http/errors.ts', "import { Principal } from '../../tenancy/tenancy-store.js';\n");
      write('spans/span-tree.ts', "import { x } from '../ingest/ingest-service.js';\n");
      write('traces/trace-store.ts', "import { y } from '../ingest/settle/trace-settler.js';\nimport { z } from '../ingest/trace-hooks.js';\n");
      write('workspace/metrics/metric-service.ts', "import { w } from '../../app/service.js';\nimport { v } from '../issues/issue-open.js';\n");
      write('app/service.ts', "import { anything } from '../ingest/settle/trace-settler.js';\n");
      expect(offences(dir)).toEqual([
        'platform/http/errors.ts imports tenancy/tenancy-store.ts',
        'spans/span-tree.ts imports ingest/ingest-service.ts',
        'traces/trace-store.ts imports ingest/settle/trace-settler.ts',
        'workspace/metrics/metric-service.ts imports app/service.ts',
        'workspace/metrics/metric-service.ts imports workspace/issues/issue-open.ts',
      ]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
