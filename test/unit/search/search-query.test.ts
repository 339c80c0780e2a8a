/**
 * The search query syntax and the text normalization it shares with stored content (docs/search.md).
 */
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../../src/platform/http/errors.js';
import { displayText, lowerPerCodePoint, searchForm } from '../../../src/spans/search-text.js';
import { parseSearchQuery } from '../../../src/traces/search-query.js';
import { likeContains } from '../../../src/traces/search-sql.js';

const detail = (q: string) => {
  try {
    parseSearchQuery(q);
  } catch (error) {
    if (error instanceof ValidationError) return error.detail;
    throw error;
  }
  return null;
};

describe('parseSearchQuery', () => {
  it('reads words, phrases, exclusions and field prefixes', () => {
    expect(parseSearchQuery('Refund  "Order  42"\t-shipping tool:lookup -error:"Time\nOut" INPUT:Café').terms).toEqual([
      { text: 'refund', field: null, negated: false },
      { text: 'order 42', field: null, negated: false },
      { text: 'shipping', field: null, negated: true },
      { text: 'lookup', field: 'tool', negated: false },
      { text: 'time out', field: 'error', negated: true },
      { text: 'café', field: 'input', negated: false },
    ]);
  });

  it('keeps a prefix that is no field name, a lone dash or colon, as part of the word', () => {
    expect(parseSearchQuery('http://example.com foo-bar tool: status:ok').terms).toEqual([
      { text: 'http://example.com', field: null, negated: false },
      { text: 'foo-bar', field: null, negated: false },
      { text: 'tool:', field: null, negated: false },
      { text: 'status:ok', field: null, negated: false },
    ]);
  });

  it('takes words of two characters in any script', () => {
    expect(parseSearchQuery('返金 환불 ок وص').terms.map((t) => t.text)).toEqual(['返金', '환불', 'ок', 'وص']);
  });

  it('refuses what it cannot run, naming q', () => {
    expect(detail('a')).toMatch(/^q: each word or phrase needs at least 2 characters \("a"\)$/);
    expect(detail('ok "')).toBe('q: a quoted phrase is not closed');
    expect(detail('""')).toMatch(/^q: each word/);
    expect(detail('-refund -order')).toMatch(/^q: needs at least one word or phrase to find/);
    expect(detail('   ')).toMatch(/^q: needs at least one word/);
    expect(detail(Array.from({ length: 17 }, (_, i) => `w${i}`).join(' '))).toBe('q: at most 16 words or phrases');
    expect(detail('x'.repeat(1001))).toBe('q: at most 1000 characters');
    expect(detail('refund')).toBeNull();
  });
});

describe('search normalization', () => {
  it('folds case per code point, composes accents and compatibility forms, collapses white space', () => {
    expect(searchForm('  CAFE\u0301\u00a0\n CRÈME  ')).toBe('café crème');
    expect(searchForm('ＡＢＣ ｶﾀｶﾅ ﬁnance')).toBe('abc カタカナ finance');
    expect(searchForm('ЗАКАЗ Ёлка')).toBe('заказ ёлка');
    // Σ lower-cases to σ wherever it stands (no final-sigma context), İ stays: one code point each.
    expect(searchForm('ΟΔΟΣ')).toBe('οδοσ');
    expect(lowerPerCodePoint('İSTANBUL')).toBe('İstanbul');
    expect(displayText('a\t\tb\r\nc')).toBe('a b c');
  });

  it('keeps code point positions between the display form and the searchable form', () => {
    for (const text of ['İstanbul ΟΔΟΣ', 'Ǆemal 😀 ÉCOLE', '返金 환불 مرحبا']) {
      const shown = displayText(text);
      expect([...lowerPerCodePoint(shown)]).toHaveLength([...shown].length);
    }
  });
});

describe('likeContains', () => {
  it('escapes LIKE wildcards and the escape character', () => {
    expect(likeContains('100%_a\\b')).toBe('%100\\%\\_a\\\\b%');
  });
});
