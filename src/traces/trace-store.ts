import type { ClickHouseStore } from '../stores/clickhouse.js';
import { selectJsonEachRowBytes, STORED_SPAN_COLUMNS } from '../ingest/stored-spans.js';
import { isOtelTraceId } from '../ingest/trace-id.js';

/**
 * ClickHouse reads of the traces API. Every query filters by tenant (and by the key's project when
 * the key is project-limited); every value is a bound parameter.
 */

export interface TraceScope {
  tenantId: string;
  /** Set for a project-limited key, or when the caller names the project. */
  projectId: string | null;
}

/**
 * The stored spans matching a Lookout trace UUID or a 32-hex OpenTelemetry trace id, as the
 * JSONEachRow bytes ClickHouse returns: the compute pool parses them and picks the trace
 * (trace-detail-build.ts), so a 100,000-span trace is never decoded on the event loop.
 */
export async function readTraceBytes(ch: ClickHouseStore, scope: TraceScope, id: string): Promise<Uint8Array> {
  const idColumn = isOtelTraceId(id) ? 'otel_trace_id' : 'trace_id';
  return selectJsonEachRowBytes(
    ch,
    `SELECT ${STORED_SPAN_COLUMNS} FROM ${ch.table('spans')} FINAL
     WHERE tenant_id = {tenant:String} AND ${idColumn} = {id:String}
     ${scope.projectId ? 'AND project_id = {project:String}' : ''}`,
    { tenant: scope.tenantId, id, project: scope.projectId ?? '' },
  );
}

/** Traces of the project that share the thread (processed summaries). */
export async function threadTraceCount(ch: ClickHouseStore, tenantId: string, projectId: string, threadId: string, traceId: string): Promise<number> {
  if (threadId === '') return 0;
  const result = await ch.client.query({
    query: `SELECT uniqExactIf(trace_id, trace_id != {trace:String}) AS others FROM ${ch.table('traces')}
            WHERE tenant_id = {tenant:String} AND project_id = {project:String} AND thread_id = {thread:String}`,
    query_params: { tenant: tenantId, project: projectId, thread: threadId, trace: traceId },
    format: 'JSONEachRow',
  });
  const [row] = await result.json<{ others: number | string }>();
  // The trace itself counts even before its summary row is written.
  return Number(row?.others ?? 0) + 1;
}

/** A trace's cost as processing wrote it; basis `pending` until the trace is processed (docs/cost.md). */
export interface StoredTraceCostView {
  estimated_cost_usd: number | null;
  estimated_cost_basis: 'stored' | 'partial' | 'unpriced' | 'unavailable' | 'pending';
  cost_unpriced_models: string[];
}

export async function storedTraceCost(ch: ClickHouseStore, tenantId: string, projectId: string, traceId: string): Promise<StoredTraceCostView> {
  const result = await ch.client.query({
    query: `SELECT estimated_cost_usd, estimated_cost_basis, cost_unpriced_models FROM ${ch.table('event_trace_processed')} FINAL
            WHERE tenant_id = {tenant:String} AND project_id = {project:String} AND trace_id = {trace:String}
            LIMIT 1`,
    query_params: { tenant: tenantId, project: projectId, trace: traceId },
    format: 'JSONEachRow',
  });
  const [row] = await result.json<{ estimated_cost_usd: number | string | null; estimated_cost_basis: string; cost_unpriced_models: string[] }>();
  if (!row) return { estimated_cost_usd: null, estimated_cost_basis: 'pending', cost_unpriced_models: [] };
  const known = ['stored', 'partial', 'unpriced', 'unavailable'] as const;
  // A row written before cost existed has basis '': read as unavailable, like the analytics do.
  const basis = known.find((b) => b === row.estimated_cost_basis) ?? 'unavailable';
  return {
    estimated_cost_usd: row.estimated_cost_usd === null ? null : Number(row.estimated_cost_usd),
    estimated_cost_basis: basis,
    cost_unpriced_models: row.cost_unpriced_models,
  };
}

/** Distinct agent names of the tenant's processed traces (within the key's project when limited), sorted. */
export async function agentNames(ch: ClickHouseStore, scope: TraceScope): Promise<string[]> {
  const result = await ch.client.query({
    query: `SELECT DISTINCT agent_name FROM ${ch.table('traces')}
            WHERE tenant_id = {tenant:String} AND agent_name != '' ${scope.projectId ? 'AND project_id = {project:String}' : ''}
            ORDER BY agent_name`,
    query_params: { tenant: scope.tenantId, project: scope.projectId ?? '' },
    format: 'JSONEachRow',
  });
  return (await result.json<{ agent_name: string }>()).map((r) => r.agent_name);
}

export interface TraceListFilters {
  agentName?: string;
  hasError?: boolean;
  threadId?: string;
  /** DateTime64 text, inclusive. */
  start?: string;
  /** DateTime64 text, exclusive. */
  end?: string;
  /** Keyset position: rows strictly older than (timestamp, trace_id). */
  before?: { timestamp: string; traceId: string };
  limit: number;
}

export interface TraceListRow {
  trace_id: string;
  otel_trace_id: string;
  project_id: string;
  /** timestamp as DateTime64 text (UTC). */
  ts: string;
  service_name: string;
  agent_name: string;
  thread_id: string;
  release: string;
  agent_input_display: string;
  has_error: number;
  total_duration_ms: number;
  span_count: number;
  total_tokens: number | string;
  error_count: number;
  models_used: string[];
  estimated_cost_usd: number | null;
  tool_calls: string;
}

/** Processed traces of a project, newest first (timestamp, then trace id), after the cursor. */
export async function listTraces(ch: ClickHouseStore, tenantId: string, projectId: string, f: TraceListFilters): Promise<TraceListRow[]> {
  const where = ['tenant_id = {tenant:String}', 'project_id = {project:String}'];
  const params: Record<string, unknown> = { tenant: tenantId, project: projectId, limit: f.limit };
  if (f.agentName !== undefined) {
    where.push('agent_name = {agent:String}');
    params.agent = f.agentName;
  }
  if (f.hasError !== undefined) {
    where.push('has_error = {hasError:UInt8}');
    params.hasError = f.hasError ? 1 : 0;
  }
  if (f.threadId !== undefined) {
    where.push('thread_id = {thread:String}');
    params.thread = f.threadId;
  }
  if (f.start !== undefined) {
    where.push(`timestamp >= toDateTime64({start:String}, 3, 'UTC')`);
    params.start = f.start;
  }
  if (f.end !== undefined) {
    where.push(`timestamp < toDateTime64({end:String}, 3, 'UTC')`);
    params.end = f.end;
  }
  if (f.before) {
    where.push(`(timestamp, trace_id) < (toDateTime64({beforeTs:String}, 3, 'UTC'), {beforeId:String})`);
    params.beforeTs = f.before.timestamp;
    params.beforeId = f.before.traceId;
  }
  const result = await ch.client.query({
    query: `SELECT trace_id, otel_trace_id, project_id, toString(timestamp) AS ts, service_name, agent_name, thread_id, release,
                   agent_input_display, has_error, total_duration_ms, span_count, total_tokens, error_count, models_used,
                   estimated_cost_usd, tool_calls
            FROM ${ch.table('traces')} FINAL
            WHERE ${where.join(' AND ')}
            ORDER BY timestamp DESC, trace_id DESC
            LIMIT {limit:UInt32}`,
    query_params: params,
    format: 'JSONEachRow',
  });
  return result.json<TraceListRow>();
}
