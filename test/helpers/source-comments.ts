import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

/** Source files under `dir` (repository-relative) whose comments the docs tests read. */
export function sourceFiles(root: string, dir: string): string[] {
  const out: string[] = [];
  const walk = (rel: string) => {
    for (const entry of fs.readdirSync(path.join(root, rel), { withFileTypes: true })) {
      const child = path.join(rel, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== 'node_modules' && entry.name !== 'dist') walk(child);
      } else if (/\.(ts|tsx|mts|mjs|js)$/.test(entry.name)) {
        out.push(child);
      }
    }
  };
  if (fs.existsSync(path.join(root, dir))) walk(dir);
  return out.sort();
}

export interface SourceComment {
  /** 1-based line where the comment starts. */
  line: number;
  text: string;
}

/** Every comment of a TypeScript or JavaScript source, found by the compiler's own scanner (strings and regexes are not comments). */
export function comments(fileName: string, source: string): SourceComment[] {
  const kind = fileName.endsWith('.tsx') ? ts.ScriptKind.TSX : fileName.endsWith('.ts') || fileName.endsWith('.mts') ? ts.ScriptKind.TS : ts.ScriptKind.JS;
  const file = ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, true, kind);
  const seen = new Set<number>();
  const out: (SourceComment & { pos: number })[] = [];
  const collect = (ranges: ts.CommentRange[] | undefined) => {
    for (const range of ranges ?? []) {
      if (seen.has(range.pos)) continue;
      seen.add(range.pos);
      out.push({ pos: range.pos, line: file.getLineAndCharacterOfPosition(range.pos).line + 1, text: source.slice(range.pos, range.end) });
    }
  };
  // Comments are trivia attached to the tokens around them; walking every token finds each once.
  const visit = (node: ts.Node) => {
    collect(ts.getLeadingCommentRanges(source, node.pos));
    collect(ts.getTrailingCommentRanges(source, node.end));
    node.getChildren(file).forEach(visit);
  };
  visit(file);
  collect(ts.getLeadingCommentRanges(source, file.endOfFileToken.pos));
  return out.sort((a, b) => a.pos - b.pos).map(({ line, text }) => ({ line, text }));
}
