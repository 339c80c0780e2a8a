import type { DecodedExport, DecodedSpan } from './otlp-types.js';
import { nsToMs } from '../platform/clickhouse/clickhouse-time.js';

/**
 * Span validation for partial success (OTLP/HTTP specification, "Partial Success"): invalid spans
 * are dropped and counted in `rejected_spans`, the rest are kept, and `error_message` says what was
 * wrong so the sender can fix its instrumentation.
 *
 * Nothing acknowledged is dropped silently: a span the stores would not keep is rejected here,
 * with the reason, instead of being answered 200 and then vanishing. That covers spans older than
 * the retention window (ClickHouse deletes rows `RETENTION_DAYS` after their `timestamp`, the span's
 * start) and spans that start implausibly far in the future (a clock or unit error in the sender).
 */

/**
 * Days ClickHouse keeps a span and its events: the `TTL toDateTime(timestamp) + INTERVAL 90 DAY` of
 * every table in clickhouse/ (a unit test reads the DDL to keep the two equal).
 */
export const RETENTION_DAYS = 90;
/** INGEST_MAX_FUTURE_SKEW_MS's default: a span may start at most a day after the server clock. */
export const DEFAULT_MAX_FUTURE_SKEW_MS = 24 * 3_600_000;

export interface ValidationOptions {
  /** The server clock, ms since the epoch (a parameter so tests can pin it). */
  nowMs?: number;
  /** INGEST_MAX_FUTURE_SKEW_MS. */
  maxFutureSkewMs?: number;
}

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
  // Up to 19 digits is always below 2^64: only a 20-digit value needs the exact comparison.
  return /^\d{1,20}$/.test(ns) && (ns.length < 20 || BigInt(ns) <= MAX_UINT64);
}

const DAY_MS = 86_400_000;
const isoSecond = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
/** A duration in words for messages: whole days or hours when it is one, else milliseconds. */
function spanOfTime(ms: number): string {
  if (ms % DAY_MS === 0) return `${ms / DAY_MS} day${ms === DAY_MS ? '' : 's'}`;
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000} hour${ms === 3_600_000 ? '' : 's'}`;
  return `${ms} ms`;
}

/** The problem with a span's start against the window the stores keep, or null inside it. */
function windowProblem(startNs: string, nowMs: number, maxFutureSkewMs: number): string | null {
  const startMs = nsToMs(startNs);
  const oldest = nowMs - RETENTION_DAYS * DAY_MS;
  const latest = nowMs + maxFutureSkewMs;
  if (startMs >= oldest && startMs <= latest) return null;
  // Any uint64 of nanoseconds is a valid Date (the largest falls in 2554). Written only for a rejection.
  const shown = new Date(startMs).toISOString();
  if (startMs < oldest) {
    return `starts at ${shown}, before the ${RETENTION_DAYS}-day retention window (spans must start after ${isoSecond(oldest)})`;
  }
  if (startMs > latest) {
    return `starts at ${shown}, more than ${spanOfTime(maxFutureSkewMs)} in the future (INGEST_MAX_FUTURE_SKEW_MS; spans must start before ${isoSecond(latest)})`;
  }
  return null;
}

/** The problem with a span, or null when it is valid. Exported for unit tests. */
export function spanProblem(span: DecodedSpan, options: ValidationOptions = {}): string | null {
  if (span.decodeProblem) return span.decodeProblem;
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
  return windowProblem(span.startNs, options.nowMs ?? Date.now(), options.maxFutureSkewMs ?? DEFAULT_MAX_FUTURE_SKEW_MS);
}

export function validateExport(decoded: DecodedExport, options: ValidationOptions = {}): ValidationResult {
  // One clock reading for the whole request, so its spans are judged against the same window.
  const pinned: ValidationOptions = { ...options, nowMs: options.nowMs ?? Date.now() };
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
        const problem = spanProblem(span, pinned);
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
