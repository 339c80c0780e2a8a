import { catalogResponse } from '../analytics/catalog.js';
import { mcpArgumentsToQueryBody } from '../analytics/query/mcp-body.js';
import { mcpQueryInputSchema } from '../analytics/query/query-shapes.js';
import { runAnalyticsQuery } from '../analytics/query/run.js';
import { runPresetView, viewDeps } from '../analytics/views/preset-views.js';
import { freshnessOf } from '../ingest/freshness.js';
import type { ViewName } from '../analytics/views/view-params.js';
import { ViewQuery } from '../analytics/views/view-schemas.js';
import { projectIdArgument, toolInputSchema, type McpTool } from './mcp-tool.js';
import { searchTracesTool } from './trace-tools.js';

/**
 * The MCP tools of project analytics (docs/mcp.md). Each is a thin adapter over the
 * service its REST route calls, so the structured result is the REST payload, byte for byte in
 * meaning, and a bad argument yields the REST detail text.
 */

const queryTool: McpTool = {
  name: 'query_project_analytics',
  title: 'Query project analytics',
  description:
    'Run an aggregate query over one analytics event of a project (trace.processed, generation.completed, tool.called, span.errored, issue.*), ' +
    'optionally grouped by fields or time buckets and joined with a second event. Call describe_project_analytics first for the fields. ' +
    'Returns {rows, truncated, window}; rows are keyed by the aliases you give. Large integers may be numeric strings.',
  // The REST body's schema under the MCP key spellings: one object, so the limits are the catalog's.
  inputSchema: mcpQueryInputSchema(projectIdArgument),
  run: async ({ project_id: _projectId, ...args }, { deps, principal, project }) =>
    runAnalyticsQuery({ ch: deps.ch, config: deps.config }, principal.tenantId, project.id, mcpArgumentsToQueryBody(args)),
};

const catalogTool: McpTool = {
  name: 'describe_project_analytics',
  title: 'Describe project analytics',
  description:
    'The analytics catalog of a project: every event with its dimensions (string fields), measures (numeric fields with their allowed aggregations) and cost measures, ' +
    'the filter operators, time buckets and limits that query_project_analytics accepts.',
  inputSchema: toolInputSchema(null),
  run: async () => catalogResponse(),
};

/**
 * Which of the views' REST query parameters each tool takes (ViewQuery, the REST route's own
 * schemas): a window, a window with an inclusive end instead, or none.
 */
const VIEW_ARGUMENTS = {
  required: toolInputSchema(ViewQuery, ['start', 'endExclusive', 'granularity'], ['start', 'endExclusive']),
  model: toolInputSchema(ViewQuery, ['start', 'end', 'endExclusive'], ['start']),
  none: toolInputSchema(ViewQuery, ['granularity']),
};

function viewTool(name: string, view: ViewName, title: string, description: string, window: keyof typeof VIEW_ARGUMENTS): McpTool {
  return {
    name,
    title,
    description,
    inputSchema: VIEW_ARGUMENTS[window],
    // The same answer as REST: the view's payload with how fresh its data is (read before it runs).
    run: async ({ project_id: _projectId, ...args }, { deps, principal, project }) => {
      const freshness = freshnessOf(deps);
      const payload = (await runPresetView(viewDeps(deps), principal.tenantId, project.id, view, args)) as unknown as Record<string, unknown>;
      return { ...payload, ...freshness };
    },
  };
}

export function mcpTools(): McpTool[] {
  return [
    catalogTool,
    queryTool,
    viewTool('get_project_analytics_window', 'window', 'Project analytics: window',
      'Latency percentiles over time, run totals (failed runs, error rate), data coverage per capability and the estimated cost of a window.', 'required'),
    viewTool('get_project_analytics_base', 'base', 'Project analytics: base series',
      'Time series of traces, errors, tokens and estimated cost (total and per model) over a window.', 'required'),
    viewTool('get_project_agent_scorecard', 'agent_scorecard', 'Project agent scorecard',
      'One row per agent over a window: traces, latency p50/p95, error rate, tools used, tokens and estimated cost.', 'required'),
    viewTool('get_project_tool_aggregates', 'tool_aggregates', 'Project tool aggregates',
      'One row per tool over a window: calls, errors, error rate, latency p50/p95, traces, output tokens; plus volume and error concentration.', 'required'),
    viewTool('get_project_model_scorecard', 'model_scorecard', 'Project model scorecard',
      'One row per model since start: traces, tokens, speed, whether it is priced and its estimated cost, with the overall cost object.', 'model'),
    viewTool('get_project_roi', 'roi', 'Project ROI',
      'Whether the project is connected, waiting for issues or populated; lifetime counts of agents, traces, issues and resolutions; and their series.', 'none'),
    searchTracesTool,
  ];
}
