import { ValidationError } from '../platform/http/errors.js';
import { CONTENT_FIELDS, type ContentField } from '../spans/trace-content.js';
import { codePointLength, searchForm } from '../spans/search-text.js';

/**
 * The `q` of a trace search (docs/search.md), parsed: white-space separated terms, all of which a
 * trace must contain.
 *
 *   refund policy        both words, anywhere in the trace
 *   "refund policy"      the phrase, words in this order with one space between
 *   -shipping            traces containing the word are left out
 *   tool:lookup          the word in one field (input, output, tool, error, name, attribute)
 *   -error:"time out"    prefixes combine: not this phrase in errors
 *
 * A term is found wherever its characters appear in the field's text, also inside a longer word
 * ("refund" finds "refunds"; "退款" finds "申请退款"), after the normalization of search-text.ts. A
 * prefix that is not a field name is part of the word (`http://x` is one word).
 */

export interface SearchTerm {
  /** The normalized text searched for (searchForm), at least MIN_TERM_CHARS code points. */
  text: string;
  /** Only in this field; null: any field. */
  field: ContentField | null;
  /** Traces containing it are left out. */
  negated: boolean;
}

export interface SearchQuery {
  terms: SearchTerm[];
}

export const MAX_QUERY_CHARS = 1000;
export const MAX_TERMS = 16;
export const MIN_TERM_CHARS = 2;

const FIELD_PREFIX = new RegExp(`^(${CONTENT_FIELDS.join('|')}):`, 'i');

/** Parses `q`, or a 400 (`validation_error`) naming what is wrong. */
export function parseSearchQuery(q: string): SearchQuery {
  if (q.length > MAX_QUERY_CHARS) throw new ValidationError(`q: at most ${MAX_QUERY_CHARS} characters`);
  const terms: SearchTerm[] = [];
  let i = 0;
  const isSpace = (ch: string) => /\s/u.test(ch);
  while (i < q.length) {
    if (isSpace(q[i])) {
      i++;
      continue;
    }
    let negated = false;
    let field: ContentField | null = null;
    if (q[i] === '-' && i + 1 < q.length && !isSpace(q[i + 1])) {
      negated = true;
      i++;
    }
    const prefix = FIELD_PREFIX.exec(q.slice(i));
    if (prefix && i + prefix[0].length < q.length && !isSpace(q[i + prefix[0].length])) {
      field = prefix[1].toLowerCase() as ContentField;
      i += prefix[0].length;
    }
    let raw: string;
    if (q[i] === '"') {
      const close = q.indexOf('"', i + 1);
      if (close === -1) throw new ValidationError('q: a quoted phrase is not closed');
      raw = q.slice(i + 1, close);
      i = close + 1;
    } else {
      const start = i;
      while (i < q.length && !isSpace(q[i])) i++;
      raw = q.slice(start, i);
    }
    const text = searchForm(raw);
    if (codePointLength(text) < MIN_TERM_CHARS) {
      throw new ValidationError(`q: each word or phrase needs at least ${MIN_TERM_CHARS} characters (${JSON.stringify(raw)})`);
    }
    terms.push({ text, field, negated });
  }
  if (terms.length > MAX_TERMS) throw new ValidationError(`q: at most ${MAX_TERMS} words or phrases`);
  if (!terms.some((t) => !t.negated)) throw new ValidationError('q: needs at least one word or phrase to find (not only -exclusions)');
  return { terms };
}

/** Whether a text (its searchForm) contains a term: the definition the SQL and its tests share. */
export function containsTerm(normalizedText: string, term: SearchTerm): boolean {
  return normalizedText.includes(term.text);
}
