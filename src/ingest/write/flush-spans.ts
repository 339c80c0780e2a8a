import { keptParts, lineOf, spanKeyIn, type EncodedRows, type EncodedSpanEventRows } from './encoded-rows.js';
import { packedToolSpanId, type PackedToolRow } from './packed-tool-rows.js';
import { traceKeyString, type TraceKey } from '../../spans/stored-spans.js';

/**
 * Which spans of a flush are stored: the writer's per-span bookkeeping (ingest-writer.ts), done
 * per trace. A request's spans sit in its traces' ranges, so each trace's key is built once and
 * every span costs one lookup in its trace's set (two when the trace has stored spans), instead of
 * a trace key sliced out of every span key and four map operations on it. Exact as before: a span
 * stored or sent earlier in the flush is a duplicate, the span limit counts stored + kept spans.
 */
export interface FlushSpans {
  /** Span keys already in ClickHouse (only of traces in `storedCounts`). */
  stored: Set<string>;
  /** Per trace: its spans in ClickHouse before this flush. */
  storedCounts: Map<string, number>;
  maxSpans: number;
  /** Per trace: the span keys this flush stores so far (across its requests). */
  kept: Map<string, Set<string>>;
}

/** What the split reads and sets of a request's trace (ingest-writer.ts TraceNote; the writer imports this file). */
export interface FlushTrace extends TraceKey {
  otelTraceId: string;
  spanRange: [number, number];
  spanIds?: string[];
  spanLines?: Uint8Array[];
  toolRows: PackedToolRow[];
  generationRange?: [number, number];
  generationIds?: string[];
  generationLines?: Uint8Array[];
}

/** A request as the writer holds it (ingest-writer.ts PreparedWrite). */
export interface FlushRequest {
  rows: EncodedSpanEventRows;
  traces: FlushTrace[];
}

/** A request's outcome (ingest-writer.ts WriteResult). */
export interface SpanCounts {
  written: number;
  duplicates: number;
  rejected: number;
  rejectMessage: string;
}

export const newFlushSpans = (stored: Set<string>, storedCounts: Map<string, number>, maxSpans: number): FlushSpans => ({
  stored,
  storedCounts,
  maxSpans,
  kept: new Map(),
});

export interface RequestSpans {
  result: SpanCounts;
  /**
   * Row indices of the request's `spans` rows it does not store (duplicates, over the limit); empty
   * in the common case, when each table's body goes whole.
   */
  skipped: number[];
}

/**
 * Admits one request's spans into the flush and sets each trace's spanIds/spanLines (every span
 * but those refused by the limit and repeats within the flush; copies of stored spans included, as
 * the settle cache takes them) and its generationIds/generationLines (the rows requestParts writes:
 * of the spans this request stores, the first row of each), and drops refused spans from its tool rows.
 */
export function admitRequest(flush: FlushSpans, write: FlushRequest): RequestSpans {
  const rows = write.rows.spans;
  const { keys } = rows;
  let written = 0;
  let duplicates = 0;
  let rejected = 0;
  const skipped: number[] = [];
  const overLimit: string[] = [];
  for (const t of write.traces) {
    const traceKey = traceKeyString(t);
    const [start, end] = t.spanRange;
    let kept = flush.kept.get(traceKey);
    const before = flush.storedCounts.get(traceKey);
    // Only traces with stored rows have span keys in `stored`.
    const stored = before === undefined ? null : flush.stored;
    let count = (before ?? 0) + (kept?.size ?? 0);
    const spanIds: string[] = [];
    const spanLines: Uint8Array[] = [];
    let refused: Set<string> | null = null;
    const idAt = traceKey.length + 1;
    const [genStart, genEnd] = t.generationRange ?? [0, 0];
    // The spans this request stores of the trace, when it has generation rows to match them with.
    const stores = genEnd > genStart ? new Set<string>() : null;
    for (let i = start; i < end; i++) {
      const key = keys[i];
      if (kept && kept.has(key)) {
        // A repeat within the flush is not held for the settler either: only the first copy is
        // written, so a summary from memory must see that one, as a read-back would.
        duplicates++;
        skipped.push(i);
        continue;
      } else if (stored && stored.has(key)) {
        duplicates++;
        skipped.push(i);
      } else if (count >= flush.maxSpans) {
        rejected++;
        skipped.push(i);
        (refused ??= new Set()).add(key);
        continue;
      } else {
        if (!kept) flush.kept.set(traceKey, (kept = new Set()));
        kept.add(key);
        stores?.add(key);
        count++;
        written++;
      }
      spanIds.push(key.slice(idAt));
      spanLines.push(lineOf(rows, i));
    }
    t.spanIds = spanIds;
    t.spanLines = spanLines;
    if (stores) {
      const generations = write.rows.generations;
      const generationIds: string[] = [];
      const generationLines: Uint8Array[] = [];
      for (let j = genStart; j < genEnd; j++) {
        const key = generations.keys[j];
        if (!stores.has(key)) continue;
        // First row per span, as requestParts writes it.
        stores.delete(key);
        generationIds.push(key.slice(idAt));
        generationLines.push(lineOf(generations, j));
      }
      t.generationIds = generationIds;
      t.generationLines = generationLines;
    }
    if (refused) {
      overLimit.push(t.otelTraceId);
      const gone = refused;
      t.toolRows = t.toolRows.filter((r) => !gone.has(spanKeyIn(traceKey, packedToolSpanId(r))));
    }
  }
  let rejectMessage = '';
  if (rejected > 0) {
    rejectMessage = `rejected ${rejected} spans: trace ${overLimit.slice(0, 3).join(', ')}${overLimit.length > 3 ? ` and ${overLimit.length - 3} more` : ''} reached the limit of ${flush.maxSpans} spans per trace (TRACE_MAX_SPANS)`;
  }
  return { result: { written, duplicates, rejected, rejectMessage }, skipped };
}

/**
 * The parts of a request's four bodies that go into the inserts. With nothing skipped, each body
 * whole; else the `spans` lines not skipped, and the event rows of the spans kept (the first row
 * per span and table: a span sent twice in one request is stored once, its events with it).
 */
export function requestParts(write: FlushRequest, skipped: number[]): { spans: Uint8Array[]; generations: Uint8Array[]; tools: Uint8Array[]; errors: Uint8Array[] } {
  const whole = (rows: EncodedRows) => (rows.body.byteLength > 0 ? [rows.body] : []);
  const { spans, generations, tools, errors } = write.rows;
  if (skipped.length === 0) return { spans: whole(spans), generations: whole(generations), tools: whole(tools), errors: whole(errors) };
  const drop = new Set(skipped);
  const mine = new Set<string>();
  for (let i = 0; i < spans.keys.length; i++) if (!drop.has(i)) mine.add(spans.keys[i]);
  const events = (rows: EncodedRows) => {
    const taken = new Set<string>();
    return keptParts(rows, (i) => {
      const key = rows.keys[i];
      if (!mine.has(key) || taken.has(key)) return false;
      taken.add(key);
      return true;
    });
  };
  return { spans: keptParts(spans, (i) => !drop.has(i)), generations: events(generations), tools: events(tools), errors: events(errors) };
}
