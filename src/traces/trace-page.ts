import type { ClickHouseStore } from '../platform/clickhouse/clickhouse.js';
import type { ComputePool } from '../platform/compute/compute-pool.js';
import { decodeSpanCursor, type TraceDetailResult } from './trace-detail-build.js';
import { readStoredTraceState, readTracePage } from './trace-page-store.js';
import type { TraceScope } from './trace-store.js';
import { logsStoredSince, readLogsOfTraceId } from '../spans/stored-log-records.js';
import type { SpanViewOptions } from './trace-view.js';
import { tracePageTask } from './trace-page-build.js';

/**
 * A default-form trace-detail page that reads only its page: the trace-level fields
 * and stats come from the summary settling stored (`traces`, the same summarizeTrace), the spans
 * from one keyset page ordered by ClickHouse. Reading and summarizing every span of a 100,000-span
 * trace for each page took seconds.
 *
 * Used only when the stored summary still describes the trace — exactly one trace matches, its
 * summary row exists, its span count equals the spans stored now and no log record came after it —
 * and the trace is bigger than
 * SMALL_TRACE_SPANS. Otherwise (a small trace, or one not settled yet or grown since) the answer
 * is null and the caller builds the detail from every span (trace-detail-build.ts), exactly as
 * before: small traces cost little either way, and an unsettled trace has no summary to read.
 * Both paths order spans alike (start time, depth, span id), so their cursors are interchangeable.
 */

/** Spans per page of the default form: every span of a normal trace, a bounded answer for a huge one. */
export const DEFAULT_SPAN_PAGE = 2000;

/** Up to this many spans the whole trace is read and summarized (the default page holds them all). */
export const SMALL_TRACE_SPANS = DEFAULT_SPAN_PAGE;

export interface TracePageRequest {
  view: SpanViewOptions;
  limit: number;
  cursor: string | null;
}

export async function storedTraceDetailPage(
  ch: ClickHouseStore,
  compute: ComputePool,
  scope: TraceScope,
  id: string,
  request: TracePageRequest,
): Promise<TraceDetailResult | null> {
  const state = await readStoredTraceState(ch, scope, id, SMALL_TRACE_SPANS);
  if (!state || state.spans !== state.summary.span_count) return null;
  const cursor = request.cursor === null ? null : decodeSpanCursor(request.cursor);
  if (request.cursor !== null && cursor === null) return { found: true, invalidCursor: true };
  const traceId = state.summary.trace_id;
  // Log records stored since the summary was settled are not in it yet: the whole trace is built instead.
  const [read, logs, logsSince] = await Promise.all([
    readTracePage(ch, scope, traceId, { limit: request.limit, afterStartNs: cursor?.startNs ?? null, ties: state.ties }),
    readLogsOfTraceId(ch, scope, traceId),
    logsStoredSince(ch, scope, traceId, state.summary.processed_at),
  ]);
  if (logsSince > 0) return null;
  // One buffer the worker owns (transferred, not copied): the cursor's group first, then the rest.
  const rows = new Uint8Array((read.atCursor?.byteLength ?? 0) + read.after.byteLength);
  if (read.atCursor) rows.set(read.atCursor, 0);
  rows.set(read.after, read.atCursor?.byteLength ?? 0);
  const transfer = [rows.buffer, ...(read.skeleton ? [read.skeleton.buffer as ArrayBuffer] : []), logs.buffer as ArrayBuffer];
  const page = await compute.run(tracePageTask, { traceId, rows, skeleton: read.skeleton, cursor, limit: request.limit, view: request.view, logs }, transfer);
  return { found: true, trace: state.summary, spansTotal: state.spans, spansJson: page.spansJson, nextCursor: page.nextCursor };
}
