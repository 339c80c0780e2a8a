import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * No import circles in src/. A circle works only while nobody reads an import at
 * load time, and it hides which layer a file belongs to. Type-only imports count too: a type that
 * two files need belongs in a file below both.
 */
const srcRoot = path.resolve(import.meta.dirname, '..', '..', '..', 'src');

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [full] : [];
  });
}

/** Static imports and re-exports of one file that resolve to files under root. */
function localImports(root: string, file: string): string[] {
  const { importedFiles } = ts.preProcessFile(fs.readFileSync(file, 'utf8'), true, false);
  return importedFiles
    .map((ref) => ref.fileName)
    .filter((name) => name.startsWith('.'))
    .map((name) => path.resolve(path.dirname(file), name.replace(/\.js$/, '.ts')))
    .filter((target) => target.startsWith(root) && fs.existsSync(target));
}

/** The files under root that lie on a circle, one group per strongly connected component (Tarjan). */
function importCircles(root: string): string[][] {
  const graph = new Map(sourceFiles(root).map((file) => [file, localImports(root, file)]));
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  let next = 0;
  const visit = (node: string): void => {
    index.set(node, next);
    low.set(node, next);
    next += 1;
    stack.push(node);
    onStack.add(node);
    for (const target of graph.get(node) ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(node, Math.min(low.get(node)!, low.get(target)!));
      } else if (onStack.has(target)) {
        low.set(node, Math.min(low.get(node)!, index.get(target)!));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(path.relative(root, member));
    } while (member !== node);
    const selfImport = (graph.get(node) ?? []).includes(node);
    if (component.length > 1 || selfImport) circles.push(component.sort());
  };
  for (const file of graph.keys()) if (!index.has(file)) visit(file);
  return circles;
}

describe('import graph of src/', () => {
  it('has no circles', () => {
    expect(importCircles(srcRoot)).toEqual([]);
  });

  it('finds a circle when one exists', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'import-circle-'));
    try {
      // Fixture files under a temporary directory: the walk must see a two-file circle and a clean file.
      fs.writeFileSync(path.join(dir, 'a.ts'), "import { b } from './b.js';\nexport const a = () => b;\n");
      fs.writeFileSync(path.join(dir, 'b.ts'), "import type { a } from './a.js';\nexport const b = 1 as unknown as typeof a;\n");
      fs.writeFileSync(path.join(dir, 'c.ts'), "import { a } from './a.js';\nexport const c = a;\n");
      expect(importCircles(dir)).toEqual([['a.ts', 'b.ts']]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
