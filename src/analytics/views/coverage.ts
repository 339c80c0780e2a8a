/**
 * The window view's coverage block (window.coverage):
 * per capability, whether the project sends it at all and how many window traces carry it. The
 * rule for each capability is one row of docs/analytics.md "Coverage"; keep them in step.
 */
import { WRITTEN_BASES } from '../../cost/stored-cost.js';
import { aggregate, call, column, compare, inList, literal, nullCheck, select, selectItem, value, type Expr, type SelectItemNode, type SelectNode } from '../query/ast.js';
import { selectRows, viewTable, type ViewScope } from './view-sql.js';
import { CAPABILITIES, type CoverageBlock, type CoverageEntry } from './view-schemas.js';

export { CAPABILITIES };
export type Capability = (typeof CAPABILITIES)[number];
export type { CoverageBlock, CoverageEntry };

/** `estimated_cost_basis` is one decided at write time (the cost module's WRITTEN_BASES). */
function written(): Expr {
  return inList(column('estimated_cost_basis'), WRITTEN_BASES.map((basis) => value('String', basis)));
}

const notEmptyName = (name: string) => compare('!=', column(name), literal(''));

/**
 * Per-trace coverage counts, added to the window view's trace statement so they come out of the
 * same scan of trace.processed (its GROUPING SETS totals row holds the window's figures). The model-call
 * and tool counts were stored on each run at settling (clickhouse/005): no pass over generation
 * or tool rows.
 */
export function traceCoverageItems(): SelectItemNode[] {
  const countIf = (condition: Expr, alias: string) => selectItem(aggregate('count', null, condition), alias);
  return [
    countIf(compare('=', column('has_root'), literal(1)), 'cov_root_status'),
    countIf(nullCheck(column('root_duration_ms'), true), 'cov_root_duration'),
    countIf(notEmptyName('agent_name'), 'cov_agents'),
    countIf(compare('>', column('total_tokens'), literal(0)), 'cov_tokens'),
    countIf(call('notEmpty', column('models')), 'cov_model'),
    countIf(written(), 'cov_cost_basis'),
    selectItem(aggregate('sum', column('generations_with_provider'), null), 'cov_provider'),
    selectItem(aggregate('sum', column('generations'), null), 'cov_generations'),
    countIf(compare('>', column('tool_calls'), literal(0)), 'cov_tools'),
  ];
}

export interface TraceCoverageCounts {
  traces: number;
  cov_root_status: number;
  cov_root_duration: number;
  cov_agents: number;
  cov_tokens: number;
  cov_model: number;
  cov_cost_basis: number;
  cov_provider: number;
  cov_generations: number;
  cov_tools: number;
}

interface CapabilityRow {
  root_status: number;
  root_duration: number;
  agents: number;
  tokens: number;
  model: number;
  cost_basis: number;
}

/**
 * "Sends it at all" looks at every retained row of the project — but only for capabilities the
 * window did not already show: a capability observed in the window is sent, and reading the whole
 * project again would only confirm it. Existence needs no FINAL (any row that has the field
 * proves the project sends it), and the per-table probes stop at their first match.
 */
export function traceCapabilitiesStatement(): SelectNode {
  const max = (expr: Expr, alias: string) => selectItem(aggregate('max', expr, null), alias);
  return select({
    items: [
      max(column('has_root'), 'root_status'),
      max(nullCheck(column('root_duration_ms'), true), 'root_duration'),
      max(notEmptyName('agent_name'), 'agents'),
      max(compare('>', column('total_tokens'), literal(0)), 'tokens'),
      max(call('notEmpty', column('models')), 'model'),
      max(written(), 'cost_basis'),
    ],
    from: viewTable('event_trace_processed', { final: false }),
    where: null,
    groupBy: [],
    orderBy: [],
    limit: null,
    settings: [],
  });
}

/** One row if the project has any row of `name` (where `condition` holds), none otherwise. */
export function probeStatement(name: 'event_generation_completed' | 'event_tool_called', condition: Expr | null = null): SelectNode {
  return select({
    items: [selectItem(literal(1), 'found')],
    from: viewTable(name, { final: false }),
    where: condition,
    groupBy: [],
    orderBy: [],
    limit: value('UInt32', '1'),
    settings: [],
  });
}

/** The probe of capabilities(): a model call that names its provider. */
export function providerProbeStatement(): SelectNode {
  return probeStatement('event_generation_completed', notEmptyName('provider'));
}

async function capabilities(scope: ViewScope, observed: Record<Capability, number>): Promise<Record<Capability, boolean>> {
  const seen = (c: Capability) => observed[c] > 0;
  const traceKeys: Capability[] = ['root_status', 'root_duration', 'agents', 'tokens', 'model', 'cost_basis'];
  const [traceRows, providerRows, toolRows] = await Promise.all([
    traceKeys.every(seen) ? Promise.resolve([] as CapabilityRow[]) : selectRows<CapabilityRow>(scope, traceCapabilitiesStatement()),
    seen('provider') ? Promise.resolve([{ found: 1 }]) : selectRows<{ found: number }>(scope, providerProbeStatement()),
    seen('tools') ? Promise.resolve([{ found: 1 }]) : projectSendsTools(scope).then((sends) => (sends ? [{ found: 1 }] : [])),
  ]);
  const t = traceRows[0];
  const has = (c: Capability, value: unknown) => seen(c) || Number(value ?? 0) > 0;
  return {
    root_status: has('root_status', t?.root_status),
    root_duration: has('root_duration', t?.root_duration),
    agents: has('agents', t?.agents),
    tokens: has('tokens', t?.tokens),
    model: has('model', t?.model),
    provider: providerRows.length > 0,
    cost_basis: has('cost_basis', t?.cost_basis),
    tools: toolRows.length > 0,
  };
}

/** Whether any tool span of the project was ever stored (also agent_scorecard's lower-bound rule). */
export async function projectSendsTools(scope: ViewScope): Promise<boolean> {
  const rows = await selectRows<{ found: number }>(scope, probeStatement('event_tool_called'));
  return rows.length > 0;
}

/**
 * The block. `windowCounts` resolves to the traceCoverageItems() of the window's totals row
 * (undefined when the window has no trace). A capability the project never sent has a null window
 * entry.
 */
export async function coverageBlock(scope: ViewScope, windowCounts: Promise<TraceCoverageCounts | undefined>): Promise<CoverageBlock> {
  const traceCounts = await windowCounts;
  const tools = Number(traceCounts?.cov_tools ?? 0);
  const traces = Number(traceCounts?.traces ?? 0);
  const entry = (observed: number, eligible: number, isLowerBound = false): CoverageEntry => ({
    observed: Math.min(observed, eligible),
    eligible,
    is_lower_bound: isLowerBound,
  });
  const counts: Record<Capability, CoverageEntry> = {
    root_status: entry(Number(traceCounts?.cov_root_status ?? 0), traces),
    root_duration: entry(Number(traceCounts?.cov_root_duration ?? 0), traces),
    agents: entry(Number(traceCounts?.cov_agents ?? 0), traces),
    tokens: entry(Number(traceCounts?.cov_tokens ?? 0), traces),
    model: entry(Number(traceCounts?.cov_model ?? 0), traces),
    provider: entry(Number(traceCounts?.cov_provider ?? 0), Number(traceCounts?.cov_generations ?? 0)),
    cost_basis: entry(Number(traceCounts?.cov_cost_basis ?? 0), traces),
    // A trace without a tool span may still have used a tool its instrumentation did not record.
    tools: entry(tools, traces, true),
  };
  const observed = Object.fromEntries(CAPABILITIES.map((c) => [c, counts[c].observed])) as Record<Capability, number>;
  const capability = await capabilities(scope, observed);
  const windowEntries = Object.fromEntries(CAPABILITIES.map((c) => [c, capability[c] ? counts[c] : null])) as Record<Capability, CoverageEntry | null>;
  return { capability, window: windowEntries, window_traces: traces };
}
