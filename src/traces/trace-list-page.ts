import { ValidationError } from '../platform/http/errors.js';
import { isoFromDateTime64, msToDateTime64 } from '../platform/clickhouse/clickhouse-time.js';
import type { TraceListFilters, TraceListRow } from './trace-store.js';
import type { TraceListItem, TraceListPage, TraceListQuery as TraceListParams } from './trace-schemas.js';
import { parseSearchQuery } from './search-query.js';

/**
 * GET /projects/{project_id}/traces between the wire and trace-store: the request's ISO bounds and
 * opaque keyset cursor become the store's filters (a 400 naming the parameter when they are not
 * valid), and stored rows become the list items and the next cursor.
 */

/** The list's filters as the request gives them: ISO 8601 bounds and the opaque cursor. */
export interface TraceListQuery {
  agentName?: string;
  hasError?: boolean;
  threadId?: string;
  start?: string;
  end?: string;
  model?: string;
  tool?: string;
  release?: string;
  /** Inclusive bounds on total_duration_ms. */
  minDurationMs?: number;
  maxDurationMs?: number;
  /** Inclusive bounds on estimated_cost_usd. */
  minCostUsd?: number;
  maxCostUsd?: number;
  cursor?: string;
  /** Search text (search-query.ts). */
  q?: string;
  /** Also list traces not settled yet, by their preview (trace-preview.ts). */
  includeUnsettled?: boolean;
}

export type { TraceListItem, TraceListPage };

/** The filters of the list's query parameters (REST) or arguments (MCP), as the service takes them. */
export function listQueryOf(p: TraceListParams): TraceListQuery {
  return {
    agentName: p.agent_name,
    hasError: p.has_error,
    threadId: p.thread_id,
    model: p.model,
    tool: p.tool,
    release: p.release,
    minDurationMs: p.min_duration_ms,
    maxDurationMs: p.max_duration_ms,
    minCostUsd: p.min_cost_usd,
    maxCostUsd: p.max_cost_usd,
    start: p.start,
    end: p.end,
    cursor: p.cursor,
    q: p.q,
    includeUnsettled: p.include_unsettled,
  };
}

/** The store's filters for a page of `limit` rows (checked in the order start, end, bounds, cursor, q). */
export function storeFilters(query: TraceListQuery, limit: number): TraceListFilters {
  const start = query.start !== undefined ? toDateTime64(query.start, 'start') : undefined;
  const end = query.end !== undefined ? toDateTime64(query.end, 'end') : undefined;
  return {
    agentName: query.agentName,
    hasError: query.hasError,
    threadId: query.threadId,
    model: query.model,
    tool: query.tool,
    release: query.release,
    durationMs: range(query.minDurationMs, query.maxDurationMs, 'duration_ms'),
    costUsd: range(query.minCostUsd, query.maxCostUsd, 'cost_usd'),
    start,
    end,
    before: query.cursor !== undefined ? decodeCursor(query.cursor) : undefined,
    search: query.q !== undefined ? parseSearchQuery(query.q) : undefined,
    includeUnsettled: query.includeUnsettled,
    limit,
  };
}

/**
 * The page answered for `rows`, read with one row beyond `limit` to tell whether another page follows.
 * Traces that started before `contentSinceMs` show no content (retention, trace-view.ts).
 */
export function listPage(rows: TraceListRow[], limit: number, contentSinceMs = -Infinity): TraceListPage {
  const page = rows.slice(0, limit);
  return { traces: page.map((row) => listItem(row, contentSinceMs)), next_cursor: rows.length > limit ? encodeCursor(page[page.length - 1]) : null };
}

/** Inclusive bounds (either may be absent), or a 400 when min exceeds max: such a list could only ever be empty. */
function range(min: number | undefined, max: number | undefined, name: string): { min?: number; max?: number } | undefined {
  if (min === undefined && max === undefined) return undefined;
  if (min !== undefined && max !== undefined && min > max) throw new ValidationError(`min_${name}: must not exceed max_${name}`);
  return { min, max };
}

/** ISO 8601 → ClickHouse DateTime64 text (UTC), or a 400 naming the parameter. */
function toDateTime64(value: string, name: string): string {
  const ms = Date.parse(value);
  if (!Number.isFinite(ms) || !/^\d{4}-\d{2}-\d{2}/.test(value)) throw new ValidationError(`${name}: must be an ISO 8601 date-time`);
  return msToDateTime64(ms);
}

function encodeCursor(row: TraceListRow): string {
  return Buffer.from(JSON.stringify({ ts: row.ts, id: row.trace_id })).toString('base64url');
}

function decodeCursor(cursor: string): { timestamp: string; traceId: string } {
  try {
    const parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { ts?: unknown; id?: unknown };
    if (typeof parsed.ts === 'string' && /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}$/.test(parsed.ts) && typeof parsed.id === 'string') {
      return { timestamp: parsed.ts, traceId: parsed.id };
    }
  } catch {
    // fall through
  }
  throw new ValidationError('cursor: invalid cursor');
}

function listItem(row: TraceListRow, contentSinceMs: number): TraceListItem {
  const timestamp = isoFromDateTime64(row.ts);
  const expired = Date.parse(timestamp) < contentSinceMs;
  return {
    id: row.trace_id,
    otel_trace_id: row.otel_trace_id,
    project_id: row.project_id,
    timestamp,
    service_name: row.service_name,
    agent_name: row.agent_name,
    thread_id: row.thread_id,
    release: row.release,
    agent_input_display: expired ? '' : row.agent_input_display,
    content_expired: expired,
    has_error: Number(row.has_error) === 1,
    total_duration_ms: Number(row.total_duration_ms),
    span_count: Number(row.span_count),
    total_tokens: Number(row.total_tokens),
    error_count: Number(row.error_count),
    // From the stats list (names and statuses), which stays for analytics_days; the tool_calls list is content.
    tool_call_count: row.stats_tool_calls === '' ? 0 : (JSON.parse(row.stats_tool_calls) as unknown[]).length,
    models_used: row.models_used,
    estimated_cost_usd: row.estimated_cost_usd === null ? null : Number(row.estimated_cost_usd),
    settled: Number(row.preview) === 0,
  };
}
