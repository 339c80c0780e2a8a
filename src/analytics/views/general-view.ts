/**
 * The general view (also the answer when `view` is omitted). It describes model calls — generation.completed rows —
 * over the `hours` before the anchor (docs/analytics.md "general").
 */
import { computeCostObject } from '../../cost/cost-object.js';
import { UNNAMED_MODEL } from '../../cost/stored-cost.js';
import { windowEcho } from '../query/window.js';
import { aggregate, aggregateOf, column, compare, literal, ref, select, selectItem, type SelectNode } from '../query/ast.js';
import { bucketDates, bucketExpr, completeSeries } from './time-buckets.js';
import type { GeneralParams } from './view-params.js';
import { byDate, isTotal, quantilesOrNull, selectRows, viewTable, windowWhere, type ViewDeps, type ViewScope } from './view-sql.js';
import type { GeneralPayload, Percentiles, SeriesPoint } from './view-schemas.js';

export const TOP_MODELS = 10;

export type { GeneralPayload, Percentiles, SeriesPoint };

interface GenerationRow {
  date: string;
  requests: number;
  errors: number;
  speed: number | null;
  speed_known: number;
  speed_q: number[];
  prompt_tokens: number;
  completion_tokens: number;
}

function percentiles(row: GenerationRow | undefined): Percentiles {
  const [p50, p95, p99] = quantilesOrNull(row?.speed_q, row?.speed_known ?? 0, 3);
  return { p50, p95, p99 };
}

/** The window's model calls per bucket, per model and in all (GROUPING SETS). */
export function generalStatement(params: GeneralParams): SelectNode {
  const sum = (name: string, alias: string) => selectItem(aggregate('sum', column(name), null), alias);
  const groupedBy = (alias: string) => selectItem(compare('=', isTotal(alias), literal(0)), `by_${alias}`);
  return select({
    items: [
      selectItem(bucketExpr(params.granularity), 'date'),
      selectItem(column('model'), 'model'),
      groupedBy('date'),
      groupedBy('model'),
      selectItem(aggregate('count', null, null), 'requests'),
      sum('error', 'errors'),
      selectItem(aggregate('avg', column('tps'), null), 'speed'),
      selectItem(aggregate('count', column('tps'), null), 'speed_known'),
      selectItem(aggregateOf('quantilesExact', [column('tps')], { levels: [0.5, 0.95, 0.99] }), 'speed_q'),
      sum('input_tokens', 'prompt_tokens'),
      sum('output_tokens', 'completion_tokens'),
    ],
    from: viewTable('event_generation_completed'),
    where: windowWhere(params.window),
    groupBy: [],
    groupingSets: [[ref('date')], [ref('model')], []],
    orderBy: [],
    limit: null,
    settings: [],
  });
}

export async function generalView(deps: ViewDeps, tenantId: string, projectId: string, params: GeneralParams): Promise<GeneralPayload> {
  const scope: ViewScope = { deps, tenantId, projectId };
  const { window, granularity } = params;
  // One scan of the window's model calls answers the series (per bucket), top_models (per model)
  // and the totals (whole window): GROUPING SETS, told apart by grouping() (1 = aggregated away).
  const [grouped, cost] = await Promise.all([
    selectRows<GenerationRow & { model: string; by_date: number; by_model: number }>(scope, generalStatement(params)),
    computeCostObject({ ch: deps.ch, tenantId, projectId, catalog: deps.catalog }, { start: window.start, endExclusive: window.endExclusive }),
  ]);
  const series = {
    rows: grouped.filter((r) => Number(r.by_date) === 1).sort((a, b) => a.date.localeCompare(b.date)),
    totals: grouped.find((r) => Number(r.by_date) === 0 && Number(r.by_model) === 0),
  };
  const models = grouped
    .filter((r) => Number(r.by_model) === 1)
    .map((r) => ({ model: r.model, count: Number(r.requests) }))
    .sort((a, b) => b.count - a.count || (a.model < b.model ? -1 : a.model > b.model ? 1 : 0))
    .slice(0, TOP_MODELS);

  const dates = bucketDates(window, granularity);
  const rows = byDate(series.rows);
  const point = (pick: (row: GenerationRow) => number) =>
    completeSeries(dates, rows, (row, date) => ({ date, value: pick(row) }), (date) => ({ date, value: 0 }));
  const totals = series.rows.length > 0 ? series.totals : undefined;
  return {
    window: windowEcho(window),
    requests: point((r) => Number(r.requests)),
    errors: point((r) => Number(r.errors)),
    speed: point((r) => (r.speed === null ? 0 : Number(r.speed))),
    prompt_tokens: point((r) => Number(r.prompt_tokens)),
    completion_tokens: point((r) => Number(r.completion_tokens)),
    top_models: models.map((m) => ({ model: m.model === '' ? UNNAMED_MODEL : m.model, count: Number(m.count) })),
    speed_percentiles_timeseries: completeSeries(
      dates,
      rows,
      (row, date) => ({ date, ...percentiles(row) }),
      (date) => ({ date, ...percentiles(undefined) }),
    ),
    totals: {
      ...cost.total.cost,
      requests: Number(totals?.requests ?? 0),
      errors: Number(totals?.errors ?? 0),
      avg_speed: totals && totals.speed !== null && Number(totals.speed_known) > 0 ? Number(totals.speed) : null,
      prompt_tokens: Number(totals?.prompt_tokens ?? 0),
      completion_tokens: Number(totals?.completion_tokens ?? 0),
      speed_percentiles: percentiles(totals),
    },
  };
}
