import { CONTENT_FIELDS } from '../spans/trace-content.js';
import { lowerPerCodePoint } from '../spans/search-text.js';
import type { SearchQuery } from './search-query.js';
import { SNIPPET_CHARS, type MatchRow } from './search-sql.js';
import type { TraceListItem } from './trace-schemas.js';

/**
 * A search hit's `match: {field, snippet}` (docs/search.md): the field where the first word of the
 * query is found (fields in the order input, output, tool, error, name, attribute) and a short
 * window of its text around it. The snippet is plain text made safe for HTML (`&`, `<`, `>`
 * escaped) with every occurrence of a searched word wrapped in `<mark>…</mark>`; `…` marks text
 * cut at either end, and ` … ` separates two items of the field (two messages, two attributes).
 */

/** Where a listed trace matched (the list item's `match`, declared with the list's shapes). */
export type SearchMatch = NonNullable<TraceListItem['match']>;

const escapeHtml = (text: string) => text.replace(/[&<>]/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : '&gt;'));
const fieldRank = (field: string) => {
  const i = (CONTENT_FIELDS as readonly string[]).indexOf(field);
  return i === -1 ? CONTENT_FIELDS.length : i;
};

/** The best row per trace: the earliest query word, then the field order above. */
export function bestMatches(rows: readonly MatchRow[]): Map<string, MatchRow> {
  const best = new Map<string, MatchRow>();
  for (const row of rows) {
    const current = best.get(row.trace_id);
    const better = !current || Number(row.term) < Number(current.term) || (Number(row.term) === Number(current.term) && fieldRank(row.field) < fieldRank(current.field));
    if (better) best.set(row.trace_id, row);
  }
  return best;
}

/** The marked snippet of a row: every positive term (of any field, or of this one) marked in its window. */
export function snippetOf(row: MatchRow, query: SearchQuery): SearchMatch {
  const chars = [...row.window];
  const lower = chars.map((c) => lowerPerCodePoint(c));
  const marked = new Array<boolean>(chars.length).fill(false);
  for (const term of query.terms) {
    if (term.negated || (term.field !== null && term.field !== row.field)) continue;
    const needle = [...term.text];
    for (let i = 0; i + needle.length <= lower.length; i++) {
      let hit = true;
      for (let j = 0; j < needle.length && hit; j++) hit = lower[i + j] === needle[j];
      if (hit) marked.fill(true, i, i + needle.length);
    }
  }
  let out = Number(row.window_start) > 1 ? '…' : '';
  let open = false;
  for (let i = 0; i < chars.length; i++) {
    if (marked[i] !== open) {
      out += open ? '</mark>' : '<mark>';
      open = marked[i];
    }
    out += chars[i] === '\n' ? ' … ' : escapeHtml(chars[i]);
  }
  if (open) out += '</mark>';
  if (Number(row.window_start) - 1 + Math.min(chars.length, SNIPPET_CHARS) < Number(row.text_chars)) out += '…';
  return { field: row.field as SearchMatch['field'], snippet: out };
}
