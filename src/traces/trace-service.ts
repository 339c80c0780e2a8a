import type { AppDeps } from '../app/app-deps.js';
import { NotFoundError, ValidationError } from '../platform/http/errors.js';
import { traceHooks } from '../ingest/trace-hook-registry.js';
import { findProject } from '../tenancy/project-store.js';
import type { TraceDetailInput, TraceDetailPage, TraceDetailResult } from './trace-detail-build.js';
import { SMALL_TRACE_SPANS, storedTraceDetailPage } from './trace-page.js';
import { listPage, listQueryOf, storeFilters, type TraceListPage, type TraceListQuery } from './trace-list-page.js';
import type { TraceListQuery as TraceListParams } from './trace-schemas.js';
import { agentNames, countTraces, listTraces, readTraceBytes, searchMatchRows, storedTraceCost, threadTraceCount, type TraceListFilters, type TraceScope } from './trace-store.js';
import { bestMatches, snippetOf } from './search-snippet.js';
import { searchTraces } from './trace-search.js';
import { readLogsOfTraceId } from '../spans/stored-log-records.js';
import { contextBundleJson, defaultPayloadJson, PENDING_EXTRACTION, type TraceContext } from './trace-view.js';
import { traceDetailTask } from './trace-detail-build.js';
import { contentCutoff } from '../lifecycle/retention-access.js';

/** A trace's stored span rows and log records as ClickHouse returned them (JSONEachRow bytes). */
interface WholeTrace {
  rows: Uint8Array;
  logs: Uint8Array;
}

/** Rows in JSONEachRow bytes: one per line. */
function lineCount(bytes: Uint8Array): number {
  let lines = 0;
  for (let i = bytes.indexOf(0x0a); i !== -1; i = bytes.indexOf(0x0a, i + 1)) lines++;
  return lines;
}

declare module '../app/app-deps.js' {
  interface ServiceRegistry {
    traces?: TraceService;
  }
}

/** One trace as a route asks for it: the default payload (a page of spans) or the context bundle. */
export interface TraceDetailRequest {
  view: TraceDetailInput['view'];
  page: TraceDetailPage;
  /** The request named span_limit or span_cursor: the default payload says how it was paged even when one page holds every span. */
  explicitPage: boolean;
}

/**
 * The traces API as the routes see it: route → this service → trace-store (ClickHouse) and the
 * project store (PostgreSQL). It owns what spans stores: reading a trace's spans, building the
 * detail on the compute pool, and joining the project, the thread, the cost and the issue hooks.
 */
export class TraceService {
  constructor(private readonly deps: AppDeps) {}

  agentNames(tenantId: string, projectId: string | null): Promise<string[]> {
    return agentNames(this.deps.ch, { tenantId, projectId });
  }

  /**
   * The trace's JSON text, written by hand: the page of spans comes from the pool as JSON text (and
   * the context bundle's nanosecond numbers must reach the client with every digit). A trace
   * outside `projectId` (when set) or of another tenant is not found.
   */
  async detailJson(tenantId: string, projectId: string | null, traceId: string, request: TraceDetailRequest): Promise<string> {
    const { page } = request;
    const scope = { tenantId, projectId };
    // Content past its project's retention is left out of the spans and the trace (trace-view.ts);
    // the cut-off is read beside the spans. The default form reads at most one span row more than a
    // small trace has: that answers every small trace in one round of statements, where a count
    // first and then the spans took two.
    const [cutoff, first] = await Promise.all([
      contentCutoff(this.deps.sql, tenantId),
      this.readWholeTrace(scope, traceId, page.form === 'default' ? SMALL_TRACE_SPANS + 1 : undefined),
    ]);
    const view = { ...request.view, contentCutoff: cutoff };
    const complete = page.form !== 'default' || lineCount(first.rows) <= SMALL_TRACE_SPANS;
    // A big trace: when settled, its stored summary and one page of spans (trace-page.ts). Otherwise
    // the whole trace is parsed, summarized and serialized on the compute pool (it may be megabytes).
    const built = complete
      ? await this.buildWholeTrace(first, { view, page })
      : ((await storedTraceDetailPage(this.deps.ch, this.deps.compute, scope, traceId, { view, limit: page.limit, cursor: page.cursor })) ??
        (await this.buildWholeTrace(await this.readWholeTrace(scope, traceId), { view, page })));
    if (!built.found) throw new NotFoundError('Trace not found');
    if (built.invalidCursor) throw new ValidationError('span_cursor: invalid cursor');
    const trace = built.trace;
    const hooks = traceHooks(this.deps);
    const context = page.form === 'context';
    const [project, threadCount, extraction, occurrences, cost] = await Promise.all([
      findProject(this.deps.sql, tenantId, trace.project_id),
      threadTraceCount(this.deps.ch, tenantId, trace.project_id, trace.thread_id, trace.trace_id),
      hooks.issueExtraction ? hooks.issueExtraction(tenantId, trace.project_id, trace.trace_id) : Promise.resolve(null),
      context && hooks.traceOccurrences ? hooks.traceOccurrences(tenantId, trace.project_id, trace.trace_id) : Promise.resolve([]),
      storedTraceCost(this.deps.ch, tenantId, trace.project_id, trace.trace_id),
    ]);
    if (!project) throw new NotFoundError('Trace not found');
    const traceContext: TraceContext = {
      projectName: project.name,
      threadTraceCount: threadCount,
      issueExtraction: extraction ?? PENDING_EXTRACTION,
      occurrences,
      cost,
      contentCutoff: cutoff,
    };
    if (page.form === 'context') {
      return contextBundleJson(trace, built.spansJson, traceContext, { total: built.spansTotal, limit: page.limit, offset: page.offset });
    }
    const paged = request.explicitPage || built.spansTotal > page.limit;
    return defaultPayloadJson(trace, built.spansJson, traceContext, paged ? { spans_total: built.spansTotal, next_span_cursor: built.nextCursor } : null);
  }

  /**
   * The trace's stored span rows (at most `limit`, any of them) and its log records
   * (span-log-records.ts: read here too, so a record is seen as soon as it is stored, before its
   * trace settles again).
   */
  private async readWholeTrace(scope: TraceScope, traceId: string, limit?: number): Promise<WholeTrace> {
    const [rows, logs] = await Promise.all([readTraceBytes(this.deps.ch, scope, traceId, limit), readLogsOfTraceId(this.deps.ch, scope, traceId)]);
    return { rows, logs };
  }

  /** The detail of every stored span, parsed, summarized and paged on the compute pool (trace-detail-build.ts). */
  private buildWholeTrace({ rows, logs }: WholeTrace, input: Omit<TraceDetailInput, 'rows' | 'logs'>): Promise<TraceDetailResult> {
    return this.deps.compute.run(traceDetailTask, { ...input, rows, logs }, [rows.buffer as ArrayBuffer, logs.buffer as ArrayBuffer]);
  }

  /**
   * The list as GET /projects/{id}/traces and the MCP search_traces tool ask for it (their shared
   * parameters), with `total` when include_total is set.
   */
  listFor(tenantId: string, projectId: string, params: TraceListParams, limit: number): Promise<TraceListPage> {
    return this.list(tenantId, projectId, listQueryOf(params), limit, { includeTotal: params.include_total });
  }

  /**
   * A page of processed traces, newest first; one row beyond the page says whether another follows.
   * With a search (`q`), only matching traces, each with `match: {field, snippet}` (search-snippet.ts).
   * With includeTotal, also `total`: the traces matching on every page (read beside the page).
   */
  async list(tenantId: string, projectId: string, query: TraceListQuery, limit: number, options: { includeTotal?: boolean } = {}): Promise<TraceListPage> {
    const cutoff = await contentCutoff(this.deps.sql, tenantId);
    const contentSinceMs = cutoff.projects[projectId] ?? cutoff.defaultMs;
    const filters = { ...storeFilters(query, limit + 1), contentSinceMs };
    // The total leaves out the cursor: it counts every page of the list, so it is the same on each.
    const { before: _before, limit: _limit, ...countFilters } = filters;
    const [page, total] = await Promise.all([
      this.page(tenantId, projectId, filters, limit, contentSinceMs),
      options.includeTotal ? countTraces(this.deps.ch, tenantId, projectId, countFilters) : Promise.resolve(undefined),
    ]);
    return total === undefined ? page : { ...page, total };
  }

  private async page(tenantId: string, projectId: string, filters: TraceListFilters, limit: number, contentSinceMs: number): Promise<TraceListPage> {
    const search = filters.search;
    if (!search) return listPage(await listTraces(this.deps.ch, tenantId, projectId, filters), limit, contentSinceMs);
    const page = listPage(await searchTraces(this.deps.ch, tenantId, projectId, { ...filters, search }), limit, contentSinceMs);
    const best = bestMatches(await searchMatchRows(this.deps.ch, tenantId, projectId, search, page.traces.map((t) => t.id)));
    return {
      ...page,
      traces: page.traces.map((t) => {
        const row = best.get(t.id);
        // A trace matched by its content always has such a row; null only if it was re-settled between the two reads.
        return { ...t, match: row ? snippetOf(row, search) : null };
      }),
    };
  }
}

export function traceService(deps: AppDeps): TraceService {
  return (deps.services.traces ??= new TraceService(deps));
}
