/**
 * The window view: run latency, outcome
 * totals, coverage and cost of the traces that started in [start, endExclusive). Latency is the
 * root span's duration; outcomes follow docs/analytics.md "Run outcomes".
 */
import { computeCostObject, storedCostColumns, windowCost } from '../../cost/cost-object.js';
import { windowEcho } from '../query/window.js';
import { aggregate, aggregateOf, column, foreignColumns, orderItem, ref, select, selectItem, type SelectNode } from '../query/ast.js';
import { coverageBlock, traceCoverageItems, type TraceCoverageCounts } from './coverage.js';
import { bucketDates, bucketExpr, completeSeries } from './time-buckets.js';
import type { WindowedParams } from './view-params.js';
import {
  BY_DATE_WITH_TOTALS,
  byDate,
  isTotal,
  outcomeItems,
  quantilesOrNull,
  ratio,
  selectWithTotals,
  viewTable,
  windowWhere,
  type ViewDeps,
  type ViewScope,
} from './view-sql.js';
import type { WindowPayload } from './view-schemas.js';

export type { WindowPayload };

interface WindowRow extends TraceCoverageCounts {
  date: string;
  traces: number;
  failed_runs: number;
  root_status_known: number;
  root_absent: number;
  duration_known: number;
  latency_q: number[];
}

function latency(row: WindowRow | undefined) {
  const [p50, p95] = quantilesOrNull(row?.latency_q, Number(row?.duration_known ?? 0), 2);
  return { p50, p95 };
}

/** Per bucket and for the whole window: outcomes, latency, coverage counts, stored-cost columns. */
export function windowStatement(params: WindowedParams): SelectNode {
  return select({
    items: [
      selectItem(bucketExpr(params.granularity), 'date'),
      selectItem(isTotal('date'), 'is_total'),
      ...outcomeItems(),
      selectItem(aggregate('count', column('root_duration_ms'), null), 'duration_known'),
      selectItem(aggregateOf('quantilesExact', [column('root_duration_ms')], { levels: [0.5, 0.95] }), 'latency_q'),
      ...traceCoverageItems(),
    ],
    foreignColumns: [foreignColumns(storedCostColumns())],
    from: viewTable('event_trace_processed'),
    where: windowWhere(params.window),
    groupBy: [],
    groupingSets: BY_DATE_WITH_TOTALS,
    orderBy: [orderItem(ref('date'), 'ASC')],
    limit: null,
    settings: [],
  });
}

export async function windowView(deps: ViewDeps, tenantId: string, projectId: string, params: WindowedParams): Promise<WindowPayload> {
  const scope: ViewScope = { deps, tenantId, projectId };
  const { window, granularity } = params;
  // The cost module's stored-cost aggregates ride on this scan (its totals row is the window's
  // selection), so trace.processed is read once.
  const tracesQuery = selectWithTotals<WindowRow>(scope, windowStatement(params));
  const costQuery = tracesQuery.then((t) =>
    computeCostObject(
      { ch: deps.ch, tenantId, projectId, catalog: deps.catalog },
      { start: window.start, endExclusive: window.endExclusive, storedRows: t.totals ? [t.totals as unknown as Record<string, unknown>] : undefined },
    ),
  );
  const totalsOf = (t: Awaited<typeof tracesQuery>) => (t.rows.length > 0 ? t.totals : undefined);
  const [traces, coverage, cost] = await Promise.all([tracesQuery, coverageBlock(scope, tracesQuery.then(totalsOf)), costQuery]);
  const totals = totalsOf(traces);
  const known = Number(totals?.root_status_known ?? 0);
  const failed = Number(totals?.failed_runs ?? 0);
  return {
    window: windowEcho(window),
    latency: {
      granularity,
      points: completeSeries(
        bucketDates(window, granularity),
        byDate(traces.rows),
        (row, date) => ({ date, ...latency(row) }),
        (date) => ({ date, ...latency(undefined) }),
      ),
    },
    totals: {
      ...latency(totals),
      failed_runs: failed,
      root_status_known: known,
      root_absent: Number(totals?.root_absent ?? 0),
      traces: Number(totals?.traces ?? 0),
      error_rate: ratio(failed, known),
    },
    coverage,
    cost: windowCost(cost.total),
  };
}
