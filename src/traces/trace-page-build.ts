import { compareNs, type NormalizedSpan } from '../spans/normalized-span.js';
import { buildSpanTree } from '../spans/span-tree.js';
import { spanFromStoredRow, storedRowsFromBytes } from '../spans/stored-spans.js';
import { logRecordsBySpan, spanLogKey } from '../spans/span-log-records.js';
import { compareSpanKeys, encodeSpanCursor, type SpanCursorKey } from './trace-detail-build.js';
import { defaultSpansJson, type SpanViewOptions } from './trace-view.js';
import { computeTask } from '../platform/compute/compute-task.js';

/**
 * The compute-pool half of a trace-detail page served from the stored summary (trace-page.ts):
 * parse the page's rows, order them (start time, depth, span id — the order of the whole-trace
 * path, trace-detail-build.ts), drop what the cursor already showed and serialize one page.
 * ClickHouse already ordered the rows by start time and never split a group of spans that start
 * together, so ordering within the fetched rows is ordering within the trace.
 */

export interface TracePageInput {
  traceId: string;
  /** JSONEachRow bytes: the spans at the cursor's start time, then the spans after it (trace-page-store.ts). */
  rows: Uint8Array;
  /** JSONEachRow bytes of {span_id, parent_span_id} for every span, when spans start together; else null. */
  skeleton: Uint8Array | null;
  cursor: SpanCursorKey | null;
  limit: number;
  view: SpanViewOptions;
  /** JSONEachRow bytes of the trace's log records (span-log-records.ts), joined to the page's spans. */
  logs?: Uint8Array;
}

export interface TracePageResult {
  spansJson: string;
  nextCursor: string | null;
}

/**
 * Depths by span id from the parent links alone, computed by the same buildSpanTree as the
 * whole-trace path (same roots, same cut of a malformed cycle), on spans that carry only their links.
 */
function depthsFromSkeleton(bytes: Uint8Array): Map<string, number> {
  const links = storedRowsFromBytes(bytes) as unknown as { span_id: string; parent_span_id: string }[];
  const seen = new Set<string>();
  const spans: NormalizedSpan[] = [];
  for (const link of links) {
    if (seen.has(link.span_id)) continue;
    seen.add(link.span_id);
    // Only the fields buildSpanTree reads: the links, and no usage or agent (depth ignores them).
    spans.push({ spanId: link.span_id, parentSpanId: link.parent_span_id, agentName: '', inputTokens: null, outputTokens: null, spanClass: 'span' } as unknown as NormalizedSpan);
  }
  const tree = buildSpanTree(spans);
  const depths = new Map<string, number>();
  for (const s of spans) depths.set(s.spanId, tree.depth(s));
  return depths;
}

/** buildTracePage on the compute pool. */
export const tracePageTask = computeTask<TracePageInput, TracePageResult>('trace-page');

export function buildTracePage(input: TracePageInput): TracePageResult {
  const depths = input.skeleton ? depthsFromSkeleton(input.skeleton) : null;
  const logs = logRecordsBySpan(input.logs);
  const seen = new Set<string>();
  const keyed: { span: NormalizedSpan; key: SpanCursorKey }[] = [];
  for (const row of storedRowsFromBytes(input.rows)) {
    if (row.trace_id !== input.traceId || seen.has(row.span_id)) continue;
    seen.add(row.span_id);
    const span = spanFromStoredRow(row, logs.get(spanLogKey(row.tenant_id, row.project_id, row.trace_id, row.span_id)));
    // Without a group of spans that start together no two keys share a start: depth never decides.
    const key = { startNs: span.startNs, depth: depths?.get(span.spanId) ?? 0, spanId: span.spanId };
    const cursor = input.cursor;
    if (cursor && compareNs(key.startNs, cursor.startNs) === 0 && (key.spanId === cursor.spanId || compareSpanKeys(key, cursor) <= 0)) continue;
    keyed.push({ span, key });
  }
  keyed.sort((a, b) => compareSpanKeys(a.key, b.key));
  const page = keyed.slice(0, input.limit);
  const last = page[page.length - 1];
  return {
    spansJson: defaultSpansJson(page.map((k) => k.span), input.traceId, input.view),
    nextCursor: keyed.length > input.limit && last ? encodeSpanCursor(last.key) : null,
  };
}
