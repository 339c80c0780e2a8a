/**
 * Writes rows straight into the event tables (clickhouse/002_events.sql) for the analytics query
 * tests, filling every column the test does not care about with its empty value, and a small
 * deterministic random source so expected figures are computed from the same rows in the test.
 * Span ids go in as the per-span tables store them (a UInt64, clickhouse/009): rows carry hex text.
 */
import type { ClickHouseStore } from '../../../src/platform/clickhouse/clickhouse.js';
import { storedSpanId } from '../../../src/platform/clickhouse/sql/event-ids.js';

export const DAY = 86_400_000;

/** ClickHouse DateTime64(3) text for a time. */
export function chTime(ms: number): string {
  return new Date(ms).toISOString().replace('T', ' ').replace('Z', '');
}

export function isoSecond(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

interface Common {
  tenant_id: string;
  project_id: string;
  /** Milliseconds since the epoch. */
  ts: number;
  actor?: string;
  surface?: string;
  user_id?: string;
  api_key_id?: string;
}

export interface GenerationRow extends Common {
  model: string;
  trace_id: string;
  span_id: string;
  duration_ms: number;
  input_tokens: number | string;
  output_tokens: number;
  tps: number | null;
  error: 0 | 1;
}

export interface ToolRow extends Common {
  tool: string;
  agent_name: string;
  trace_id: string;
  span_id: string;
  duration_ms: number;
  output_tokens: number;
  error: 0 | 1;
}

export interface SpanErrorRow extends Common {
  span_name: string;
  trace_id: string;
  span_id: string;
}

export interface TraceRow extends Common {
  trace_id: string;
  agent_name: string;
  root_status_code: string;
  root_duration_ms: number | null;
  error_count: number;
  failing_tool_calls: number;
  input_tokens: number;
  output_tokens: number;
  estimated_cost_usd: number | null;
  /** Milliseconds; the newest processing of a trace wins (ReplacingMergeTree version). */
  processed_at: number;
}

export interface IssueRow extends Common {
  name: string;
  issue_id: string;
  event_id: string;
}

function common(row: Common) {
  return {
    tenant_id: row.tenant_id,
    project_id: row.project_id,
    timestamp: chTime(row.ts),
    actor: row.actor ?? '',
    surface: row.surface ?? '',
    user_id: row.user_id ?? '',
    api_key_id: row.api_key_id ?? '',
  };
}

async function insert(store: ClickHouseStore, table: string, values: Record<string, unknown>[]): Promise<void> {
  if (values.length === 0) return;
  await store.client.insert({ table: store.table(table), values, format: 'JSONEachRow' });
}

export const insertGenerations = (store: ClickHouseStore, rows: GenerationRow[]) =>
  insert(
    store,
    'event_generation_completed',
    rows.map((r) => ({
      ...common(r),
      model: r.model,
      trace_id: r.trace_id,
      span_id: storedSpanId(r.span_id),
      duration_ms: r.duration_ms,
      input_tokens: r.input_tokens,
      output_tokens: r.output_tokens,
      tps: r.tps,
      error: r.error,
    })),
  );

export const insertTools = (store: ClickHouseStore, rows: ToolRow[]) =>
  insert(
    store,
    'event_tool_called',
    rows.map((r) => ({ ...common(r), tool: r.tool, agent_name: r.agent_name, trace_id: r.trace_id, span_id: storedSpanId(r.span_id), duration_ms: r.duration_ms, output_tokens: r.output_tokens, error: r.error })),
  );

export const insertSpanErrors = (store: ClickHouseStore, rows: SpanErrorRow[]) =>
  insert(store, 'event_span_errored', rows.map((r) => ({ ...common(r), span_name: r.span_name, trace_id: r.trace_id, span_id: storedSpanId(r.span_id) })));

export const insertTraces = (store: ClickHouseStore, rows: TraceRow[]) =>
  insert(
    store,
    'event_trace_processed',
    rows.map((r) => ({
      ...common(r),
      trace_id: r.trace_id,
      agent_name: r.agent_name,
      root_status_code: r.root_status_code,
      has_root: 1,
      root_duration_ms: r.root_duration_ms,
      error_count: r.error_count,
      failing_tool_calls: r.failing_tool_calls,
      input_tokens: r.input_tokens,
      output_tokens: r.output_tokens,
      total_tokens: r.input_tokens + r.output_tokens,
      estimated_cost_usd: r.estimated_cost_usd,
      processed_at: chTime(r.processed_at),
    })),
  );

export const insertIssues = (store: ClickHouseStore, rows: IssueRow[]) =>
  insert(store, 'event_issue', rows.map((r) => ({ ...common(r), name: r.name, issue_id: r.issue_id, event_id: r.event_id })));

/** mulberry32: a tiny seeded generator, so every run seeds the same rows. */
export function random(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (min: number, max: number) => min + Math.floor(next() * (max - min + 1)),
    pick: <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)],
  };
}

/** First day (UTC) of the month before the current one: old enough to be settled, young enough for the 90-day TTL. */
export function previousMonthStart(now = Date.now()): number {
  const d = new Date(now);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() - 1, 1);
}
