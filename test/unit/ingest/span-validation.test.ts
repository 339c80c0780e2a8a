import { describe, expect, it } from 'vitest';
import { spanProblem, validateExport } from '../../../src/ingest/span-validation.js';
import type { DecodedExport, DecodedSpan } from '../../../src/ingest/otlp-types.js';

function span(overrides: Partial<DecodedSpan> = {}): DecodedSpan {
  return {
    traceId: '5b8efff798038103d269b633813fc60c',
    spanId: 'eee19b7ec3c1b174',
    parentSpanId: '',
    traceState: '',
    name: 'op',
    kind: 1,
    startNs: '1700000000000000000',
    endNs: '1700000000500000000',
    attributes: {},
    events: [],
    links: [],
    statusCode: 0,
    statusMessage: '',
    ...overrides,
  };
}

describe('span validation', () => {
  it('accepts a well-formed span', () => {
    expect(spanProblem(span())).toBeNull();
    expect(spanProblem(span({ endNs: '1700000000000000000' }))).toBeNull();
  });

  it.each([
    [{ traceId: '' }, 'missing trace_id'],
    [{ traceId: 'abc' }, 'invalid trace_id "abc" (must be 16 bytes, 32 hex characters)'],
    [{ traceId: '0'.repeat(32) }, 'invalid trace_id (all zero)'],
    [{ spanId: '' }, 'missing span_id'],
    [{ spanId: 'zz19b7ec3c1b1745' }, 'invalid span_id "zz19b7ec3c1b1745" (must be 8 bytes, 16 hex characters)'],
    [{ spanId: '0'.repeat(16) }, 'invalid span_id (all zero)'],
    [{ parentSpanId: '1234' }, 'invalid parent_span_id "1234" (must be empty or 16 hex characters)'],
    [{ startNs: '0' }, 'missing start_time_unix_nano'],
    [{ endNs: '0' }, 'missing end_time_unix_nano'],
    [{ startNs: '' }, 'invalid start_time_unix_nano (must be an unsigned 64-bit integer)'],
    [{ endNs: '18446744073709551616' }, 'invalid end_time_unix_nano (must be an unsigned 64-bit integer)'],
    [{ endNs: '1699999999999999999' }, 'end_time_unix_nano is before start_time_unix_nano'],
  ])('names the problem of %o', (overrides, problem) => {
    expect(spanProblem(span(overrides as Partial<DecodedSpan>))).toBe(problem);
  });

  it('keeps valid spans, counts the rejected ones and says why', () => {
    const request: DecodedExport = {
      resourceSpans: [
        {
          resource: { 'service.name': 'a' },
          scopes: [
            {
              scopeName: 's',
              scopeVersion: '',
              spans: [
                span(),
                span({ spanId: '1111111111111111', endNs: '1' }),
                span({ spanId: '2222222222222222', parentSpanId: '0000000000000000' }),
              ],
            },
          ],
        },
        { resource: {}, scopes: [{ scopeName: '', scopeVersion: '', spans: [span({ traceId: 'nothex', name: 'bad one' })] }] },
      ],
    };
    const result = validateExport(request);
    expect(result.acceptedSpans).toBe(2);
    expect(result.rejectedSpans).toBe(2);
    expect(result.errorMessage).toBe(
      'rejected 2 of 4 spans: span 1111111111111111: end_time_unix_nano is before start_time_unix_nano; ' +
        'span eee19b7ec3c1b174: invalid trace_id "nothex" (must be 16 bytes, 32 hex characters)',
    );
    expect(result.valid.resourceSpans).toHaveLength(1);
    const kept = result.valid.resourceSpans[0].scopes[0].spans;
    expect(kept.map((s) => s.spanId)).toEqual(['eee19b7ec3c1b174', '2222222222222222']);
    // An all-zero parent is a root.
    expect(kept[1].parentSpanId).toBe('');
  });

  it('summarises beyond five problems', () => {
    const spans = Array.from({ length: 8 }, (_, i) => span({ spanId: `${i}`.padStart(16, 'a'), endNs: '5' }));
    const result = validateExport({ resourceSpans: [{ resource: {}, scopes: [{ scopeName: '', scopeVersion: '', spans }] }] });
    expect(result.rejectedSpans).toBe(8);
    expect(result.errorMessage).toMatch(/^rejected 8 of 8 spans: .*; and 3 more$/);
    expect(result.valid.resourceSpans).toHaveLength(0);
  });
});
