import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The module registry stays typed: every key of deps.services is declared beside
 * its service, so no file needs to cast what it reads, and AppDeps does not fall back to a record.
 */
const srcRoot = path.resolve(import.meta.dirname, '..', '..', '..', 'src');

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

describe('deps.services', () => {
  it('is read without casts', () => {
    const casts = sourceFiles(srcRoot).flatMap((file) =>
      fs
        .readFileSync(file, 'utf8')
        .split('\n')
        .flatMap((line, i) => (/services\.\w+(\s*\?\?=[^;]*\))?\s+as\s/.test(line) ? [`${path.relative(srcRoot, file)}:${i + 1}`] : [])),
    );
    expect(casts).toEqual([]);
  });

  it('is a declared registry, not a record', () => {
    const appDeps = fs.readFileSync(path.join(srcRoot, 'app', 'app-deps.ts'), 'utf8');
    expect(appDeps).toMatch(/services: ServiceRegistry;/);
    expect(appDeps).not.toMatch(/Record<string, unknown>/);
  });
});
