import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { RETENTION_DAYS, spanProblem, validateExport } from '../../../src/spans/span-validation.js';
import { projectRoot } from '../../../src/app/project-root.js';
import type { DecodedExport, DecodedSpan } from '../../../src/spans/otlp-types.js';

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

/** The server clock of these tests: 100 s after the spans' start (1700000000 s, 2023-11-14). */
const at = { nowMs: 1_700_000_100_000 };

describe('span validation', () => {
  it('accepts a well-formed span', () => {
    expect(spanProblem(span(), at)).toBeNull();
    expect(spanProblem(span({ endNs: '1700000000000000000' }), at)).toBeNull();
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
    expect(spanProblem(span(overrides as Partial<DecodedSpan>), at)).toBe(problem);
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
    const result = validateExport(request, at);
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
    const result = validateExport({ resourceSpans: [{ resource: {}, scopes: [{ scopeName: '', scopeVersion: '', spans }] }] }, at);
    expect(result.rejectedSpans).toBe(8);
    expect(result.errorMessage).toMatch(/^rejected 8 of 8 spans: .*; and 3 more$/);
    expect(result.valid.resourceSpans).toHaveLength(0);
  });
});

describe('the window the stores keep (nothing acknowledged is silently dropped)', () => {
  const now = Date.parse('2026-11-24T12:00:00Z');
  const ns = (iso: string) => (BigInt(Date.parse(iso)) * 1_000_000n).toString();
  const startingAt = (iso: string, spanId = 'eee19b7ec3c1b174') => span({ spanId, startNs: ns(iso), endNs: ns(iso) });

  it('rejects a span that starts before the 90-day retention window, naming the window', () => {
    expect(spanProblem(startingAt('2018-12-13T14:51:00Z'), { nowMs: now })).toBe(
      'starts at 2018-12-13T14:51:00.000Z, before the 90-day retention window (spans must start after 2026-08-26T12:00:00Z)',
    );
    expect(spanProblem(startingAt('2026-08-26T11:59:59Z'), { nowMs: now })).toMatch(/before the 90-day retention window/);
    expect(spanProblem(startingAt('2026-08-26T12:00:01Z'), { nowMs: now })).toBeNull();
  });

  it('rejects a span that starts more than INGEST_MAX_FUTURE_SKEW_MS ahead (default one day)', () => {
    expect(spanProblem(startingAt('2026-11-25T11:59:59Z'), { nowMs: now })).toBeNull();
    expect(spanProblem(startingAt('2026-11-25T12:00:01Z'), { nowMs: now })).toBe(
      'starts at 2026-11-25T12:00:01.000Z, more than 1 day in the future (INGEST_MAX_FUTURE_SKEW_MS; spans must start before 2026-11-25T12:00:00Z)',
    );
    expect(spanProblem(startingAt('2026-11-24T13:30:00Z'), { nowMs: now, maxFutureSkewMs: 3_600_000 })).toMatch(/more than 1 hour in the future/);
    // The largest uint64 nanosecond value is still a date (2554), so the message can always show one.
    expect(spanProblem(span({ startNs: '18446744073709551615', endNs: '18446744073709551615' }), { nowMs: now })).toMatch(
      /^starts at 2554-07-21T23:34:33.709Z, more than 1 day in the future/,
    );
  });

  it('judges the window on whole milliseconds of the exact nanoseconds (read from the digits, not a double)', () => {
    const edge = BigInt(now - 90 * 86_400_000) * 1_000_000n;
    // The oldest kept millisecond, up to its last nanosecond, is inside; the nanosecond before it is not.
    expect(spanProblem(span({ startNs: String(edge), endNs: String(edge + 999_999n) }), { nowMs: now })).toBeNull();
    expect(spanProblem(span({ startNs: String(edge + 999_999n), endNs: String(edge + 999_999n) }), { nowMs: now })).toBeNull();
    expect(spanProblem(span({ startNs: String(edge - 1n), endNs: String(edge) }), { nowMs: now })).toMatch(/^starts at 2026-08-26T11:59:59.999Z, before/);
    const latest = BigInt(now + 86_400_000) * 1_000_000n;
    expect(spanProblem(span({ startNs: String(latest + 999_999n), endNs: String(latest + 999_999n) }), { nowMs: now })).toBeNull();
    expect(spanProblem(span({ startNs: String(latest + 1_000_000n), endNs: String(latest + 1_000_000n) }), { nowMs: now })).toMatch(/in the future/);
    // 20 digits: only values above 2^64 - 1 are refused as times; short ones are milliseconds 0 (1970).
    expect(spanProblem(span({ startNs: '18446744073709551616', endNs: '18446744073709551616' }), { nowMs: now })).toMatch(/invalid start_time_unix_nano/);
    expect(spanProblem(span({ startNs: '5', endNs: '6' }), { nowMs: now })).toMatch(/^starts at 1970-01-01T00:00:00.000Z, before/);
  });

  it('keeps the spans inside the window and rejects the rest of the same request', () => {
    const result = validateExport(
      {
        resourceSpans: [
          {
            resource: {},
            scopes: [{ scopeName: '', scopeVersion: '', spans: [startingAt('2026-11-24T11:00:00Z'), startingAt('2018-12-13T14:51:00Z', '1111111111111111'), startingAt('2027-01-01T00:00:00Z', '2222222222222222')] }],
          },
        ],
      },
      { nowMs: now },
    );
    expect(result).toMatchObject({ acceptedSpans: 1, rejectedSpans: 2 });
    expect(result.errorMessage).toMatch(/^rejected 2 of 3 spans: span 1111111111111111: starts at 2018-12-13T14:51:00.000Z, before the 90-day retention window .*; span 2222222222222222: starts at 2027-01-01T00:00:00.000Z, more than 1 day in the future/);
    expect(result.valid.resourceSpans[0].scopes[0].spans.map((s) => s.spanId)).toEqual(['eee19b7ec3c1b174']);
  });

  it('uses the retention of the ClickHouse DDL: every TTL in clickhouse/ is RETENTION_DAYS', () => {
    const dir = path.join(projectRoot, 'clickhouse');
    const ttls = fs
      .readdirSync(dir)
      .filter((f) => f.endsWith('.sql'))
      .flatMap((f) => [...fs.readFileSync(path.join(dir, f), 'utf8').matchAll(/TTL\s+toDateTime\(timestamp\)\s*\+\s*INTERVAL\s+(\d+)\s+DAY/gi)].map((m) => Number(m[1])));
    expect(ttls.length).toBeGreaterThanOrEqual(7);
    expect(new Set(ttls)).toEqual(new Set([RETENTION_DAYS]));
  });

  it('rejects a span the decoder could not read, with the decoder\'s message', () => {
    expect(spanProblem(span({ decodeProblem: 'attributes[0] must be a KeyValue object, got null' }), at)).toBe('attributes[0] must be a KeyValue object, got null');
  });
});
