/**
 * The agent scorecard: one row per
 * agent_name of the traces that started in [start, endExclusive), busiest first
 * (docs/analytics.md "agent_scorecard").
 */
import { computeCostObject, scorecardCost, storedCostColumns } from '../../cost/cost-object.js';
import { windowEcho } from '../query/window.js';
import type { WindowedParams } from './view-params.js';
import { projectSendsTools } from './coverage.js';
import { aggregate, aggregateOf, column, foreignColumns, orderItem, ref, select, selectItem, type SelectNode } from '../query/ast.js';
import { outcomeItems, quantilesOrNull, ratio, selectRows, viewTable, windowWhere, type ViewDeps, type ViewScope } from './view-sql.js';
import type { AgentScorecardPayload, AgentScorecardRow } from './view-schemas.js';

/** Rows answered at most; the cost module keeps the same busiest agents (by traces). */
export const MAX_AGENTS = 1000;

export type { AgentScorecardPayload, AgentScorecardRow };

interface AgentRow {
  agent: string;
  traces: number;
  failed_runs: number;
  root_status_known: number;
  root_absent: number;
  duration_known: number;
  latency_q: number[];
  tokens: number;
}

/** Per agent of the window's traces, busiest first: outcomes, latency, tokens, stored-cost columns. */
export function agentsStatement(params: WindowedParams): SelectNode {
  return select({
    items: [
      selectItem(column('agent_name'), 'agent'),
      ...outcomeItems(),
      selectItem(aggregate('count', column('root_duration_ms'), null), 'duration_known'),
      selectItem(aggregateOf('quantilesExact', [column('root_duration_ms')], { levels: [0.5, 0.95] }), 'latency_q'),
      selectItem(aggregate('sum', column('total_tokens'), null), 'tokens'),
    ],
    foreignColumns: [foreignColumns(storedCostColumns())],
    from: viewTable('event_trace_processed'),
    where: windowWhere(params.window),
    groupBy: [ref('agent')],
    orderBy: [orderItem(ref('traces'), 'DESC'), orderItem(ref('agent'), 'ASC')],
    limit: null,
    settings: [],
  });
}

/** Distinct tools each agent called in the window. */
export function agentToolsStatement(params: WindowedParams): SelectNode {
  return select({
    items: [selectItem(column('agent_name'), 'agent'), selectItem(aggregate('uniqExact', column('tool'), null), 'tools_used')],
    from: viewTable('event_tool_called'),
    where: windowWhere(params.window),
    groupBy: [ref('agent')],
    orderBy: [],
    limit: null,
    settings: [],
  });
}

export async function agentScorecardView(deps: ViewDeps, tenantId: string, projectId: string, params: WindowedParams): Promise<AgentScorecardPayload> {
  const scope: ViewScope = { deps, tenantId, projectId };
  const { window } = params;
  // One scan of trace.processed answers the rows and the cost module's stored-cost aggregates per
  // agent. Every agent is read (the cost module ranks all of them to keep its MAX_AGENTS busiest);
  // the rows keep the first MAX_AGENTS in this order.
  const agentsQuery = selectRows<AgentRow & Record<string, unknown>>(scope, agentsStatement(params));
  const [allAgents, tools, cost] = await Promise.all([
    agentsQuery,
    selectRows<{ agent: string; tools_used: number }>(scope, agentToolsStatement(params)),
    agentsQuery.then((rows) =>
      computeCostObject(
        { ch: deps.ch, tenantId, projectId, catalog: deps.catalog },
        { start: window.start, endExclusive: window.endExclusive, groupBy: 'agent', maxGroups: MAX_AGENTS, storedRows: rows.map((r) => ({ ...r, cg_0: r.agent })) },
      ),
    ),
  ]);
  const agents = allAgents.slice(0, MAX_AGENTS);
  const toolsByAgent = new Map(tools.map((t) => [t.agent, Number(t.tools_used)]));
  const costByAgent = new Map(cost.groups.map((g) => [g.group, g.detail]));
  // Tool calls in the window prove the project sends them; only otherwise is the project probed.
  const sendsTools = tools.length > 0 || (await projectSendsTools(scope));
  const rows = agents.map((a): AgentScorecardRow => {
    const [p50, p95] = quantilesOrNull(a.latency_q, Number(a.duration_known), 2);
    const known = Number(a.root_status_known);
    const detail = costByAgent.get(a.agent);
    return {
      agent: a.agent,
      traces: Number(a.traces),
      p50,
      p95,
      error_rate: ratio(Number(a.failed_runs), known),
      root_status_known: known,
      tools_used: toolsByAgent.get(a.agent) ?? 0,
      // A floor when the project sends no tool spans at all, or when some of the agent's runs
      // arrived without their root span (the rest of such a trace, and its tool calls, may be missing).
      tools_used_is_lower_bound: !sendsTools || Number(a.root_absent) > 0,
      tokens: Number(a.tokens),
      ...(detail
        ? scorecardCost(detail)
        : { cost: null, cost_is_lower_bound: true, cost_source: 'query_time' as const, cost_lower_bound_reasons: [], model_breakdown_truncated: true }),
    };
  });
  return { window: windowEcho(window), rows };
}
