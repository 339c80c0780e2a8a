/**
 * The base view: per-bucket series of traces,
 * run outcomes and span errors, tokens and cost over [start, endExclusive). Every series counts a
 * trace in the bucket of its start (trace.processed timestamp), so the series add up to one
 * another (docs/analytics.md "base").
 */
import { emptyPartial } from '../../cost/cost-engine.js';
import { computeCostObject, costByModel, resolveCatalog, storedCostColumns, resolveLimits, type CostDetail } from '../../cost/cost-object.js';
import { summarize } from '../../cost/cost-summary.js';
import { windowEcho } from '../query/window.js';
import { aggregate, column, foreignColumns, orderItem, ref, select, selectItem, type SelectNode } from '../query/ast.js';
import { bucketDates, bucketExpr, completeSeries } from './time-buckets.js';
import type { WindowedParams } from './view-params.js';
import { byDate, outcomeItems, selectRows, viewTable, windowWhere, type ViewDeps, type ViewScope } from './view-sql.js';
import type { BasePayload } from './view-schemas.js';

export type { BasePayload };

interface BaseRow {
  date: string;
  traces: number;
  failed_runs: number;
  root_status_known: number;
  root_absent: number;
  span_errors: number;
  input_tokens: number;
  output_tokens: number;
}

/** Per bucket of the window's traces: the series and the cost module's stored-cost columns. */
export function baseStatement(params: WindowedParams): SelectNode {
  return select({
    items: [
      selectItem(bucketExpr(params.granularity), 'date'),
      ...outcomeItems(),
      selectItem(aggregate('sum', column('error_count'), null), 'span_errors'),
      selectItem(aggregate('sum', column('input_tokens'), null), 'input_tokens'),
      selectItem(aggregate('sum', column('output_tokens'), null), 'output_tokens'),
    ],
    foreignColumns: [foreignColumns(storedCostColumns())],
    from: viewTable('event_trace_processed'),
    where: windowWhere(params.window),
    groupBy: [ref('date')],
    orderBy: [orderItem(ref('date'), 'ASC')],
    limit: null,
    settings: [],
  });
}

export async function baseView(deps: ViewDeps, tenantId: string, projectId: string, params: WindowedParams): Promise<BasePayload> {
  const scope: ViewScope = { deps, tenantId, projectId };
  const { window, granularity } = params;
  const catalog = await resolveCatalog(deps.catalog);
  // One scan of trace.processed answers the series and the cost module's stored-cost aggregates
  // per bucket (the same groups as its { bucket } grouping: bucketExpr is its bucket expression).
  const rows = await selectRows<BaseRow & Record<string, unknown>>(scope, baseStatement(params));
  const cost = await computeCostObject(
    { ch: deps.ch, tenantId, projectId, catalog },
    { start: window.start, endExclusive: window.endExclusive, groupBy: { bucket: granularity }, storedRows: rows.map((r) => ({ ...r, cg_0: r.date })) },
  );

  const dates = bucketDates(window, granularity);
  const byBucket = byDate(rows);
  const costs = new Map(cost.groups.map((g) => [g.group, g.detail]));
  // A bucket without traces has the cost object of nothing: $0, fully priced, stored.
  const empty: CostDetail = summarize(emptyPartial(), { catalog, limits: resolveLimits(), modelRollupTruncated: false });
  const costOf = (date: string) => costs.get(date) ?? empty;

  return {
    window: windowEcho(window),
    traces: completeSeries(dates, byBucket, (r, date) => ({ date, value: Number(r.traces) }), (date) => ({ date, value: 0 })),
    errors: completeSeries(
      dates,
      byBucket,
      (r, date) => ({
        date,
        span_errors: Number(r.span_errors),
        failed_runs: Number(r.failed_runs),
        root_status_known: Number(r.root_status_known),
        root_absent: Number(r.root_absent),
        traces: Number(r.traces),
      }),
      (date) => ({ date, span_errors: 0, failed_runs: 0, root_status_known: 0, root_absent: 0, traces: 0 }),
    ),
    tokens: completeSeries(
      dates,
      byBucket,
      (r, date) => ({ date, input_tokens: Number(r.input_tokens), output_tokens: Number(r.output_tokens) }),
      (date) => ({ date, input_tokens: 0, output_tokens: 0 }),
    ),
    cost: dates.map((date) => {
      const detail = costOf(date);
      return { date, traces: detail.traces, ...detail.cost };
    }),
    cost_by_model: dates.map((date) => costByModel(date, costOf(date))),
    cost_by_model_source: 'query_time',
    cost_by_model_coverage: cost.total.attribution.coverage,
  };
}
