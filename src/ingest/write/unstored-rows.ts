import type { ClickHouseStore } from '../../platform/clickhouse/clickhouse.js';
import { lightweightDelete } from '../../platform/clickhouse/lightweight-delete.js';
import { param, raw, sql, type Fragment } from '../../platform/clickhouse/sql/fragment.js';
import { storedIdText } from '../../platform/clickhouse/sql/event-ids.js';
import type { TraceKeyLike } from '../../platform/clickhouse/sql/tenant-guard.js';
import type { InsertTable } from './encoded-rows.js';

/**
 * Removes the rows of a flush that failed: a flush writes the event tables first and `spans` last,
 * and when any insert fails its requests are answered 503 — so the rows that did land (event rows
 * of spans that never made it into `spans`, or part of a `spans` insert spread over several day
 * partitions) would otherwise be counted by analytics although nothing acknowledged them. The
 * writer runs this before it answers the failed requests and before its next flush, so no retry
 * of those spans can be written in between and then removed.
 *
 * Only spans that were new in the flush are named (spans already stored are never in its inserts),
 * by their full key (tenant, project, trace and span in one text, so no other tenant's or trace's
 * row can match), with a lightweight DELETE (src/platform/clickhouse/lightweight-delete.ts: once
 * its mutation applies, the rows are gone from every read; on a cluster it goes to each node's
 * local table).
 *
 * The deletes are scheduled without waiting inside the statement (lightweight_deletes_sync = 0),
 * then the mutations are awaited for at most DELETE_WAIT_MS: the embedded engine can hold a
 * mutation behind its background merges for long stretches, and a statement that waited for it
 * stalled the writer — every later request answered 503 — until it applied. Normally the
 * mutations apply within that bound and the rows are gone before anyone is answered; when they do
 * not, the answer goes out and the rows disappear as soon as the engine applies them.
 *
 * A re-send is safe either way: a delete applies only to rows inserted before it was submitted, and
 * the writer's duplicate check reads with the pending deletes applied (apply_mutations_on_fly), so
 * the re-sent spans are written again and survive the delete of their first copy.
 */

/** How long the writer waits for the deletes to apply before it answers anyway. */
export const DELETE_WAIT_MS = 5_000;

/** The per-span tables a flush writes, with how each stores its trace and span ids. */
const TABLES: Record<InsertTable, { trace: 'text' | 'uuid'; span: 'text' | 'hex64' }> = {
  spans: { trace: 'text', span: 'text' },
  event_generation_completed: { trace: 'uuid', span: 'hex64' },
  event_tool_called: { trace: 'uuid', span: 'hex64' },
  event_span_errored: { trace: 'uuid', span: 'hex64' },
};

/** A span of the flush: its trace's key parts and its span id (hex text). */
export interface FlushedSpan extends TraceKeyLike {
  spanId: string;
}

/** A span's `tenant/project/trace/span` key: what spanKeyText reads from a row. */
export const spanKey = (s: FlushedSpan): string => `${s.tenantId}/${s.projectId}/${s.traceId}/${s.spanId}`;

/** `tenant/project/trace/span` as text, the same on every table whatever its id types. */
export function spanKeyText(table: InsertTable): Fragment {
  const { trace, span } = TABLES[table];
  const traceText = trace === 'text' ? 'trace_id' : storedIdText('uuid', 'trace_id');
  const spanText = span === 'text' ? 'span_id' : storedIdText('hex64', 'span_id');
  return raw(`concat(toString(tenant_id), '/', toString(project_id), '/', ${traceText}, '/', ${spanText})`);
}

/**
 * Deletes the rows of `spans` from the four per-span tables. True when every delete applied within
 * `waitMs` (only these deletes are awaited: lightweight-delete.ts). Throws when the store does not
 * take a delete (the writer retries before its next flush). `afterSubmit` runs once the deletes are
 * submitted, before the wait: a test's seam.
 */
export async function removeUnstoredRows(
  ch: ClickHouseStore,
  spans: readonly FlushedSpan[],
  waitMs = DELETE_WAIT_MS,
  afterSubmit?: () => Promise<void>,
): Promise<boolean> {
  if (spans.length === 0) return true;
  const keys = [...new Set(spans.map(spanKey))];
  const deletes = (Object.keys(TABLES) as InsertTable[]).map((table) => ({ table, where: sql`${spanKeyText(table)} IN ${param('Array(String)', keys)}` }));
  return (await lightweightDelete(ch, deletes, { lane: 'ingest', waitMs, afterSubmit })).applied;
}
