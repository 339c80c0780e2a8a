/**
 * The model scorecard: the window's
 * cost object with its attribution coverage, and one row per model. Tokens and speed come from the
 * model calls (generation.completed) that started in the window; `traces` counts the window's
 * traces that called the model, from trace.processed `models` (docs/analytics.md "model_scorecard").
 */
import { computeModelScorecardCost, storedCostColumns, storedModelCostsColumn, storedModelCostsOf } from '../../cost/cost-object.js';
import { UNNAMED_MODEL } from '../../cost/stored-cost.js';
import { windowEcho } from '../query/window.js';
import type { ModelScorecardParams } from './view-params.js';
import { aggregate, call, column, compare, foreignColumns, literal, ref, select, selectItem, type SelectNode } from '../query/ast.js';
import { selectRows, viewTable, windowWhere, type ViewDeps, type ViewScope } from './view-sql.js';
import type { ModelScorecardPayload, ModelScorecardRow } from './view-schemas.js';

export type { ModelScorecardPayload, ModelScorecardRow };

interface GenerationByModel {
  model: string;
  input_tokens: number;
  output_tokens: number;
  avg_speed: number | null;
  providers: string[];
  unnamed_traces: number;
}

/** The window's runs: how many, runs per model (a map summed as a map), the cost module's stored columns. */
export function modelRunsStatement(params: ModelScorecardParams): SelectNode {
  const models = column('models');
  const onePerModel = call('mapFromArrays', models, call('arrayWithConstant', call('length', models), call('toUInt64', literal(1))));
  return select({
    items: [selectItem(aggregate('count', null, null), 'traces'), selectItem(aggregate('sumMap', onePerModel, null), 'runs_by_model')],
    foreignColumns: [foreignColumns(storedCostColumns()), foreignColumns(storedModelCostsColumn())],
    from: viewTable('event_trace_processed'),
    where: windowWhere(params.window),
    groupBy: [],
    orderBy: [],
    limit: null,
    settings: [],
  });
}

/** The window's model calls per model: tokens, speed, providers, and the traces of unnamed calls. */
export function modelCallsStatement(params: ModelScorecardParams): SelectNode {
  const sum = (name: string) => selectItem(aggregate('sum', column(name), null), name);
  return select({
    items: [
      selectItem(column('model'), 'model'),
      sum('input_tokens'),
      sum('output_tokens'),
      selectItem(aggregate('avg', column('tps'), null), 'avg_speed'),
      selectItem(aggregate('groupUniqArray', column('provider'), null), 'providers'),
      selectItem(aggregate('uniqExact', column('trace_id'), compare('=', column('model'), literal(''))), 'unnamed_traces'),
    ],
    from: viewTable('event_generation_completed'),
    where: windowWhere(params.window),
    groupBy: [ref('model')],
    orderBy: [],
    limit: null,
    settings: [],
  });
}

export async function modelScorecardView(deps: ViewDeps, tenantId: string, projectId: string, params: ModelScorecardParams): Promise<ModelScorecardPayload> {
  const scope: ViewScope = { deps, tenantId, projectId };
  const { window } = params;
  // One pass over the window's trace.processed rows answers the runs per model and both of the
  // cost module's stored aggregates (its stored-cost row and the stored dollars per model): FINAL
  // there merges every fresh part, since settle rounds write runs from the whole key range, so
  // each extra pass would pay that merge again.
  // Runs per model and the stored dollars are summed as maps: sumMap over a Map costs about half of
  // sumMap over key and value arrays here.
  const tracesQuery = selectRows<Record<string, unknown> & { runs_by_model: Record<string, number | string> }>(scope, modelRunsStatement(params));
  const [generations, [tracesRow], cost] = await Promise.all([
    selectRows<GenerationByModel>(scope, modelCallsStatement(params)),
    tracesQuery,
    tracesQuery.then(([row]) =>
      computeModelScorecardCost(
        { ch: deps.ch, tenantId, projectId, catalog: deps.catalog },
        { start: window.start, endExclusive: window.endExclusive, stored: { row, byModel: storedModelCostsOf(row) } },
      ),
    ),
  ]);
  const tracesByModel = new Map(Object.entries(tracesRow.runs_by_model).map(([model, runs]) => [model, Number(runs)]));
  const rows = generations.map((g): ModelScorecardRow => {
    const input = Number(g.input_tokens);
    const output = Number(g.output_tokens);
    // The catalog is asked about every provider the model was called through ('' = not reported).
    const { priced, estimated_cost_usd } = cost.rowCost(g.model, g.providers);
    return {
      model: g.model === '' ? UNNAMED_MODEL : g.model,
      traces: g.model === '' ? Number(g.unnamed_traces) : (tracesByModel.get(g.model) ?? 0),
      tokens: input + output,
      input_tokens: input,
      output_tokens: output,
      avg_speed: g.avg_speed === null ? null : Number(g.avg_speed),
      priced,
      estimated_cost_usd,
    };
  });
  rows.sort((a, b) => b.tokens - a.tokens || a.model.localeCompare(b.model));
  return {
    window: windowEcho(window),
    ...cost.cost,
    cost_attribution_coverage: cost.cost_attribution_coverage,
    cost_attribution_source: cost.cost_attribution_source,
    rows,
  };
}
