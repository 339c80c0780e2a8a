import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { sourceFiles } from '../../helpers/source-comments.js';

/**
 * bench/ holds measurements that change as questions are settled; tests and the service must not
 * depend on them. What both need (synthetic batches, probes) lives in test/helpers or src/, and
 * bench/ imports it from there.
 */
const root = path.resolve(import.meta.dirname, '..', '..', '..');
const benchDir = path.join(root, 'bench') + path.sep;

function benchImports(file: string): string[] {
  const { importedFiles } = ts.preProcessFile(fs.readFileSync(path.join(root, file), 'utf8'), true, true);
  return importedFiles
    .map((ref) => ref.fileName)
    .filter((name) => name.startsWith('.') && path.resolve(root, path.dirname(file), name).startsWith(benchDir));
}

describe('nothing outside bench/ imports it', () => {
  const files = ['src', 'test', 'web/src', 'scripts'].flatMap((dir) => sourceFiles(root, dir));

  it('reads the sources, and sees an import into bench/ where there is one', () => {
    expect(files.length).toBeGreaterThan(100);
    expect(benchImports('bench/ingest/ingest-bench.ts').length).toBeGreaterThan(0);
  });

  it.each(['src', 'test', 'web/src', 'scripts'])('%s imports nothing from bench/', (dir) => {
    const offending = files.filter((f) => f.startsWith(dir + '/')).flatMap((f) => benchImports(f).map((name) => `${f}: ${name}`));
    expect(offending).toEqual([]);
  });
});
