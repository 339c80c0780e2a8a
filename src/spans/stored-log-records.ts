import type { ClickHouseStore } from '../platform/clickhouse/clickhouse.js';
import { param, raw, sql } from '../platform/clickhouse/sql/fragment.js';
import { scopedTable, tenantGuard, traceKeysGuard, type TenantScope } from '../platform/clickhouse/sql/tenant-guard.js';
import { STORED_LOG_COLUMNS } from './span-log-records.js';
import { selectJsonEachRowBytes, traceKeyString, type TraceKey } from './stored-spans.js';
import { isOtelTraceId } from './trace-id.js';

/**
 * Reading log records back from `span_logs` beside the spans they join (span-log-records.ts): for
 * settling (many traces, the ingest lane) and for the traces API (one trace, the interactive lane,
 * under the caller's tenant guard). Both return the JSONEachRow bytes for the compute pool.
 */

/** The log records of the given traces (settling). May hold other traces' rows (traceKeysGuard over-selects); they join no span read. */
export async function readTraceLogsBytes(ch: ClickHouseStore, keys: readonly TraceKey[]): Promise<Uint8Array> {
  if (keys.length === 0) return new Uint8Array(0);
  return selectJsonEachRowBytes(ch, sql`SELECT ${raw(STORED_LOG_COLUMNS)} FROM ${raw(ch.table('span_logs'))} WHERE ${traceKeysGuard(keys)}`, { lane: 'ingest' });
}

/** The log records of the trace(s) a traces API id names: Lookout's trace UUID or a 32-hex OpenTelemetry trace id. */
export async function readLogsOfTraceId(ch: ClickHouseStore, scope: TenantScope, id: string): Promise<Uint8Array> {
  const column = raw(isOtelTraceId(id) ? 'otel_trace_id' : 'trace_id');
  return selectJsonEachRowBytes(
    ch,
    sql`SELECT ${raw(STORED_LOG_COLUMNS)} FROM ${scopedTable(ch.table('span_logs'))} WHERE ${tenantGuard(scope)} AND ${column} = ${param('String', id)}`,
    { lane: 'interactive', scope },
  );
}

/** Log records of the trace stored after `processedAt` (DateTime64 text): a settled summary that has not seen them yet. */
export async function logsStoredSince(ch: ClickHouseStore, scope: TenantScope, traceId: string, processedAt: string): Promise<number> {
  const [row] = await ch.read<{ n: number | string }>(
    sql`SELECT count() AS n FROM ${scopedTable(ch.table('span_logs'))}
            WHERE ${tenantGuard(scope)} AND trace_id = ${param('String', traceId)} AND ingested_at >= toDateTime64(${param('String', processedAt)}, 3, 'UTC')`,
    { lane: 'interactive', scope },
  );
  return Number(row?.n ?? 0);
}

/** Log records stored per trace now (the per-trace limit), on the ingest lane; counted as stored, a re-sent copy not merged yet included. */
export async function storedLogCounts(ch: ClickHouseStore, keys: readonly TraceKey[]): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  if (keys.length === 0) return counts;
  const rows = await ch.read<{ tenant_id: string; project_id: string; trace_id: string; n: number | string }>(
    sql`SELECT tenant_id, project_id, trace_id, count() AS n FROM ${raw(ch.table('span_logs'))} WHERE ${traceKeysGuard(keys)} GROUP BY tenant_id, project_id, trace_id`,
    { lane: 'ingest' },
  );
  for (const r of rows) counts.set(traceKeyString({ tenantId: r.tenant_id, projectId: r.project_id, traceId: r.trace_id }), Number(r.n));
  return counts;
}
