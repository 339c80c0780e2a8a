/**
 * The export of a window's traces as OTLP/JSON lines (GET /projects/{id}/export/traces): the
 * traces whose first span starts in the window, each with all of its spans, one
 * ExportTraceServiceRequest per line (otlp-export-lines.ts).
 *
 * The window is read in time slices of a bounded number of spans (cutSlices of export-slices.ts,
 * from a count of the spans starting per minute), one statement each, one after the other on the
 * same analytics slot. A slice's statement reads every span of the traces with a span starting in
 * the slice, ordered by trace (the table's own sort key after tenant and project, so the engine
 * reads them in order rather than sorting); of those, the lines keep the traces whose first span
 * starts in the slice. So every trace of the window is written once, by the slice its first span
 * starts in, with all of its spans, also those in later slices or after the window. Each slice's
 * answer is cut into batches of whole traces that the compute pool turns into lines; the next batch
 * is read only once the reader took the lines of the previous one, and the next slice's statement
 * starts only once the previous one's lines were taken. Memory holds a slice's set of trace ids in
 * the engine, a batch and the trace being read, whatever the size of the window.
 */
import type { Readable } from 'node:stream';
import type { QueryWindow } from '../analytics/query/event-export.js';
import { cutSlices, MINUTE_COUNT_SETTINGS, type MinuteCount } from '../analytics/query/export-slices.js';
import type { Config } from '../app/config.js';
import type { ClickHouseStore } from '../platform/clickhouse/clickhouse.js';
import { dateTime64 } from '../platform/clickhouse/clickhouse-time.js';
import { param, raw, sql, type Fragment } from '../platform/clickhouse/sql/fragment.js';
import { scopedTable, tenantGuard, type TenantScope } from '../platform/clickhouse/sql/tenant-guard.js';
import type { StreamPart } from '../platform/clickhouse/sql/statement-stream.js';
import type { ComputePool } from '../platform/compute/compute-pool.js';
import { ownedBytes } from '../platform/compute/owned-bytes.js';
import { EXPORT_SPAN_COLUMNS, lastTraceStart, otlpBatchTask } from './otlp-export-lines.js';

/** Rows gathered before a batch goes to the compute pool; a trace larger than this is one batch of its own. */
const BATCH_BYTES = 1024 * 1024;

const NEWLINE = 0x0a;

export interface TraceExportDeps {
  ch: ClickHouseStore;
  compute: ComputePool;
  config: Pick<Config, 'exportTimeoutSeconds'>;
}

/**
 * Every span of the traces with a span starting in the window (the batch keeps those whose first
 * span does), trace_id first on each line (lastTraceStart reads it there), copies of a span newest first.
 */
export function traceExportStatement(ch: Pick<ClickHouseStore, 'table'>, scope: TenantScope, window: QueryWindow): Fragment {
  const spans = ch.table('spans');
  return sql`SELECT ${raw(EXPORT_SPAN_COLUMNS.join(', '))}
FROM ${scopedTable(spans)}
WHERE ${tenantGuard(scope)} AND trace_id IN (
  SELECT trace_id FROM ${scopedTable(spans)}
  WHERE ${tenantGuard(scope)} AND timestamp >= ${bound(window.start)} AND timestamp < ${bound(window.endExclusive)}
)
ORDER BY trace_id, span_id, ingested_at DESC`;
}

/** The spans starting per minute of the window (a span's `timestamp` is its start), oldest first: what the slices are cut from. */
export function spanMinutesStatement(ch: Pick<ClickHouseStore, 'table'>, scope: TenantScope, window: QueryWindow): Fragment {
  return sql`SELECT formatDateTime(toStartOfMinute(timestamp), '%Y-%m-%dT%H:%i:%SZ', 'UTC') AS minute, count() AS rows
FROM ${scopedTable(ch.table('spans'))}
WHERE ${tenantGuard(scope)} AND timestamp >= ${bound(window.start)} AND timestamp < ${bound(window.endExclusive)}
GROUP BY minute
ORDER BY minute`;
}

const bound = (date: Date) => param("DateTime64(3, 'UTC')", dateTime64(date));

const nanos = (date: Date) => (BigInt(date.getTime()) * 1_000_000n).toString();

/** The export's statements, one per slice of the window, and the settings they run with. */
export async function traceExportParts(deps: Pick<TraceExportDeps, 'ch'>, scope: Required<TenantScope>, window: QueryWindow): Promise<{ parts: StreamPart[]; slices: QueryWindow[]; settings: Record<string, number> }> {
  const minutes = await deps.ch.read<MinuteCount>(spanMinutesStatement(deps.ch, scope, window), { lane: 'analytics', scope, settings: MINUTE_COUNT_SETTINGS });
  const slices = cutSlices(window, minutes.map((m) => ({ minute: m.minute, rows: Number(m.rows) })));
  return {
    parts: slices.map((slice) => ({ statement: traceExportStatement(deps.ch, scope, slice), format: 'JSONEachRow' as const })),
    slices,
    // Nanosecond times are 19 digits: exact only as strings.
    settings: { output_format_json_quote_64bit_integers: 1 },
  };
}

/**
 * Starts the export: resolves once the first slice's first lines are ready (so a failure before
 * that is an ordinary error answer), then streams the lines as the reader takes them.
 */
export async function streamTraceExport(deps: TraceExportDeps, scope: Required<TenantScope>, window: QueryWindow): Promise<Readable> {
  const { parts, slices, settings } = await traceExportParts(deps, scope, window);
  return deps.ch.streamParts(parts, {
    lane: 'analytics',
    scope,
    timeoutSeconds: deps.config.exportTimeoutSeconds,
    settings,
    join: (chunks) => sliceLines(chunks, slices, deps.compute),
  });
}

/** Each slice's rows as the lines of the traces that start in it. */
async function* sliceLines(parts: AsyncIterable<AsyncIterable<Uint8Array>>, slices: readonly QueryWindow[], compute: ComputePool): AsyncGenerator<Uint8Array> {
  let index = 0;
  for await (const rows of parts) yield* otlpLines(rows, compute, slices[index++]);
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
  for await (const chunk of source) {
    pending.push(chunk);
    size += chunk.length;
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
