import { Router } from 'express';
import type { AppDeps } from '../app/app-deps.js';
import { NotFoundError, ValidationError } from '../platform/http/errors.js';
import { defineRoute, projectForPrincipal } from '../app/route.js';
import { isOtelTraceId, isTraceUuid } from '../spans/trace-id.js';
import type { TraceDetailPage } from './trace-detail-build.js';
import { DEFAULT_SPAN_PAGE } from './trace-page.js';
import { traceService } from './trace-service.js';
import { freshnessOf } from '../ingest/freshness.js';
import { AgentNames, AgentNamesQuery, Trace, TraceDetailQuery, TraceList, TraceListQuery } from './trace-schemas.js';

/**
 * The traces API: GET /traces/{trace_id}, GET /traces/agent-names and
 * GET /projects/{project_id}/traces. Trace detail is built from the stored spans with
 * the same summarizeTrace the settler stores, so it is complete as soon as the spans are durable;
 * the work runs on the compute pool and the default form pages a huge trace's spans
 * (span_limit/span_cursor) instead of answering megabytes.
 */

const DEFAULT_SPANS_LIMIT = 100;
const DEFAULT_LIST_LIMIT = 50;

export function traceRoutes(deps: AppDeps): Router {
  const router = Router();
  const traces = traceService(deps);
  const TraceRef = deps.openapi.addSchema('Trace', Trace);
  const TraceListRef = deps.openapi.addSchema('TraceList', TraceList);

  // Registered before /traces/{trace_id} so the literal path wins.
  defineRoute<unknown, AgentNamesQuery>(router, deps, {
    method: 'get', path: '/traces/agent-names', tag: 'traces', scope: 'read',
    summary: 'Agent names seen in the processed traces of the tenant, sorted; narrowed to `project_id` when given (and always to the key\'s project when it is limited)',
    query: AgentNamesQuery,
    responses: { 200: { description: 'Agent names', schema: AgentNames } },
    handler: async ({ principal, query }) => {
      const projectId = query.project_id ? (await projectForPrincipal(deps, principal, query.project_id)).id : principal.projectId;
      return { agent_names: await traces.agentNames(principal.tenantId, projectId) };
    },
  });

  defineRoute<unknown, TraceDetailQuery>(router, deps, {
    method: 'get', path: '/traces/{trace_id}', tag: 'traces', scope: 'read',
    summary: 'One trace: the default detail payload, or with expand=context the context bundle (project_id required)',
    query: TraceDetailQuery,
    responses: { 200: { description: 'Trace detail (default form) or context bundle', schema: TraceRef } },
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
        // Its stored id: the query's may differ in letter case, and ClickHouse compares text.
        projectId = (await projectForPrincipal(deps, principal, query.project_id!)).id;
      }
      const explicitPage = query.span_limit !== undefined || query.span_cursor !== undefined;
      if (context && explicitPage) {
        throw new ValidationError('span_limit and span_cursor page the default form; the context bundle takes spans_limit and spans_offset');
      }
      const view = { includeAttributes: query.include_attributes ?? true, includeEvents: query.include_events ?? true };
      const limit = context ? (query.spans_limit ?? DEFAULT_SPANS_LIMIT) : (query.span_limit ?? DEFAULT_SPAN_PAGE);
      const page: TraceDetailPage = context
        ? { form: 'context', limit, offset: query.spans_offset ?? 0 }
        : { form: 'default', limit, cursor: query.span_cursor ?? null };
      const body = await traces.detailJson(principal.tenantId, projectId, id, { view, page, explicitPage });
      res.status(200).type('application/json').send(body);
      return undefined;
    },
  });

  defineRoute<unknown, TraceListQuery>(router, deps, {
    method: 'get', path: '/projects/{project_id}/traces', tag: 'traces', scope: 'read', projectParam: true,
    summary: 'Processed traces of a project, newest first, with cursor pagination and filters (agent, outcome, thread, model, tool, release, duration, cost, time); `q` searches their content (docs/search.md); `include_total=true` adds the count of matching traces',
    query: TraceListQuery,
    responses: { 200: { description: 'A page of traces', schema: TraceListRef } },
    handler: async ({ tenantId, project, query }) => {
      const limit = query.limit ?? DEFAULT_LIST_LIMIT;
      // Read before the list: the traces listed are at least as fresh as this says.
      const freshness = freshnessOf(deps);
      const page = await traces.listFor(tenantId, project.id, query, limit);
      return { ...page, ...freshness };
    },
  });

  return router;
}
