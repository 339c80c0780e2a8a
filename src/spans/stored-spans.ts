import { ownedBytes } from '../platform/compute/owned-bytes.js';
import { utf8Text } from '../platform/compute/heap-room.js';
import type { Logger } from 'pino';
import type { ClickHouseStore } from '../platform/clickhouse/clickhouse.js';
import { readWithMutationsOnFly } from '../platform/clickhouse/mutations-on-fly.js';
import { param, raw, sql, type Fragment } from '../platform/clickhouse/sql/fragment.js';
import type { ReadOptions } from '../platform/clickhouse/sql/statement-runner.js';
import { traceKeysGuard } from '../platform/clickhouse/sql/tenant-guard.js';
import { mapAttributes, type MappedAttributes, type SpanClass } from './attribute-mapping.js';
import { msToDateTime64, nsToDateTime64 } from '../platform/clickhouse/clickhouse-time.js';
import type { SpanRow } from './event-rows.js';
import { normalizedSpan, type NormalizedSpan, type SpanBase, type SpanKindName, type StatusCodeName } from './normalized-span.js';
import type { Attributes, DecodedEvent } from './otlp-types.js';
import { applyLogRecords, type StoredLogRow } from './span-log-records.js';

/**
 * Reading spans back from ClickHouse for settling (and the traces API): the stored row is turned
 * into a NormalizedSpan again by re-applying the attribute mapping to the stored raw attributes,
 * so a trace is always summarized with the current mapping table, whichever process ingested it.
 */

/**
 * The columns of a `spans` row that settling reads back (STORED_SPAN_COLUMNS). The JSON columns are
 * text when ClickHouse returns them, values in a line this process wrote (event-rows.ts SpanRow).
 */
export type StoredSpanRow = Pick<
  SpanRow,
  | 'tenant_id' | 'project_id' | 'trace_id' | 'otel_trace_id' | 'span_id' | 'parent_span_id' | 'name' | 'kind'
  | 'start_time_ns' | 'end_time_ns' | 'duration_ms' | 'status_code' | 'status_description' | 'service_name'
  | 'scope_name' | 'scope_version' | 'agent_name'
> & { attributes: string | Attributes; events: string | DecodedEvent[]; resource: string | Attributes } & Partial<StoredFigures>;

/**
 * What ingestion derived from a span's attributes and stored beside them: read back so a span whose
 * content expired under its project's retention (the attributes emptied by the column TTL,
 * clickhouse/015) keeps its figures wherever it is summarized again (the traces API, a late span's
 * re-settling). Absent in lines this process wrote, which still carry their attributes.
 */
type StoredFigures = Pick<SpanRow, 'span_class' | 'model' | 'provider' | 'input_tokens' | 'output_tokens' | 'cached_input_tokens' | 'tool_name' | 'thread_id'>;

export const STORED_SPAN_COLUMNS =
  'tenant_id, project_id, trace_id, otel_trace_id, span_id, parent_span_id, name, kind, start_time_ns, end_time_ns, ' +
  'duration_ms, status_code, status_description, service_name, attributes, events, resource, scope_name, scope_version, agent_name, ' +
  'span_class, model, provider, input_tokens, output_tokens, cached_input_tokens, tool_name, thread_id';

/** 64-bit integers must come back as strings (19-digit nanoseconds do not fit a double). */
export const EXACT_INTEGERS = { output_format_json_quote_64bit_integers: 1 } as const;

/** A JSON column: text when ClickHouse returned it, already the value in a line this process wrote. */
function parseObject<T>(text: string | T, fallback: T): T {
  if (typeof text !== 'string') return text ?? fallback;
  try {
    return JSON.parse(text) as T;
  } catch {
    return fallback;
  }
}

/**
 * The spans of one request share their resource, and rows come grouped by request: the last
 * resource parsed is kept and given again for the same text (nothing changes a span's resource).
 */
let lastResource: { text: string; value: Attributes } | null = null;

function resourceOf(text: string | Attributes): Attributes {
  if (typeof text !== 'string') return parseObject<Attributes>(text, {});
  if (lastResource?.text !== text) lastResource = { text, value: parseObject<Attributes>(text, {}) };
  return lastResource.value;
}

/**
 * `logs`: the span's log records (span-log-records.ts, in emission order), applied before the
 * mapping so content sent as log events counts as the same content on the span.
 */
export function spanFromStoredRow(row: StoredSpanRow, logs?: readonly StoredLogRow[]): NormalizedSpan {
  const joined = applyLogRecords(parseObject<Attributes>(row.attributes, {}), parseObject<DecodedEvent[]>(row.events, []), logs);
  const attributes = joined.attributes;
  const resource = resourceOf(row.resource);
  const base: SpanBase = {
    tenantId: row.tenant_id,
    projectId: row.project_id,
    traceId: row.trace_id,
    otelTraceId: row.otel_trace_id,
    spanId: row.span_id,
    parentSpanId: row.parent_span_id,
    name: row.name,
    kind: row.kind as SpanKindName,
    startNs: String(row.start_time_ns),
    endNs: String(row.end_time_ns),
    timestamp: nsToDateTime64(String(row.start_time_ns)),
    durationMs: Number(row.duration_ms),
    statusCode: row.status_code as StatusCodeName,
    statusDescription: row.status_description,
    serviceName: row.service_name,
    attributes,
    events: joined.events,
    resource,
    scopeName: row.scope_name,
    scopeVersion: row.scope_version,
  };
  const mapped = mapAttributes(attributes, resource);
  return normalizedSpan(base, Object.keys(attributes).length === 0 ? withStoredFigures(mapped, row) : mapped);
}

/** A span without attributes (its content expired): the figures come from the columns ingestion stored. */
function withStoredFigures(m: MappedAttributes, row: StoredSpanRow): MappedAttributes {
  if (row.span_class === undefined) return m;
  const count = (value: number | undefined) => (value === undefined ? null : Number(value));
  return {
    ...m,
    spanClass: row.span_class as SpanClass,
    model: m.model || (row.model ?? ''),
    provider: m.provider || (row.provider ?? ''),
    inputTokens: m.inputTokens ?? count(row.input_tokens),
    outputTokens: m.outputTokens ?? count(row.output_tokens),
    cachedInputTokens: m.cachedInputTokens ?? count(row.cached_input_tokens),
    agentName: m.agentName || row.agent_name,
    toolName: m.toolName || (row.tool_name ?? ''),
    threadId: m.threadId || (row.thread_id ?? ''),
  };
}

export interface TraceKey {
  tenantId: string;
  projectId: string;
  traceId: string;
}

export const traceKeyString = (k: TraceKey) => `${k.tenantId}\u0000${k.projectId}\u0000${k.traceId}`;

export interface StoredTraceSpans {
  spans: NormalizedSpan[];
  /** span id → agent_name stored at ingest (to tell which tool.called rows the whole trace changes). */
  ingestAgentNames: Map<string, string>;
}

/** Each non-empty line of UTF-8 bytes parsed as JSON and mapped, in order. */
export function parsedLines<T>(bytes: Uint8Array, map: (value: never) => T): T[] {
  const text = utf8Text(bytes);
  const rows: T[] = [];
  let start = 0;
  while (start < text.length) {
    let end = text.indexOf('\n', start);
    if (end === -1) end = text.length;
    if (end > start) rows.push(map(JSON.parse(text.slice(start, end)) as never));
    start = end + 1;
  }
  return rows;
}

/** Rows of a JSONEachRow answer (one JSON object per line), parsed where the bytes are handed (a worker). */
export function storedRowsFromBytes(bytes: Uint8Array): StoredSpanRow[] {
  return parsedLines(bytes, (row: StoredSpanRow) => row);
}

/**
 * A SELECT's JSONEachRow answer as raw bytes through the SQL layer, never decoded or parsed here:
 * the compute pool gets them without a copy (a deep trace is tens of megabytes of rows; decoding
 * them as text on the event loop alone stalled it for ~250 ms at 20,000 spans).
 */
export async function selectJsonEachRowBytes(ch: ClickHouseStore, statement: Fragment, options: ReadOptions): Promise<Uint8Array> {
  return ownedBytes(await ch.readBytes(statement, { ...options, settings: { ...options.settings, ...EXACT_INTEGERS } }));
}

/**
 * How far the clocks of the processes that ingest and of the ClickHouse engine (whose clock sets
 * `ingested_at`) may disagree for a bounded read-back to stay exact: the bound is moved back by it.
 * The embedded engine shares the process's clock; servers and app hosts keep theirs within it by NTP.
 */
export const READ_BACK_CLOCK_MARGIN_MS = 60_000;

/** A trace to read back; `storedSinceMs`: every stored span of it was written after this (epoch ms), null or absent: unknown. */
export type ReadBackKey = TraceKey & { storedSinceMs?: number | null };

/**
 * The stored spans of the given traces as JSONEachRow bytes (parsed by the compute pool), on the
 * ingest lane (settling is never behind the analytics gate). May hold other traces of the same
 * tenants/projects' id lists (traceKeysGuard over-selects); readers keep only the keys they want.
 * Spans a failed flush is deleting are left out even before the engine applies the delete (while
 * the engine can, mutations-on-fly.ts).
 *
 * The primary index finds a trace's granule in every part whose key range covers it, whether the part
 * holds the trace or not, so a read by key alone costs a granule per large part: it grows with the
 * table. Traces whose spans were all written after a known time are read in one statement bounded by
 * `ingested_at` (the earliest of them, less READ_BACK_CLOCK_MARGIN_MS): the minmax index on it
 * (clickhouse/021) drops the granules written before, so that read follows what was ingested lately.
 * The others are read by key alone, in a second statement.
 */
export async function readTraceSpansBytes(ch: ClickHouseStore, keys: readonly ReadBackKey[], logger?: Logger): Promise<Uint8Array> {
  if (keys.length === 0) return new Uint8Array(0);
  const bounded: ReadBackKey[] = [];
  const unbounded: ReadBackKey[] = [];
  let since = Infinity;
  for (const k of keys) {
    if (k.storedSinceMs == null) {
      unbounded.push(k);
    } else {
      bounded.push(k);
      since = Math.min(since, k.storedSinceMs);
    }
  }
  const read = (group: ReadBackKey[], after: Fragment) => {
    const statement = sql`SELECT ${raw(STORED_SPAN_COLUMNS)} FROM ${raw(ch.table('spans'))} WHERE ${traceKeysGuard(group)}${after}`;
    return readWithMutationsOnFly(logger, 'settle read-back', (settings) => selectJsonEachRowBytes(ch, statement, { lane: 'ingest', settings }));
  };
  const parts = await Promise.all([
    bounded.length > 0 ? read(bounded, readBackBound(since)) : null,
    unbounded.length > 0 ? read(unbounded, sql``) : null,
  ]);
  const [first, second] = parts;
  if (!first || !second) return (first ?? second)!;
  const both = new Uint8Array(first.byteLength + second.byteLength);
  both.set(first, 0);
  both.set(second, first.byteLength);
  return both;
}

/** ` AND ingested_at >= …`: spans written at or after `sinceMs`, less the clock margin. */
export function readBackBound(sinceMs: number): Fragment {
  const from = Math.max(0, Math.floor(sinceMs - READ_BACK_CLOCK_MARGIN_MS));
  return sql` AND ingested_at >= toDateTime64(${param('String', msToDateTime64(from))}, 3, 'UTC')`;
}
