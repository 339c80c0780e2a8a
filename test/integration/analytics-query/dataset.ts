/**
 * The seeded dataset of the analytics execution tests and an independent reference for what the
 * queries must answer: plain JavaScript over the same rows, deduplicated the way the event tables
 * promise (a re-sent span counts once, the newest processing of a trace wins).
 */
import type { ClickHouseStore } from '../../../src/platform/clickhouse/clickhouse.js';
import { ISSUE_EVENTS } from '../../../src/analytics/catalog.js';
import { spanIdFor, traceIdFor } from '../../helpers/event-ids.js';
import {
  DAY,
  insertGenerations,
  insertIssues,
  insertSpanErrors,
  insertTools,
  insertTraces,
  previousMonthStart,
  random,
  type GenerationRow,
  type IssueRow,
  type SpanErrorRow,
  type ToolRow,
  type TraceRow,
} from './seed.js';

export const TENANT = 'tenant-a';
export const PROJECT = 'proj-1';
/** Another tenant with the same project id: only the tenant guard keeps its rows out. */
export const OTHER_TENANT = 'tenant-b';
export const OTHER_PROJECT = 'proj-2';

/** The month edge the week buckets must straddle. */
export const EDGE = previousMonthStart();
export const START = EDGE - 14 * DAY;
export const END = EDGE + 14 * DAY;

export const MODELS = ['gpt-4o', 'claude-sonnet', 'llama-3', ''] as const;
export const AGENTS = ['planner', 'coder', 'reviewer', ''] as const;
export const TOOLS = ['search', 'write_file', 'bash', ''] as const;
export const SURFACES = ['otlp', 'api', ''] as const;

export interface Dataset {
  generations: GenerationRow[];
  tools: ToolRow[];
  spanErrors: SpanErrorRow[];
  traces: TraceRow[];
  issues: IssueRow[];
  /** Older processings of some traces, inserted on their own so only FINAL can hide them. */
  staleTraces: TraceRow[];
}

const agentOf = (trace: number) => AGENTS[trace % AGENTS.length];

function inWindowTime(rnd: ReturnType<typeof random>): number {
  // Millisecond precision on purpose: buckets and the window must not depend on whole seconds.
  return START + Math.floor(rnd.next() * (END - START));
}

/** Builds the rows: `live` are what a query of TENANT/PROJECT may see; `noise` must never show. */
export function buildDataset(): { live: Dataset; all: Dataset } {
  const rnd = random(20261122);
  const generations: GenerationRow[] = [];
  for (let i = 0; i < 500; i++) {
    generations.push({
      tenant_id: TENANT,
      project_id: PROJECT,
      ts: inWindowTime(rnd),
      surface: rnd.pick(SURFACES),
      actor: rnd.pick(['sdk', '']),
      user_id: rnd.pick(['u1', 'u2', '']),
      model: rnd.pick(MODELS),
      trace_id: traceIdFor(`t${rnd.int(0, 39)}`),
      span_id: spanIdFor(`g${i}`),
      duration_ms: Math.round(rnd.next() * 500000) / 100,
      input_tokens: rnd.int(0, 5000),
      output_tokens: rnd.int(0, 900),
      tps: rnd.next() < 0.2 ? null : Math.round(rnd.next() * 10000) / 100,
      error: rnd.next() < 0.15 ? 1 : 0,
    });
  }
  // The window's own edges: start is inclusive, end_exclusive is not.
  generations.push({ ...generations[0], span_id: spanIdFor('g-at-start'), ts: START });
  const edgeRows: GenerationRow[] = [
    { ...generations[1], span_id: spanIdFor('g-at-end'), ts: END },
    { ...generations[2], span_id: spanIdFor('g-before-start'), ts: START - 1 },
  ];

  const traces: TraceRow[] = [];
  for (let t = 0; t < 40; t++) {
    traces.push({
      tenant_id: TENANT,
      project_id: PROJECT,
      ts: inWindowTime(rnd),
      surface: 'otlp',
      trace_id: traceIdFor(`t${t}`),
      agent_name: agentOf(t),
      root_status_code: rnd.pick(['OK', 'ERROR', '']),
      root_duration_ms: rnd.next() < 0.1 ? null : Math.round(rnd.next() * 9000000) / 100,
      error_count: rnd.int(0, 3),
      failing_tool_calls: rnd.int(0, 2),
      input_tokens: rnd.int(0, 20000),
      output_tokens: rnd.int(0, 4000),
      estimated_cost_usd: rnd.next() < 0.3 ? null : Math.round(rnd.next() * 10000) / 10000,
      processed_at: END + DAY,
    });
  }
  // Stale processings that newer rows replace (a late span re-processed the trace).
  const stale: TraceRow[] = traces.slice(0, 10).map((t) => ({ ...t, agent_name: 'stale-agent', error_count: 99, input_tokens: 1, processed_at: t.processed_at - DAY }));
  // t10: re-processing moved the trace past the window, in the same month: it no longer counts.
  const t10 = traces[10];
  stale.push({ ...t10, ts: EDGE + 2 * DAY, processed_at: t10.processed_at - DAY });
  traces[10] = { ...t10, ts: END + DAY };
  // t11: re-processing moved the trace into the window from before it (another month's partition).
  const t11 = traces[11];
  stale.push({ ...t11, ts: START - 3 * DAY, processed_at: t11.processed_at - DAY });
  traces[11] = { ...t11, ts: EDGE + 3 * DAY };
  // t12: re-processing moved the trace out of the window into another month's partition.
  const t12 = traces[12];
  stale.push({ ...t12, ts: EDGE + DAY, processed_at: t12.processed_at - DAY });
  traces[12] = { ...t12, ts: START - 2 * DAY };

  const tools: ToolRow[] = [];
  for (let i = 0; i < 300; i++) {
    const trace = rnd.int(0, 49); // t40..t49 have tool calls but no generations
    tools.push({
      tenant_id: TENANT,
      project_id: PROJECT,
      ts: inWindowTime(rnd),
      tool: rnd.pick(TOOLS),
      agent_name: agentOf(trace),
      trace_id: traceIdFor(`t${trace}`),
      span_id: spanIdFor(`c${i}`),
      duration_ms: Math.round(rnd.next() * 100000) / 100,
      output_tokens: rnd.int(0, 300),
      error: rnd.next() < 0.25 ? 1 : 0,
    });
  }
  // An agent with tool calls but no trace.processed rows, and one with traces but no calls.
  tools.push({ ...tools[0], span_id: spanIdFor('c-orphan'), agent_name: 'tool-only-agent' });

  const spanErrors: SpanErrorRow[] = [];
  for (let i = 0; i < 60; i++) {
    spanErrors.push({ tenant_id: TENANT, project_id: PROJECT, ts: inWindowTime(rnd), span_name: rnd.pick(['llm', 'tool:bash', 'root']), trace_id: traceIdFor(`t${rnd.int(0, 59)}`), span_id: spanIdFor(`e${i}`) });
  }

  const issues: IssueRow[] = [];
  for (let i = 0; i < 40; i++) {
    issues.push({ tenant_id: TENANT, project_id: PROJECT, ts: inWindowTime(rnd), name: rnd.pick(ISSUE_EVENTS), issue_id: `i${rnd.int(0, 9)}`, event_id: `ev${i}`, user_id: rnd.pick(['u1', 'u2', '']), surface: 'api', actor: 'user' });
  }

  const live: Dataset = { generations, tools, spanErrors, traces: traces.filter((t) => t.ts >= START && t.ts < END), issues, staleTraces: [] };

  // Noise: the same shapes under another tenant (same project id) and another project, with values
  // that would stand out in every figure, plus re-sent copies of live rows.
  const foreign = <T extends { tenant_id: string; project_id: string }>(rows: T[]) => [
    ...rows.slice(0, 30).map((r) => ({ ...r, tenant_id: OTHER_TENANT })),
    ...rows.slice(0, 30).map((r) => ({ ...r, project_id: OTHER_PROJECT })),
  ];
  const all: Dataset = {
    generations: [...generations, ...edgeRows, ...foreign(generations.map((g) => ({ ...g, model: 'foreign-model', input_tokens: 1_000_000 }))), ...generations.slice(0, 50)],
    tools: [...tools, ...foreign(tools.map((t) => ({ ...t, tool: 'foreign-tool' }))), ...tools.slice(0, 40)],
    spanErrors: [...spanErrors, ...foreign(spanErrors), ...spanErrors.slice(0, 10)],
    traces: [...traces, ...foreign(traces.map((t) => ({ ...t, agent_name: 'foreign-agent' })))],
    staleTraces: stale,
    issues: [...issues, ...foreign(issues), ...issues.slice(0, 5)],
  };
  return { live, all };
}

/** Inserts `all`, each table in two separate inserts so duplicates land in different parts. */
export async function seedDataset(store: ClickHouseStore, all: Dataset): Promise<void> {
  const half = <T>(rows: T[]) => [rows.slice(0, Math.ceil(rows.length / 2)), rows.slice(Math.ceil(rows.length / 2))];
  for (const part of half(all.generations)) await insertGenerations(store, part);
  for (const part of half(all.tools)) await insertTools(store, part);
  for (const part of half(all.spanErrors)) await insertSpanErrors(store, part);
  // Stale processings first, then the newer ones, in separate parts: only FINAL hides the stale ones
  // (rows of one insert are already collapsed on insert).
  await insertTraces(store, all.staleTraces);
  for (const part of half(all.traces)) await insertTraces(store, part);
  for (const part of half(all.issues)) await insertIssues(store, part);
}

// ---- reference aggregations -------------------------------------------------------------------

/** ClickHouse quantileExact: the element at floor(level * n) of the sorted values. */
export function quantileExact(values: number[], level: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(level * sorted.length))];
}

export const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
export const avg = (values: number[]) => (values.length ? sum(values) / values.length : null);
export const uniq = (values: unknown[]) => new Set(values).size;

export function groupRows<T>(rows: T[], key: (row: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const row of rows) {
    const k = key(row);
    const list = groups.get(k);
    if (list) list.push(row);
    else groups.set(k, [row]);
  }
  return new Map([...groups.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

const pad = (n: number) => String(n).padStart(2, '0');
export const dayText = (ms: number) => new Date(ms).toISOString().slice(0, 10);
export const monthText = (ms: number) => `${new Date(ms).toISOString().slice(0, 7)}-01`;
export const hourText = (ms: number) => `${new Date(ms).toISOString().slice(0, 13)}:00:00Z`;
export const minuteText = (ms: number) => `${new Date(ms).toISOString().slice(0, 16)}:00Z`;
/** The Sunday on or before the day (UTC). */
export function sundayText(ms: number): string {
  const d = new Date(ms);
  const sunday = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() - d.getUTCDay());
  const s = new Date(sunday);
  return `${s.getUTCFullYear()}-${pad(s.getUTCMonth() + 1)}-${pad(s.getUTCDate())}`;
}
