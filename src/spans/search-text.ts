/**
 * The one text normalization of search (docs/search.md): stored content and query words both pass
 * through it, so "contains" is decided on equal terms. In order:
 *
 * 1. NFKC: composed and decomposed accents, full-width Latin and half-width kana compare equal;
 * 2. every run of white space becomes one space (a phrase matches across line breaks), trimmed;
 * 3. each code point lower-cased on its own (Unicode-aware: Latin, Greek, Cyrillic, Armenian, ...;
 *    CJK, Arabic and Hebrew have no case and pass unchanged). A code point whose lower case is
 *    more than one code point (only U+0130 İ) stays as it is.
 *
 * Step 3 keeps the number and order of code points: position N of the lower-cased text is position
 * N of the display text, so ClickHouse's positionUTF8 on the one picks the snippet from the other.
 * Accents are kept (café is not cafe), as they distinguish words in many languages.
 */

/** Runs of white space (Unicode White_Space, incl. NBSP and the ideographic space). */
const WHITE_SPACE = /\s+/gu;
/** The code points whose whole-string lower case is not their own (context: final sigma; expansion: İ). */
const NOT_PER_CODE_POINT = /[\u0130\u03a3]/;

/** White space that is not one plain space: where collapsing has anything to do. */
const NOT_SINGLE_SPACE = /[^\S ]| {2}/u;

/** NFKC with white space collapsed: the display form stored and shown in snippets. */
export function displayText(text: string): string {
  const nfkc = text.normalize('NFKC');
  // Most text has single spaces only: tested first, replacing would rewrite every space (~5x the time).
  return (NOT_SINGLE_SPACE.test(nfkc) ? nfkc.replace(WHITE_SPACE, ' ') : nfkc).trim();
}

/** Lower case per code point, keeping the code point count (see above). */
export function lowerPerCodePoint(text: string): string {
  // The whole-string lower case equals the per-code-point one unless İ (expands) or Σ (final sigma) occur.
  if (!NOT_PER_CODE_POINT.test(text)) return text.toLowerCase();
  let out = '';
  for (const ch of text) {
    const lower = ch.toLowerCase();
    out += lower.length === ch.length && [...lower].length === 1 ? lower : ch;
  }
  return out;
}

/** The searchable form of a display text or of a query word. */
export function searchForm(text: string): string {
  return lowerPerCodePoint(displayText(text));
}

/** Length in code points (what "at least two characters" counts). */
export function codePointLength(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}
