import { Router } from 'express';
import type { AppDeps } from '../app-deps.js';
import { NotFoundError, ValidationError } from '../http/errors.js';
import { defineRoute, projectForPrincipal } from '../http/route.js';
import { isOtelTraceId, isTraceUuid } from '../ingest/trace-id.js';
import { traceHooks } from '../trace-hook-registry.js';
import { findProject } from '../tenancy/project-store.js';
import { isoFromDateTime64, msToDateTime64 } from '../stores/clickhouse-time.js';
import type { TraceDetailInput, TraceDetailPage, TraceDetailResult } from './trace-detail-build.js';
import { storedTraceDetailPage } from './trace-page.js';
import { agentNames, listTraces, readTraceBytes, storedTraceCost, threadTraceCount, type TraceListRow, type TraceScope } from './trace-store.js';
import { contextBundleJson, defaultPayloadJson, PENDING_EXTRACTION, type TraceContext } from './trace-view.js';
import { traceDetailQuery, traceListQuery, traceListSchema, traceSchema } from './trace-schemas.js';

/**
 * The traces API: SPEC.md "Traces" (GET /traces/{trace_id}, GET /traces/agent-names) and
 * DESIGN.md's GET /projects/{project_id}/traces. Trace detail is built from the stored spans with
 * the same summarizeTrace the settler stores, so it is complete as soon as the spans are durable;
 * the work runs on the compute pool and the default form pages a huge trace's spans
 * (span_limit/span_cursor) instead of answering megabytes.
 */

interface DetailQuery {
  expand?: 'context';
  project_id?: string;
  spans_limit?: number;
  spans_offset?: number;
  span_limit?: number;
  span_cursor?: string;
  include_attributes?: boolean;
  include_events?: boolean;
}

interface ListQuery {
  agent_name?: string;
  has_error?: boolean;
  thread_id?: string;
  start?: string;
  end?: string;
  cursor?: string;
  limit?: number;
}

const DEFAULT_SPANS_LIMIT = 100;
/** Spans per page of the default form: every span of a normal trace, a bounded answer for a huge one. */
export const DEFAULT_SPAN_PAGE = 2000;
const DEFAULT_LIST_LIMIT = 50;

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

function listItem(row: TraceListRow) {
  return {
    id: row.trace_id,
    otel_trace_id: row.otel_trace_id,
    project_id: row.project_id,
    timestamp: isoFromDateTime64(row.ts),
    service_name: row.service_name,
    agent_name: row.agent_name,
    thread_id: row.thread_id,
    release: row.release,
    agent_input_display: row.agent_input_display,
    has_error: Number(row.has_error) === 1,
    total_duration_ms: Number(row.total_duration_ms),
    span_count: Number(row.span_count),
    total_tokens: Number(row.total_tokens),
    error_count: Number(row.error_count),
    tool_call_count: (JSON.parse(row.tool_calls) as unknown[]).length,
    models_used: row.models_used,
    estimated_cost_usd: row.estimated_cost_usd === null ? null : Number(row.estimated_cost_usd),
  };
}

/** Every stored span of the trace, parsed, summarized and paged on the compute pool (trace-detail-build.ts). */
async function wholeTraceDetail(deps: AppDeps, scope: TraceScope, id: string, input: Omit<TraceDetailInput, 'rows'>): Promise<TraceDetailResult> {
  const rows = await readTraceBytes(deps.ch, scope, id);
  return deps.compute.run('trace-detail', { ...input, rows }, [rows.buffer as ArrayBuffer]);
}

export function traceRoutes(deps: AppDeps): Router {
  const router = Router();
  const Trace = deps.openapi.addSchema('Trace', traceSchema);
  const TraceList = deps.openapi.addSchema('TraceList', traceListSchema);

  // Registered before /traces/{trace_id} so the literal path wins.
  defineRoute<unknown, { project_id?: string }>(router, deps, {
    method: 'get', path: '/traces/agent-names', tag: 'traces', scope: 'read',
    summary: 'Agent names seen in the processed traces of the tenant, sorted; narrowed to `project_id` when given (and always to the key\'s project when it is limited)',
    query: { type: 'object', additionalProperties: false, properties: { project_id: { type: 'string', description: 'Only this project\'s agents.' } } },
    responses: { 200: { description: 'Agent names', schema: { type: 'object', required: ['agent_names'], properties: { agent_names: { type: 'array', items: { type: 'string' } } } } } },
    handler: async ({ principal, query }) => {
      const projectId = query.project_id ? (await projectForPrincipal(deps, principal, query.project_id)).id : principal.projectId;
      return { agent_names: await agentNames(deps.ch, { tenantId: principal.tenantId, projectId }) };
    },
  });

  defineRoute<unknown, DetailQuery>(router, deps, {
    method: 'get', path: '/traces/{trace_id}', tag: 'traces', scope: 'read',
    summary: 'One trace: the default detail payload, or with expand=context the context bundle (project_id required)',
    query: traceDetailQuery,
    responses: { 200: { description: 'Trace detail (default form) or context bundle', schema: Trace } },
    handler: async ({ principal, params, query, res }) => {
      const id = params.trace_id.toLowerCase();
      const context = query.expand === 'context';
      if (!context && (query.spans_limit !== undefined || query.spans_offset !== undefined || query.project_id !== undefined)) {
        throw new ValidationError('spans_limit, spans_offset and project_id are only valid with expand=context');
      }
      if (context && query.project_id === undefined) throw new ValidationError('project_id is required with expand=context');
      if (!isTraceUuid(id) && !isOtelTraceId(id)) throw new NotFoundError('Trace not found');
      let projectId = principal.projectId;
      if (context) {
        // A project of another tenant or outside the key is not found, exactly as an unknown trace.
        await projectForPrincipal(deps, principal, query.project_id!);
        projectId = query.project_id!;
      }
      if (context && (query.span_limit !== undefined || query.span_cursor !== undefined)) {
        throw new ValidationError('span_limit and span_cursor page the default form; the context bundle takes spans_limit and spans_offset');
      }
      const scope = { tenantId: principal.tenantId, projectId };
      const view = { includeAttributes: query.include_attributes ?? true, includeEvents: query.include_events ?? true };
      const limit = context ? (query.spans_limit ?? DEFAULT_SPANS_LIMIT) : (query.span_limit ?? DEFAULT_SPAN_PAGE);
      const page: TraceDetailPage = context
        ? { form: 'context', limit, offset: query.spans_offset ?? 0 }
        : { form: 'default', limit, cursor: query.span_cursor ?? null };
      // A big settled trace: its stored summary and one page of spans (trace-page.ts). Otherwise the
      // whole trace is parsed, summarized and serialized on the compute pool (it may be megabytes).
      const stored = page.form === 'default' ? await storedTraceDetailPage(deps.ch, deps.compute, scope, id, { view, limit, cursor: page.cursor }) : null;
      const built = stored ?? (await wholeTraceDetail(deps, scope, id, { view, page }));
      if (!built.found) throw new NotFoundError('Trace not found');
      if (built.invalidCursor) throw new ValidationError('span_cursor: invalid cursor');
      const trace = built.trace;
      const hooks = traceHooks(deps);
      const [project, threadCount, extraction, occurrences, cost] = await Promise.all([
        findProject(deps.sql, principal.tenantId, trace.project_id),
        threadTraceCount(deps.ch, principal.tenantId, trace.project_id, trace.thread_id, trace.trace_id),
        hooks.issueExtraction ? hooks.issueExtraction(principal.tenantId, trace.project_id, trace.trace_id) : Promise.resolve(null),
        context && hooks.traceOccurrences ? hooks.traceOccurrences(principal.tenantId, trace.project_id, trace.trace_id) : Promise.resolve([]),
        storedTraceCost(deps.ch, principal.tenantId, trace.project_id, trace.trace_id),
      ]);
      if (!project) throw new NotFoundError('Trace not found');
      const traceContext: TraceContext = {
        projectName: project.name,
        threadTraceCount: threadCount,
        issueExtraction: extraction ?? PENDING_EXTRACTION,
        occurrences,
        cost,
      };
      // Written by hand: the page of spans comes from the pool as JSON text (and the context bundle's
      // nanosecond numbers must reach the client with every digit).
      const paged = query.span_limit !== undefined || query.span_cursor !== undefined || built.spansTotal > limit;
      const body = context
        ? contextBundleJson(trace, built.spansJson, traceContext, { total: built.spansTotal, limit, offset: query.spans_offset ?? 0 })
        : defaultPayloadJson(trace, built.spansJson, traceContext, paged ? { spans_total: built.spansTotal, next_span_cursor: built.nextCursor } : null);
      res.status(200).type('application/json').send(body);
      return undefined;
    },
  });

  defineRoute<unknown, ListQuery>(router, deps, {
    method: 'get', path: '/projects/{project_id}/traces', tag: 'traces', scope: 'read', projectParam: true,
    summary: 'Processed traces of a project, newest first, with cursor pagination and filters',
    query: traceListQuery,
    responses: { 200: { description: 'A page of traces', schema: TraceList } },
    handler: async ({ tenantId, project, query }) => {
      const limit = query.limit ?? DEFAULT_LIST_LIMIT;
      const rows = await listTraces(deps.ch, tenantId, project.id, {
        agentName: query.agent_name,
        hasError: query.has_error,
        threadId: query.thread_id,
        start: query.start !== undefined ? toDateTime64(query.start, 'start') : undefined,
        end: query.end !== undefined ? toDateTime64(query.end, 'end') : undefined,
        before: query.cursor !== undefined ? decodeCursor(query.cursor) : undefined,
        limit: limit + 1,
      });
      const page = rows.slice(0, limit);
      return { traces: page.map(listItem), next_cursor: rows.length > limit ? encodeCursor(page[page.length - 1]) : null };
    },
  });

  return router;
}
