/**
 * The export of a window's traces as OTLP/JSON lines (GET /projects/{id}/export/traces): the
 * traces whose first span starts in the window, each with all of its spans, one
 * ExportTraceServiceRequest per line (otlp-export-lines.ts).
 *
 * One statement reads the spans ordered by trace (the table's own sort key after tenant and
 * project, so the engine reads them in order rather than sorting the window), and the answer is
 * cut into batches of whole traces that the compute pool turns into lines. The next batch is read
 * only once the reader took the lines of the previous one, so memory holds a batch and the trace
 * being read, whatever the size of the window.
 */
import { Readable } from 'node:stream';
import type { QueryWindow } from '../analytics/query/event-export.js';
import type { Config } from '../app/config.js';
import type { ClickHouseStore } from '../platform/clickhouse/clickhouse.js';
import { dateTime64 } from '../platform/clickhouse/clickhouse-time.js';
import { param, raw, sql, type Fragment } from '../platform/clickhouse/sql/fragment.js';
import { scopedTable, tenantGuard, type TenantScope } from '../platform/clickhouse/sql/tenant-guard.js';
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
  const bound = (date: Date) => param("DateTime64(3, 'UTC')", dateTime64(date));
  return sql`SELECT ${raw(EXPORT_SPAN_COLUMNS.join(', '))}
FROM ${scopedTable(spans)}
WHERE ${tenantGuard(scope)} AND trace_id IN (
  SELECT trace_id FROM ${scopedTable(spans)}
  WHERE ${tenantGuard(scope)} AND timestamp >= ${bound(window.start)} AND timestamp < ${bound(window.endExclusive)}
)
ORDER BY trace_id, span_id, ingested_at DESC`;
}

const nanos = (date: Date) => (BigInt(date.getTime()) * 1_000_000n).toString();

/**
 * Starts the export: resolves once the engine answered its first rows (so a failure before that is
 * an ordinary error answer), then streams the lines as the reader takes them.
 */
export async function streamTraceExport(deps: TraceExportDeps, scope: Required<TenantScope>, window: QueryWindow): Promise<Readable> {
  const source = await deps.ch.stream(traceExportStatement(deps.ch, scope, window), 'JSONEachRow', {
    lane: 'analytics',
    scope,
    timeoutSeconds: deps.config.exportTimeoutSeconds,
    // Nanosecond times are 19 digits: exact only as strings.
    settings: { output_format_json_quote_64bit_integers: 1 },
  });
  const lines = Readable.from(otlpLines(source, deps.compute, window), { objectMode: false });
  // Destroyed before it was first read, the generator never ran its finally: the statement ends here too.
  lines.once('close', () => source.destroy());
  return lines;
}

async function* otlpLines(source: Readable, compute: ComputePool, window: QueryWindow): AsyncGenerator<Buffer> {
  const range = { startNs: nanos(window.start), endNs: nanos(window.endExclusive) };
  const lines = async (bytes: Uint8Array) => {
    // Handed over without a copy: the batch is the pool's from here.
    const rows = ownedBytes(bytes);
    return Buffer.from((await compute.run(otlpBatchTask, { rows, ...range }, [rows.buffer as ArrayBuffer])).text);
  };
  let pending: Buffer[] = [];
  let size = 0;
  let nextCut = BATCH_BYTES;
  try {
    for await (const chunk of source as AsyncIterable<Buffer>) {
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
  } finally {
    source.destroy();
  }
}
