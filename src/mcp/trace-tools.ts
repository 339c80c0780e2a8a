import { freshnessOf } from '../ingest/freshness.js';
import { ValidationError } from '../platform/http/errors.js';
import { compileBodySchema, describeValidationError } from '../platform/http/validation.js';
import { TraceListQuery } from '../traces/trace-schemas.js';
import { traceService } from '../traces/trace-service.js';
import { toolInputSchema, type McpTool } from './mcp-tool.js';

/**
 * `search_traces`: the trace list's search (GET /api/projects/{id}/traces?q=, docs/search.md) as an
 * MCP tool. Same arguments as the REST query (q required), same answer: the page of traces, each
 * with `match: {field, snippet}`, `next_cursor` and how fresh the list is.
 */

const DEFAULT_LIMIT = 50;

/** The REST query schema with q required; the router checks only the top level, so the values are checked here. */
const argumentsSchema = { ...TraceListQuery, required: ['q'] };
const validateArguments = compileBodySchema(argumentsSchema, {});

export const searchTracesTool: McpTool = {
  name: 'search_traces',
  title: 'Search traces',
  description:
    'Find a project\'s traces by what was said in them: agent input and output, messages, tool names, arguments and results, errors, span names and attribute values, in any language. ' +
    'q: words are ANDed, "a phrase" in quotes, -word excludes, field:word searches one field (input, output, tool, error, name, attribute); case-insensitive, a word matches inside longer words, at least 2 characters each. ' +
    'Optional filters agent_name, has_error, thread_id, model (one of the models called), tool (one of the tools called), release, min_duration_ms/max_duration_ms, min_cost_usd/max_cost_usd (inclusive), ' +
    'start/end (ISO 8601), limit (default 50, at most 200) and cursor (next_cursor of the previous page); include_total=true adds total, the count of every matching trace. ' +
    'Returns {traces, next_cursor}; each trace has match {field, snippet}, the snippet HTML-escaped with the words in <mark>…</mark>.',
  inputSchema: toolInputSchema(
    TraceListQuery,
    // A search finds settled traces only (their text is indexed as they settle): include_unsettled has nothing to add.
    (Object.keys(TraceListQuery.properties) as (keyof TraceListQuery)[]).filter((key) => key !== 'include_unsettled'),
    ['q'],
  ),
  run: async ({ project_id: _projectId, ...args }, { deps, principal, project }) => {
    // The detail REST gives for the same query parameter (e.g. "limit: must be integer").
    if (!validateArguments(args)) throw new ValidationError(describeValidationError('body', validateArguments.errors));
    const a = args as TraceListQuery & { q: string };
    const freshness = freshnessOf(deps);
    const page = await traceService(deps).listFor(principal.tenantId, project.id, a, a.limit ?? DEFAULT_LIMIT);
    return { ...page, ...freshness };
  },
};
