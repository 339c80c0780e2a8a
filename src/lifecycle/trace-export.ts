/**
 * The export of a window's traces as OTLP/JSON lines (GET /projects/{id}/export/traces): the
 * traces whose first span starts in the window, each with all of its spans, one
 * ExportTraceServiceRequest per line (otlp-export-lines.ts).
 *
 * The window is read in slices of trace ids (trace-id-ranges.ts, cut from a count of the window's
 * spans per trace id prefix so that each holds at most SLICE_SPANS of them), one statement each, one
 * after the other on the same analytics slot. A slice's statement reads, within its range, every
 * span of the traces with a span starting in the window, ordered by trace (the table's own sort key
 * after tenant and project, so the engine reads them in order rather than sorting); of those, the
 * lines keep the traces whose first span starts in the window. A trace's spans all lie in the one
 * range of its id, so every trace of the window is written once, with all of its spans, also those
 * after the window; and since a range reads only its own granules of each part, the export reads
 * the project's spans once in all, however many slices. Each slice's answer is cut into batches of
 * whole traces of about a MiB that the compute pool turns into lines; the next batch is read only
 * once the reader took the lines of the previous one, and the next slice's statement starts only
 * once the previous one's lines were taken. Memory holds a slice's set of trace ids in the engine,
 * a batch and the trace being read, whatever the size of the window.
 */
import type { Readable } from 'node:stream';
import type { QueryWindow } from '../analytics/query/event-export.js';
import { SLICE_COUNT_SETTINGS } from '../analytics/query/export-slices.js';
import type { Config } from '../app/config.js';
import type { ClickHouseStore } from '../platform/clickhouse/clickhouse.js';
import { dateTime64 } from '../platform/clickhouse/clickhouse-time.js';
import { param, raw, sql, type Fragment } from '../platform/clickhouse/sql/fragment.js';
import { scopedTable, tenantGuard, type TenantScope } from '../platform/clickhouse/sql/tenant-guard.js';
import type { StreamPart } from '../platform/clickhouse/sql/statement-stream.js';
import type { ComputePool } from '../platform/compute/compute-pool.js';
import { ownedBytes } from '../platform/compute/owned-bytes.js';
import { EXPORT_SPAN_COLUMNS, lastTraceStart, otlpBatchTask } from './otlp-export-lines.js';
import { cutTraceIdRanges, PREFIX_CHARS, type PrefixCount, type TraceIdRange } from './trace-id-ranges.js';

/** Rows gathered before a batch goes to the compute pool; a trace larger than this is one batch of its own. */
const BATCH_BYTES = 1024 * 1024;

const NEWLINE = 0x0a;

/**
 * Nanosecond times are 19 digits: exact only as strings. Blocks of 8,192 rows (the engine's default
 * is 65,409) halve what the engine holds for a slice, and its chunks (a block each) are ~4 MiB of
 * rows instead of ~30: on the embedded engine a slice of a million spans held 260–335 MiB by the
 * engine's own count with the default, 140–155 with this (bench/export/trace-export-memory.ts --raw).
 */
const TRACE_EXPORT_SETTINGS = { output_format_json_quote_64bit_integers: 1, max_block_size: 8192 };

/**
 * The window's spans a slice holds at most (unless one prefix holds more): its statement holds the
 * set of its traces' ids. At 3M spans (bench/export) slices of a million kept the service at
 * 780–904 MiB, of 250,000 at 670–800, and ran no slower: a slice reads only its own range.
 */
export const SLICE_SPANS = 250_000;

export interface TraceExportDeps {
  ch: ClickHouseStore;
  compute: ComputePool;
  config: Pick<Config, 'exportTimeoutSeconds'>;
}

/** Every span in the range, as the engine compares trace ids (byte by byte). */
function rangeWhere(range: TraceIdRange): Fragment {
  const from = range.from === null ? raw('') : sql` AND trace_id >= ${param('String', range.from)}`;
  const to = range.to === null ? raw('') : sql` AND trace_id < ${param('String', range.to)}`;
  return sql`${from}${to}`;
}

/**
 * Every span of the range's traces with a span starting in the window (the batch keeps those whose
 * first span does), trace_id first on each line (lastTraceStart reads it there), copies of a span
 * newest first. Both reads are bounded by the range on the sort key; the inner one also by the
 * window, which the parts' time ranges (the table is partitioned by month) narrow further.
 */
export function traceExportStatement(ch: Pick<ClickHouseStore, 'table'>, scope: TenantScope, window: QueryWindow, range: TraceIdRange): Fragment {
  const spans = ch.table('spans');
  return sql`SELECT ${raw(EXPORT_SPAN_COLUMNS.join(', '))}
FROM ${scopedTable(spans)}
WHERE ${tenantGuard(scope)}${rangeWhere(range)} AND trace_id IN (
  SELECT trace_id FROM ${scopedTable(spans)}
  WHERE ${tenantGuard(scope)}${rangeWhere(range)} AND timestamp >= ${bound(window.start)} AND timestamp < ${bound(window.endExclusive)}
)
ORDER BY trace_id, span_id, ingested_at DESC`;
}

/** The spans starting in the window (a span's `timestamp` is its start) per trace id prefix, in the engine's order: what the slices are cut from. */
export function tracePrefixStatement(ch: Pick<ClickHouseStore, 'table'>, scope: TenantScope, window: QueryWindow): Fragment {
  return sql`SELECT substring(trace_id, 1, ${raw(String(PREFIX_CHARS))}) AS prefix, count() AS rows
FROM ${scopedTable(ch.table('spans'))}
WHERE ${tenantGuard(scope)} AND timestamp >= ${bound(window.start)} AND timestamp < ${bound(window.endExclusive)}
GROUP BY prefix
ORDER BY prefix`;
}

const bound = (date: Date) => param("DateTime64(3, 'UTC')", dateTime64(date));

const nanos = (date: Date) => (BigInt(date.getTime()) * 1_000_000n).toString();

/** The export's statements, one per slice of trace ids (of at most `sliceSpans` of the window's spans), and the settings they run with. */
export async function traceExportParts(
  deps: Pick<TraceExportDeps, 'ch'>,
  scope: Required<TenantScope>,
  window: QueryWindow,
  sliceSpans = SLICE_SPANS,
): Promise<{ parts: StreamPart[]; settings: Record<string, number> }> {
  const prefixes = await deps.ch.read<PrefixCount>(tracePrefixStatement(deps.ch, scope, window), { lane: 'analytics', scope, settings: SLICE_COUNT_SETTINGS });
  const ranges = cutTraceIdRanges(prefixes.map((p) => ({ prefix: p.prefix, rows: Number(p.rows) })), sliceSpans);
  return {
    parts: ranges.map((range) => ({ statement: traceExportStatement(deps.ch, scope, window, range), format: 'JSONEachRow' as const })),
    settings: TRACE_EXPORT_SETTINGS,
  };
}

/**
 * Starts the export: resolves once the first slice's first lines are ready (so a failure before
 * that is an ordinary error answer), then streams the lines as the reader takes them.
 */
export async function streamTraceExport(deps: TraceExportDeps, scope: Required<TenantScope>, window: QueryWindow, sliceSpans = SLICE_SPANS): Promise<Readable> {
  const { parts, settings } = await traceExportParts(deps, scope, window, sliceSpans);
  return deps.ch.streamParts(parts, {
    lane: 'analytics',
    scope,
    timeoutSeconds: deps.config.exportTimeoutSeconds,
    settings,
    join: (slices) => windowLines(slices, window, deps.compute),
  });
}

/** Each slice's rows as the lines of the traces that start in the window. */
async function* windowLines(slices: AsyncIterable<AsyncIterable<Uint8Array>>, window: QueryWindow, compute: ComputePool): AsyncGenerator<Uint8Array> {
  for await (const rows of slices) yield* otlpLines(rows, compute, window);
}

/**
 * The engine's chunks in pieces of at most a batch's bytes (views, not copies): a chunk is a block
 * of the engine's, up to tens of MiB of rows, and a batch of that size held its rows, their parsed
 * spans and their lines at once, in the worker and in the event loop's heap.
 */
async function* pieces(source: AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array> {
  for await (const chunk of source) {
    for (let at = 0; at < chunk.length; at += BATCH_BYTES) yield chunk.subarray(at, at + BATCH_BYTES);
  }
}

async function* otlpLines(source: AsyncIterable<Uint8Array>, compute: ComputePool, window: QueryWindow): AsyncGenerator<Buffer> {
  const range = { startNs: nanos(window.start), endNs: nanos(window.endExclusive) };
  const lines = async (bytes: Uint8Array) => {
    // Handed over without a copy: the batch is the pool's from here.
    const rows = ownedBytes(bytes);
    return Buffer.from((await compute.run(otlpBatchTask, { rows, ...range }, [rows.buffer as ArrayBuffer])).text);
  };
  let pending: Uint8Array[] = [];
  let size = 0;
  let nextCut = BATCH_BYTES;
  for await (const piece of pieces(source)) {
    pending.push(piece);
    size += piece.length;
    if (size < nextCut) continue;
    const bytes = Buffer.concat(pending, size);
    // Whole lines only, and of those the traces that cannot continue in the next chunk.
    const cut = lastTraceStart(bytes, bytes.lastIndexOf(NEWLINE) + 1);
    if (cut === 0) {
      // All one trace so far: read on, and look again only after another batch's worth.
      pending = [bytes];
      nextCut = size + BATCH_BYTES;
      continue;
    }
    const carry = Buffer.from(bytes.subarray(cut));
    pending = [carry];
    size = carry.length;
    nextCut = size + BATCH_BYTES;
    const text = await lines(bytes.subarray(0, cut));
    if (text.length > 0) yield text;
  }
  if (size > 0) {
    const text = await lines(Buffer.concat(pending, size));
    if (text.length > 0) yield text;
  }
}
