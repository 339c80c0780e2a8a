import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DOC_ROOT, docFiles, links, readDoc } from '../../helpers/markdown.js';

/** GitHub-style heading anchors: lower case, punctuation dropped, spaces to hyphens. */
function anchors(markdown: string): Set<string> {
  const out = new Set<string>();
  for (const m of markdown.matchAll(/^#{1,6}\s+(.+)$/gm)) {
    out.add(m[1].trim().toLowerCase().replace(/`/g, '').replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-'));
  }
  return out;
}

describe('README.md and docs/ are self-contained', () => {
  const files = docFiles();

  it('finds the documentation', () => {
    expect(files).toContain('README.md');
    for (const page of ['ingestion', 'analytics', 'querying', 'workspace', 'mcp', 'configuration', 'operations']) {
      expect(files).toContain(`docs/${page}.md`);
    }
  });

  it.each(files)('%s: every relative link resolves (file and heading)', (file) => {
    const text = readDoc(file);
    const broken: string[] = [];
    for (const target of links(text)) {
      if (/^[a-z]+:/i.test(target)) continue; // http(s), mailto: not ours to check offline
      const [rel, hash] = target.split('#');
      const resolved = rel ? path.resolve(DOC_ROOT, path.dirname(file), rel) : path.resolve(DOC_ROOT, file);
      if (!resolved.startsWith(DOC_ROOT + path.sep)) {
        broken.push(`${target} (outside the repository)`);
        continue;
      }
      if (!fs.existsSync(resolved)) {
        broken.push(`${target} (no such file)`);
        continue;
      }
      if (hash && resolved.endsWith('.md') && !anchors(fs.readFileSync(resolved, 'utf8')).has(hash)) broken.push(`${target} (no such heading)`);
    }
    expect(broken).toEqual([]);
  });

  it.each(files)('%s: names no document outside the repository', (file) => {
    const text = readDoc(file);
    expect(text).not.toMatch(/SPEC\.md|DESIGN\.md|STYLE\.md|\.\.\/shared/);
    expect(text).not.toMatch(/\bSPEC\b|\bDESIGN\b/);
  });
});
