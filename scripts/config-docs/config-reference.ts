/**
 * The variable tables of docs/configuration.md, written from the configuration schema
 * (src/app/config-schema.ts): one section per group, one row per variable with its default, the
 * values it accepts and its meaning. The page's hand-written parts stay outside the markers.
 */
import type { ConfigGroup } from '../../src/app/config-schema.js';
import type { Setting } from '../../src/platform/settings/setting.js';
import { IDENTIFIER_RULE, OFF_WORDS, ON_WORDS } from '../../src/platform/settings/setting-kinds.js';

export const BEGIN_MARKER = '<!-- The variables below are written by `npm run generate:config-docs` from src/app/config-schema.ts: edit them there. -->';
export const END_MARKER = '<!-- End of the generated variables. -->';

const code = (word: string) => `\`${word}\``;
const cell = (text: string) => text.replace(/\|/g, '\\|');

function defaultCell(entry: Setting): string {
  if (entry.defaultText !== undefined) return entry.defaultText;
  if (entry.default === null) return '—';
  const shown = entry.kind.show(entry.default);
  return shown === '' ? 'empty' : code(shown);
}

function valuesCell(entry: Setting): string {
  return (entry.kind.brief ?? entry.kind.accepts).replace(/^an? /, '');
}

/** The generated part of the page, markers included. */
export function configReference(groups: readonly ConfigGroup[]): string {
  const lines = [
    BEGIN_MARKER,
    '',
    `A switch (on or off) takes ${ON_WORDS.map(code).join(', ')} or ${OFF_WORDS.map(code).join(', ')}, in any case; any other word stops the start.`,
    `A plain identifier is ${IDENTIFIER_RULE}. An empty variable counts as unset, and blanks around a value are ignored.`,
  ];
  for (const group of groups) {
    lines.push('', `## ${group.title}`, '');
    if (group.intro) lines.push(group.intro, '');
    lines.push('| Variable | Default | Values | Meaning |', '|-|-|-|-|');
    for (const [name, entry] of Object.entries(group.settings)) {
      lines.push(`| ${code(name)} | ${cell(defaultCell(entry))} | ${cell(valuesCell(entry))} | ${cell(entry.doc)} |`);
    }
  }
  lines.push('', END_MARKER);
  return lines.join('\n');
}

/** `page` with the text between (and including) the markers replaced by `generated`. */
export function withConfigReference(page: string, generated: string): string {
  const begin = page.indexOf(BEGIN_MARKER);
  const end = page.indexOf(END_MARKER);
  if (begin < 0 || end < begin) throw new Error('docs/configuration.md: the generated-variables markers are missing or out of order');
  return page.slice(0, begin) + generated + page.slice(end + END_MARKER.length);
}
