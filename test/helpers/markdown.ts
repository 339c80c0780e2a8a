import fs from 'node:fs';
import path from 'node:path';

/**
 * Reads the repository's own documentation the way a newcomer does: its links, its shell examples
 * and its JSON examples. Used by the docs tests (links resolve, examples run as printed).
 */
export const DOC_ROOT = path.resolve('.');

/** README.md and every page under docs/, as repository-relative paths. */
export function docFiles(): string[] {
  const pages = fs
    .readdirSync(path.join(DOC_ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => path.join('docs', name));
  return ['README.md', ...pages];
}

export function readDoc(file: string): string {
  return fs.readFileSync(path.join(DOC_ROOT, file), 'utf8');
}

export interface CodeBlock {
  lang: string;
  text: string;
  /** 1-based line of the opening fence. */
  line: number;
}

export function codeBlocks(markdown: string): CodeBlock[] {
  const blocks: CodeBlock[] = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i += 1) {
    const open = /^```(\w*)\s*$/.exec(lines[i]);
    if (!open) continue;
    const start = i;
    const body: string[] = [];
    for (i += 1; i < lines.length && !/^```\s*$/.test(lines[i]); i += 1) body.push(lines[i]);
    blocks.push({ lang: open[1], text: body.join('\n'), line: start + 1 });
  }
  return blocks;
}

/** The markdown with its fenced code blocks blanked out (links inside code are not links). */
function prose(markdown: string): string {
  return markdown.replace(/^```[\s\S]*?^```\s*$/gm, '').replace(/`[^`\n]*`/g, '');
}

/** Link targets `[text](target)` outside code. */
export function links(markdown: string): string[] {
  return [...prose(markdown).matchAll(/\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1]);
}

/** Every `curl` command of the sh/bash/shell blocks, backslash continuations joined. */
export function curlCommands(markdown: string): { command: string; line: number }[] {
  const commands: { command: string; line: number }[] = [];
  for (const block of codeBlocks(markdown)) {
    if (!['sh', 'bash', 'shell'].includes(block.lang)) continue;
    const joined = block.text.replace(/\\\n\s*/g, ' ');
    for (const line of joined.split('\n')) {
      const trimmed = line.trim();
      if (trimmed.startsWith('curl ')) commands.push({ command: trimmed, line: block.line });
    }
  }
  return commands;
}
