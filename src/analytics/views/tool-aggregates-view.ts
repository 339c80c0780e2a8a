/**
 * Tool aggregates: per tool, the
 * calls (tool.called rows) whose span started in [start, endExclusive), plus the volume series
 * and where the failures concentrate. docs/analytics.md "tool_aggregates" gives the element shapes
 * of volume, failing_volume and error_concentration.
 */
import { windowEcho } from '../query/window.js';
import { aggregate, aggregateOf, call, column, orderItem, ref, select, selectItem, type SelectNode } from '../query/ast.js';
import { bucketDates, bucketIndexExpr } from './time-buckets.js';
import type { WindowedParams } from './view-params.js';
import { quantilesOrNull, selectRows, viewTable, windowWhere, type ViewDeps, type ViewScope } from './view-sql.js';
import type { ErrorConcentration, ToolAggregatesPayload, ToolRow, VolumePoint } from './view-schemas.js';

/** Comparison rows answered at most (busiest tools); the volume totals still count every tool. */
export const MAX_TOOLS = 1000;

export type { ErrorConcentration, ToolAggregatesPayload, ToolRow, VolumePoint };

interface ToolQueryRow {
  tool: string;
  calls: number;
  errors: number;
  duration_q: number[];
  traces: number;
  output_tokens: number;
}

/**
 * One scan of the window's tool calls: the per-tool figures and, per tool, its calls and failing
 * calls per bucket as two arrays indexed like bucketDates (-Resample over the bucket's position:
 * no map is built per row).
 * Distinct traces count trace_id, a UUID in tool.called (migration 009) one-to-one with its text,
 * so counting the 16-byte values is the exact count of the trace ids.
 */
export function toolsStatement(params: WindowedParams): SelectNode {
  const buckets = bucketDates(params.window, params.granularity).length;
  const index = ref('bucket_index');
  const resample = { levels: [0, buckets, 1] };
  return select({
    with: [selectItem(bucketIndexExpr(params.window, params.granularity), 'bucket_index')],
    items: [
      selectItem(column('tool'), 'tool'),
      selectItem(aggregate('count', null, null), 'calls'),
      selectItem(aggregate('sum', column('error'), null), 'errors'),
      selectItem(aggregateOf('quantilesExact', [column('duration_ms')], { levels: [0.5, 0.95] }), 'duration_q'),
      selectItem(aggregate('uniqExact', column('trace_id'), null), 'traces'),
      selectItem(aggregate('sum', column('output_tokens'), null), 'output_tokens'),
      selectItem(aggregateOf('countResample', [index], resample), 'calls_by_bucket'),
      selectItem(aggregateOf('sumResample', [call('toUInt64', column('error')), index], resample), 'errors_by_bucket'),
    ],
    from: viewTable('event_tool_called'),
    where: windowWhere(params.window),
    groupBy: [ref('tool')],
    orderBy: [orderItem(ref('calls'), 'DESC'), orderItem(ref('tool'), 'ASC')],
    limit: null,
    settings: [],
  });
}

export async function toolAggregatesView(deps: ViewDeps, tenantId: string, projectId: string, params: WindowedParams): Promise<ToolAggregatesPayload> {
  const scope: ViewScope = { deps, tenantId, projectId };
  const { window, granularity } = params;
  const dates = bucketDates(window, granularity);
  // Every tool is read, since the volume series count all of them; the rows keep the first MAX_TOOLS.
  const allTools = await selectRows<ToolQueryRow & { calls_by_bucket: (number | string)[]; errors_by_bucket: (number | string)[] }>(scope, toolsStatement(params));
  const perTool = allTools.slice(0, MAX_TOOLS);

  const rows = perTool.map((t): ToolRow => {
    const calls = Number(t.calls);
    const errors = Number(t.errors);
    // Every row has at least one call, so both quantiles exist.
    const [p50, p95] = quantilesOrNull(t.duration_q, calls, 2) as number[];
    return { tool: t.tool, calls, errors, error_rate: errors / calls, p50, p95, traces: Number(t.traces), output_tokens: Number(t.output_tokens) };
  });
  const listed = new Set(rows.map((r) => r.tool));

  // Per bucket, every tool counts toward the bucket's value; the listed ones are also named, in
  // name order (the by_tool objects' key order).
  const volume = dates.map((date): VolumePoint => ({ date, value: 0, by_tool: {} }));
  const failing = dates.map((date): VolumePoint => ({ date, value: 0, by_tool: {} }));
  for (const t of [...allTools].sort((x, y) => x.tool.localeCompare(y.tool))) {
    for (let i = 0; i < dates.length; i++) {
      const calls = Number(t.calls_by_bucket[i]);
      const errors = Number(t.errors_by_bucket[i]);
      volume[i].value += calls;
      failing[i].value += errors;
      if (listed.has(t.tool) && calls > 0) volume[i].by_tool[t.tool] = calls;
      if (listed.has(t.tool) && errors > 0) failing[i].by_tool[t.tool] = errors;
    }
  }

  const allErrors = allTools.reduce((sum, t) => sum + Number(t.errors), 0);
  let running = 0;
  const error_concentration = rows
    .filter((r) => r.errors > 0)
    .sort((a, b) => b.errors - a.errors || a.tool.localeCompare(b.tool))
    .map((r): ErrorConcentration => {
      running += r.errors;
      return { tool: r.tool, errors: r.errors, share: r.errors / allErrors, cumulative_share: running / allErrors };
    });

  return {
    window: windowEcho(window),
    granularity,
    rows,
    volume,
    failing_volume: failing,
    error_concentration,
  };
}
