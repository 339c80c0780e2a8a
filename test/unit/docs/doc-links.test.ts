import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DOC_ROOT, docFiles, links, readDoc } from '../../helpers/markdown.js';
import { comments, sourceFiles } from '../../helpers/source-comments.js';

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

/** A document outside the repository, or an issue number (the word issue followed by a number, or a hash and a number). */
const OUTSIDE_DOCUMENT = /SPEC\.md|DESIGN\.md|STYLE\.md|\.\.\/shared|\bSPEC\b|\bDESIGN\b/;
const ISSUE_NUMBER = /\bissues? #?\d+|(?:^|[\s(])#\d+\b/i;

describe('source comments stand alone: they say why here and now, not where it was decided', () => {
  const files = ['src', 'web/src', 'test', 'bench', 'scripts'].flatMap((dir) => sourceFiles(DOC_ROOT, dir));

  it('finds the sources and their comments', () => {
    expect(files).toContain('src/main.ts');
    expect(files).toContain('web/src/main.tsx');
    const found = comments('example.tsx', '/** a */\nconst s = "// not a comment";\nexport const x = <p>{/* b */}</p>; // c\n');
    expect(found.map((c) => c.text)).toEqual(['/** a */', '/* b */', '// c']);
  });

  it('names no outside document and no issue number', () => {
    const offending: string[] = [];
    for (const file of files) {
      for (const comment of comments(file, fs.readFileSync(path.join(DOC_ROOT, file), 'utf8'))) {
        if (OUTSIDE_DOCUMENT.test(comment.text) || ISSUE_NUMBER.test(comment.text)) offending.push(`${file}:${comment.line}: ${comment.text.split('\n')[0]}`);
      }
    }
    expect(offending).toEqual([]);
  });

  it('catches both kinds of reference', () => {
    const bad = ['// see DESIGN' + '.md', '/* per SPEC' + '.md "Events" */', '// ../' + 'shared/spec', '// issue ' + '16: why', '// fixes #' + '12'];
    for (const text of bad) expect(OUTSIDE_DOCUMENT.test(text) || ISSUE_NUMBER.test(text)).toBe(true);
    expect(ISSUE_NUMBER.test("// the issue's 3 states, colour #f80")).toBe(false);
  });
});
