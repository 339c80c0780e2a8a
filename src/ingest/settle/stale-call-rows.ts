import type { Logger } from 'pino';
import type { ClickHouseStore } from '../../platform/clickhouse/clickhouse.js';
import { lightweightDelete } from '../../platform/clickhouse/lightweight-delete.js';
import { param, raw, sql } from '../../platform/clickhouse/sql/fragment.js';
import { projectKeysGuard } from '../../platform/clickhouse/sql/tenant-guard.js';
import { DELETE_WAIT_MS, spanKey, spanKeyText } from '../write/unstored-rows.js';
import type { InnerCallSpan } from './settle-summaries.js';

/**
 * Removes generation.completed rows held by spans that no longer hold their model call's row.
 *
 * One model call seen by a framework span and the client span below it has its row at the outer
 * span (src/spans/model-calls.ts). A settle that runs before the outer span arrived (a batch split
 * between two exports, a request retried after a 503 while the trace settled) sees the client
 * span as the outermost of its call and writes the row there; once the outer span is settled too,
 * its row is written at the outer span, and the client span's row would count the call twice.
 * Ingest never writes such a row (a span gets its row at ingest only when its whole ancestry is in
 * the request), so only an earlier settle can have left one.
 *
 * A settle round with calls seen by several spans looks for rows at their inner spans by full key
 * (one read, narrowed by the sorting key's tenant, project and timestamp) and deletes what it
 * finds: rarely anything, so the usual cost is the one read.
 */
export async function removeStaleCallRows(ch: ClickHouseStore, spans: readonly InnerCallSpan[], logger: Logger): Promise<number> {
  if (spans.length === 0) return 0;
  const key = spanKeyText('event_generation_completed');
  const keys = [...new Set(spans.map(spanKey))];
  const found = await ch.read<{ key: string }>(
    sql`SELECT DISTINCT ${key} AS key FROM ${raw(ch.table('event_generation_completed'))}
        WHERE ${projectKeysGuard(spans)}
          AND timestamp IN ${param("Array(DateTime64(3, 'UTC'))", [...new Set(spans.map((s) => s.timestamp))])}
          AND ${key} IN ${param('Array(String)', keys)}`,
    { lane: 'ingest' },
  );
  if (found.length === 0) return 0;
  const { applied } = await lightweightDelete(ch, [{ table: 'event_generation_completed', where: sql`${key} IN ${param('Array(String)', found.map((r) => r.key))}` }], {
    lane: 'ingest',
    waitMs: DELETE_WAIT_MS,
  });
  logger.info({ rows: found.length, applied }, 'generation rows of spans whose call is held by an outer span removed');
  return found.length;
}
