import { compareNs, type NormalizedSpan } from '../spans/normalized-span.js';
import { spanFromStoredRow, storedRowsFromBytes } from '../spans/stored-spans.js';
import { logRecordsBySpan, spanLogKey } from '../spans/span-log-records.js';
import { summarizeTrace, type TraceRow } from '../spans/trace-summary.js';
import { SYSTEM_ORIGIN } from '../spans/origin.js';
import { contextSpansJson, defaultSpansJson, orderSpans, type SpanViewOptions } from './trace-view.js';
import { computeTask } from '../platform/compute/compute-task.js';

/**
 * The CPU-heavy part of GET /traces/{trace_id}, run on the compute pool (src/platform/compute/): parse the
 * stored rows, pick the trace, summarize it, order its spans and serialize one page of them. The
 * route adds what needs the stores (project name, thread count, issue state) around the page.
 *
 * Pages of the default form are keyset pages over the span order (start time, depth, span id):
 * `span_cursor` names the last span of the previous page, so a span stored meanwhile never makes a
 * page repeat or skip one already ordered before it.
 */

export type TraceDetailPage = { form: 'default'; limit: number; cursor: string | null } | { form: 'context'; limit: number; offset: number };

export interface TraceDetailInput {
  /** JSONEachRow bytes of the stored spans matching the requested id (possibly of several traces). */
  rows: Uint8Array;
  view: SpanViewOptions;
  page: TraceDetailPage;
  /** JSONEachRow bytes of the log records of the same id (span-log-records.ts), joined to their spans. */
  logs?: Uint8Array;
}

export type TraceDetailResult =
  | { found: false }
  | { found: true; trace: TraceRow; spansTotal: number; spansJson: string; nextCursor: string | null; invalidCursor?: false }
  | { found: true; invalidCursor: true };

/** A span's place in the page order: start time, depth, span id (also what `span_cursor` encodes). */
export interface SpanCursorKey {
  startNs: string;
  depth: number;
  spanId: string;
}

export function encodeSpanCursor(key: SpanCursorKey): string {
  return Buffer.from(JSON.stringify([key.startNs, key.depth, key.spanId])).toString('base64url');
}

export function decodeSpanCursor(cursor: string): SpanCursorKey | null {
  try {
    const value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    if (!Array.isArray(value) || value.length !== 3) return null;
    const [startNs, depth, spanId] = value as unknown[];
    if (
      typeof startNs === 'string' && /^\d{1,20}$/.test(startNs) &&
      typeof depth === 'number' && Number.isInteger(depth) && depth >= 0 && typeof spanId === 'string' && spanId.length <= 64
    ) {
      return { startNs, depth, spanId };
    }
  } catch {
    // not a cursor
  }
  return null;
}

export const compareSpanKeys = (a: SpanCursorKey, b: SpanCursorKey) =>
  compareNs(a.startNs, b.startNs) || a.depth - b.depth || (a.spanId < b.spanId ? -1 : a.spanId > b.spanId ? 1 : 0);

/** The spans of the requested trace; an OpenTelemetry id sent to several projects resolves to the one with the newest span. */
function chooseTrace(bytes: Uint8Array, logBytes: Uint8Array | undefined): NormalizedSpan[] {
  const rows = storedRowsFromBytes(bytes);
  if (rows.length === 0) return [];
  let chosen = rows[0].trace_id;
  const newest = new Map<string, string>();
  for (const r of rows) {
    const start = String(r.start_time_ns);
    const known = newest.get(r.trace_id);
    if (known === undefined || compareNs(known, start) < 0) newest.set(r.trace_id, start);
  }
  if (newest.size > 1) {
    let best = '';
    for (const [id, start] of newest) {
      if (best === '' || compareNs(start, best) > 0) {
        best = start;
        chosen = id;
      }
    }
  }
  // A span copy left by a concurrent writer is dropped by span id.
  const seen = new Set<string>();
  const spans: NormalizedSpan[] = [];
  const logs = logRecordsBySpan(logBytes);
  for (const r of rows) {
    if (r.trace_id !== chosen || seen.has(r.span_id)) continue;
    seen.add(r.span_id);
    spans.push(spanFromStoredRow(r, logs.get(spanLogKey(r.tenant_id, r.project_id, r.trace_id, r.span_id))));
  }
  return spans;
}

/** buildTraceDetail on the compute pool. */
export const traceDetailTask = computeTask<TraceDetailInput, TraceDetailResult>('trace-detail');

export function buildTraceDetail(input: TraceDetailInput): TraceDetailResult {
  const spans = chooseTrace(input.rows, input.logs);
  if (spans.length === 0) return { found: false };
  const summary = summarizeTrace(spans, { origin: SYSTEM_ORIGIN, processedAt: '1970-01-01 00:00:00.000' });
  const ordered = orderSpans(spans, summary.tree);
  const { page } = input;
  if (page.form === 'context') {
    const slice = ordered.slice(page.offset, page.offset + page.limit);
    return { found: true, trace: summary.trace, spansTotal: ordered.length, spansJson: contextSpansJson(slice, input.view), nextCursor: null };
  }
  let from = 0;
  if (page.cursor !== null) {
    const after = decodeSpanCursor(page.cursor);
    if (!after) return { found: true, invalidCursor: true };
    // First span ordered after the cursor (binary search: the order is total).
    let lo = 0;
    let hi = ordered.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const s = ordered[mid];
      if (compareSpanKeys({ startNs: s.startNs, depth: summary.tree.depth(s), spanId: s.spanId }, after) <= 0) lo = mid + 1;
      else hi = mid;
    }
    from = lo;
  }
  const slice = ordered.slice(from, from + page.limit);
  const last = slice[slice.length - 1];
  const nextCursor =
    from + page.limit < ordered.length && last ? encodeSpanCursor({ startNs: last.startNs, depth: summary.tree.depth(last), spanId: last.spanId }) : null;
  return {
    found: true,
    trace: summary.trace,
    spansTotal: ordered.length,
    spansJson: defaultSpansJson(slice, summary.trace.trace_id, input.view),
    nextCursor,
  };
}
