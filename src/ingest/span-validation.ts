import type { DecodedExport, DecodedSpan } from './otlp-types.js';

/**
 * Span validation for partial success (OTLP/HTTP specification, "Partial Success"): invalid spans
 * are dropped and counted in `rejected_spans`, the rest are kept, and `error_message` says what was
 * wrong so the sender can fix its instrumentation.
 */

export interface ValidationResult {
  /** The request with only valid spans left in it. */
  valid: DecodedExport;
  acceptedSpans: number;
  rejectedSpans: number;
  /** '' when nothing was rejected. */
  errorMessage: string;
}

const TRACE_ID = /^[0-9a-f]{32}$/;
const SPAN_ID = /^[0-9a-f]{16}$/;
const ZERO_TRACE = '0'.repeat(32);
const ZERO_SPAN = '0'.repeat(16);
const MAX_UINT64 = 18446744073709551615n;
/** How many distinct problems the error message lists before summarising the rest. */
const MAX_LISTED = 5;

function nsValid(ns: string): boolean {
  return /^\d{1,20}$/.test(ns) && BigInt(ns) <= MAX_UINT64;
}

/** The problem with a span, or null when it is valid. Exported for unit tests. */
export function spanProblem(span: DecodedSpan): string | null {
  if (span.traceId === '') return 'missing trace_id';
  if (!TRACE_ID.test(span.traceId)) return `invalid trace_id "${span.traceId.slice(0, 40)}" (must be 16 bytes, 32 hex characters)`;
  if (span.traceId === ZERO_TRACE) return 'invalid trace_id (all zero)';
  if (span.spanId === '') return 'missing span_id';
  if (!SPAN_ID.test(span.spanId)) return `invalid span_id "${span.spanId.slice(0, 40)}" (must be 8 bytes, 16 hex characters)`;
  if (span.spanId === ZERO_SPAN) return 'invalid span_id (all zero)';
  if (span.parentSpanId !== '' && !SPAN_ID.test(span.parentSpanId)) {
    return `invalid parent_span_id "${span.parentSpanId.slice(0, 40)}" (must be empty or 16 hex characters)`;
  }
  if (!nsValid(span.startNs)) return 'invalid start_time_unix_nano (must be an unsigned 64-bit integer)';
  if (!nsValid(span.endNs)) return 'invalid end_time_unix_nano (must be an unsigned 64-bit integer)';
  if (span.startNs === '0') return 'missing start_time_unix_nano';
  if (span.endNs === '0') return 'missing end_time_unix_nano';
  if (BigInt(span.endNs) < BigInt(span.startNs)) return 'end_time_unix_nano is before start_time_unix_nano';
  return null;
}

export function validateExport(decoded: DecodedExport): ValidationResult {
  let accepted = 0;
  let rejected = 0;
  const listed: string[] = [];
  const valid: DecodedExport = { resourceSpans: [] };
  for (const rs of decoded.resourceSpans) {
    const scopes = [];
    for (const ss of rs.scopes) {
      const spans: DecodedSpan[] = [];
      for (const span of ss.spans) {
        // An all-zero parent means "no parent" for some SDKs; treat it as a root.
        if (span.parentSpanId === ZERO_SPAN) span.parentSpanId = '';
        const problem = spanProblem(span);
        if (problem === null) {
          spans.push(span);
          accepted++;
          continue;
        }
        rejected++;
        if (listed.length < MAX_LISTED) {
          const who = span.spanId && SPAN_ID.test(span.spanId) ? `span ${span.spanId}` : `span "${span.name.slice(0, 60)}"`;
          listed.push(`${who}: ${problem}`);
        }
      }
      if (spans.length > 0) scopes.push({ ...ss, spans });
    }
    if (scopes.length > 0) valid.resourceSpans.push({ resource: rs.resource, scopes });
  }
  let errorMessage = '';
  if (rejected > 0) {
    const more = rejected > listed.length ? `; and ${rejected - listed.length} more` : '';
    errorMessage = `rejected ${rejected} of ${accepted + rejected} spans: ${listed.join('; ')}${more}`;
  }
  return { valid, acceptedSpans: accepted, rejectedSpans: rejected, errorMessage };
}
