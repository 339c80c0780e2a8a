/**
 * A search hit's match: the best row of a trace and its marked, HTML-escaped snippet (docs/search.md).
 */
import { describe, expect, it } from 'vitest';
import { parseSearchQuery } from '../../../src/traces/search-query.js';
import { bestMatches, snippetOf } from '../../../src/traces/search-snippet.js';
import type { MatchRow } from '../../../src/traces/search-sql.js';

const row = (over: Partial<MatchRow>): MatchRow => ({ trace_id: 't', field: 'input', term: 1, window_start: 1, window: '', text_chars: 0, ...over });

describe('snippetOf', () => {
  it('marks every searched word in the window, case-insensitively, and escapes markup', () => {
    const q = parseSearchQuery('refund "a <b>" -refunded tool:order');
    const window = 'A Refund for a <b> REFUND\nnext item';
    expect(snippetOf(row({ window, text_chars: [...window].length }), q)).toEqual({
      field: 'input',
      snippet: 'A <mark>Refund</mark> for <mark>a &lt;b&gt;</mark> <mark>REFUND</mark> … next item',
    });
  });

  it('shows where the text was cut, counting code points', () => {
    const q = parseSearchQuery('退款');
    expect(snippetOf(row({ window: '我想申请退款😀', window_start: 61, text_chars: 300 }), q).snippet).toBe('…我想申请<mark>退款</mark>😀…');
    expect(snippetOf(row({ window: '我想申请退款😀', window_start: 61, text_chars: 67 }), q).snippet).toBe('…我想申请<mark>退款</mark>😀');
  });

  it('marks a field-bound word only in its field', () => {
    const q = parseSearchQuery('tool:lookup lookup2');
    expect(snippetOf(row({ field: 'name', window: 'lookup lookup2', text_chars: 14 }), q).snippet).toBe('lookup <mark>lookup2</mark>');
  });
});

describe('bestMatches', () => {
  it('prefers the earliest query word, then the field order', () => {
    const rows = [row({ trace_id: 'a', field: 'attribute', term: 1 }), row({ trace_id: 'a', field: 'output', term: 1 }), row({ trace_id: 'a', field: 'input', term: 2 }), row({ trace_id: 'b', field: 'name', term: 2 })];
    const best = bestMatches(rows);
    expect(best.get('a')?.field).toBe('output');
    expect(best.get('b')?.field).toBe('name');
  });
});
