/**
 * Lookout's version, from package.json alone (the OpenAPI document and the MCP server both report
 * it). Found by walking up from this file, which sits in src/ under tsx and in dist/src/ when built.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

function readVersion(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const file = path.join(dir, 'package.json');
    if (fs.existsSync(file)) {
      const pkg = JSON.parse(fs.readFileSync(file, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'lookout' && pkg.version) return pkg.version;
    }
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error('package.json of lookout not found above src/platform/version.ts');
    dir = parent;
  }
}

export const VERSION = readVersion();
