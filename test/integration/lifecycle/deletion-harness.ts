/**
 * Helpers of the deletion suites: runs sent as OTLP/JSON to two projects at once (one that keeps
 * everything and one that only ever gets what should remain), every stored row of a project or of
 * some traces counted table by table, and the answers of the views and the query language read
 * without their freshness fields, so two projects' answers compare as equal.
 */
import { queueDepth } from '../../../src/ingest/settle/settle-queue.js';
import type { ClickHouseStore } from '../../../src/platform/clickhouse/clickhouse.js';
import type { Sql } from '../../../src/platform/postgres/postgres.js';
import { PROJECT_ONLY_TABLES, TRACE_TABLES } from '../../../src/platform/clickhouse/trace-tables.js';
import { lookoutTraceId } from '../../../src/spans/trace-id.js';
import { agentRunRequest, type RunSpec } from '../../helpers/otlp-json.js';
import type { TestService } from '../../helpers/service.js';

export interface BuiltRun {
  spec: RunSpec;
  body: string;
  otelTraceId: string;
}

export const build = (specs: RunSpec[]): BuiltRun[] =>
  specs.map((spec) => {
    const { body, traceId } = agentRunRequest(spec);
    return { spec, body, otelTraceId: traceId };
  });

export async function send(svc: TestService, projectId: string, runs: BuiltRun[]): Promise<void> {
  for (const run of runs) {
    const res = await fetch(`${svc.url}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${svc.adminKey}`, 'x-lookout-project': projectId },
      body: run.body,
    });
    if (res.status !== 200) throw new Error(`ingest answered ${res.status}: ${await res.text()}`);
  }
}

export const traceIdsOf = (projectId: string, runs: BuiltRun[]) => runs.map((r) => lookoutTraceId(projectId, r.otelTraceId));

export async function until<T>(what: string, check: () => Promise<T | undefined | false>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Waits until the project lists `n` processed traces and nothing waits to settle (issues extracted, monitors observed). */
export async function settled(svc: TestService, projectId: string, n: number): Promise<void> {
  await until(`${n} processed traces`, async () => {
    const res = await svc.call('GET', `/projects/${projectId}/traces?limit=100`);
    return res.status === 200 && res.body.traces.length === n && (await queueDepth(svc.service.deps.sql)) === 0;
  });
}

/** Polls a deletion job until it succeeded; returns the job. */
export async function finished(svc: TestService, deletionId: string, timeoutMs = 90_000): Promise<Record<string, any>> {
  let last: unknown;
  try {
    return await until(`deletion ${deletionId}`, async () => {
      const res = await svc.call('GET', `/deletions/${deletionId}`);
      last = res.body;
      return res.status === 200 && res.body.status === 'succeeded' ? res.body : undefined;
    }, timeoutMs);
  } catch (error) {
    throw new Error(`${(error as Error).message}: ${JSON.stringify(last)}`, { cause: error });
  }
}

/**
 * Rows of the project (or of some of its traces) in every ClickHouse table that holds per-trace
 * data, and (for a project) the per-project ones, read as a query would (pending deletes applied
 * only once the engine applied them: no apply_mutations_on_fly), and in every PostgreSQL table with
 * per-trace rows.
 */
export async function storedRows(stores: Stores, tenantId: string, projectId: string, traceIds?: string[]): Promise<Record<string, number>> {
  const { ch, sql } = stores;
  const counts: Record<string, number> = {};
  const tables = [...Object.keys(TRACE_TABLES), ...(traceIds ? [] : PROJECT_ONLY_TABLES)];
  for (const table of tables) {
    const idType = TRACE_TABLES[table] === 'uuid' ? 'Array(UUID)' : 'Array(String)';
    const only = traceIds ? ` AND trace_id IN {ids:${idType}}` : '';
    const result = await ch.client.query({
      query: `SELECT count() AS n FROM ${ch.table(table)} WHERE tenant_id = {t:String} AND project_id = {p:String}${only}`,
      query_params: { t: tenantId, p: projectId, ids: traceIds ?? [] },
      format: 'JSONEachRow',
    });
    counts[table] = Number((await result.json<{ n: string }>())[0].n);
  }
  const ids = traceIds ?? null;
  const one = async (q: Promise<{ n: number }[]>) => (await q)[0].n;
  counts['pg.issue_occurrences'] = await one(sql`select count(*)::int as n from issue_occurrences where tenant_id = ${tenantId} and project_id = ${projectId} and (${ids}::uuid[] is null or trace_id = any(${ids}::uuid[]))`);
  counts['pg.trace_issue_extractions'] = await one(sql`select count(*)::int as n from trace_issue_extractions where tenant_id = ${tenantId} and project_id = ${projectId} and (${ids}::uuid[] is null or trace_id = any(${ids}::uuid[]))`);
  counts['pg.monitor_observations'] = await one(sql`select count(*)::int as n from monitor_observations o join monitors m on m.id = o.monitor_id where m.project_id = ${projectId} and (${ids}::text[] is null or o.trace_id = any(${ids}::text[]))`);
  counts['pg.metric_events'] = await one(sql`select count(*)::int as n from metric_events o join metrics m on m.id = o.metric_id where m.project_id = ${projectId} and (${ids}::text[] is null or o.trace_id = any(${ids}::text[]))`);
  counts['pg.settle_queue'] = await one(sql`select count(*)::int as n from settle_queue where tenant_id = ${tenantId} and project_id = ${projectId} and (${ids}::uuid[] is null or trace_id = any(${ids}::uuid[]))`);
  counts['pg.stored_traces'] = await one(sql`select count(*)::int as n from stored_traces where tenant_id = ${tenantId} and project_id = ${projectId} and (${ids}::uuid[] is null or trace_id = any(${ids}::uuid[]))`);
  if (!ids) counts['pg.issue_event_outbox'] = await one(sql`select count(*)::int as n from issue_event_outbox where tenant_id = ${tenantId} and project_id = ${projectId}`);
  return counts;
}

/** Both stores, as a running service holds them (`svc.service.deps`) or as a test opens them. */
export interface Stores {
  ch: ClickHouseStore;
  sql: Sql;
}

export const zeros = (counts: Record<string, number>) => Object.fromEntries(Object.keys(counts).map((k) => [k, 0]));

/** Drops what differs between two projects with the same data: freshness, ids, times of processing. */
function comparable(body: unknown): unknown {
  if (Array.isArray(body)) return body.map(comparable);
  if (body && typeof body === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(body)) {
      if (['data_as_of', 'settle_lag_ms', 'settle_max_lag_ms', 'project_id', 'pricing_fetched_at'].includes(key)) continue;
      out[key] = comparable(value);
    }
    return out;
  }
  return body;
}

/** Every preset view (but roi, which counts the project's issues, and those stay) and a DSL query per trace event, over one window. */
export async function answers(svc: TestService, projectId: string, start: string, endExclusive: string): Promise<Record<string, unknown>> {
  const views: Record<string, string> = {
    general: `hours=${Math.round((Date.parse(endExclusive) - Date.parse(start)) / 3_600_000)}&endExclusive=${endExclusive}`,
    base: `start=${start}&endExclusive=${endExclusive}&granularity=day`,
    window: `start=${start}&end_exclusive=${endExclusive}&granularity=day`,
    model_scorecard: `start=${start}&end=${new Date(Date.parse(endExclusive) - 1000).toISOString().replace(/\.\d{3}Z$/, 'Z')}`,
    agent_scorecard: `start=${start}&endExclusive=${endExclusive}`,
    tool_aggregates: `start=${start}&endExclusive=${endExclusive}`,
  };
  const queries: Record<string, unknown> = {
    'trace.processed': { measures: [{ as: 'runs', agg: 'count' }, { as: 'tokens', agg: 'sum', field: 'total_tokens' }, { as: 'errors', agg: 'sum', field: 'error_count' }], group_by: [{ field: 'agent_name' }] },
    'generation.completed': { measures: [{ as: 'calls', agg: 'count' }, { as: 'input', agg: 'sum', field: 'input_tokens' }, { as: 'output', agg: 'sum', field: 'output_tokens' }], group_by: [{ field: 'model' }] },
    'tool.called': { measures: [{ as: 'calls', agg: 'count' }, { as: 'failed', agg: 'sum', field: 'error' }], group_by: [{ field: 'tool' }] },
    'span.errored': { measures: [{ as: 'n', agg: 'count' }], group_by: [{ field: 'span_name' }] },
  };
  const out: Record<string, unknown> = {};
  for (const [view, params] of Object.entries(views)) {
    const res = await svc.call('GET', `/projects/${projectId}/analytics?view=${view}&${params}`);
    if (res.status !== 200) throw new Error(`${view}: ${res.status} ${JSON.stringify(res.body)}`);
    out[view] = comparable(res.body);
  }
  for (const [from, query] of Object.entries(queries)) {
    const res = await svc.call('POST', `/projects/${projectId}/analytics/query`, { body: { from, start, end_exclusive: endExclusive, ...(query as object) } });
    if (res.status !== 200) throw new Error(`${from}: ${res.status} ${JSON.stringify(res.body)}`);
    out[from] = comparable(res.body);
  }
  return out;
}
