import type { Sql } from 'postgres';
import { runAnalyticsQuery } from '../../../src/analytics/query/run.js';
import { runPresetView } from '../../../src/analytics/views/preset-views.js';
import type { ViewName } from '../../../src/analytics/views/view-params.js';
import type { ClickHouseStore } from '../../../src/platform/clickhouse/clickhouse.js';
import { GOLDEN_CASES } from '../../golden/analytics-query/cases.js';
import { iso, viewsOverDataset } from '../analytics-views/dataset.js';

/**
 * Every preset view (those named in `only`, default all) and every golden DSL query over the
 * analytics-views data set's window, answered from `ch`: what a migration test compares before and
 * after a migration, and with a current installation.
 */
export async function datasetAnswers(
  ch: ClickHouseStore,
  sql: Sql,
  scope: { tenantId: string; projectId: string; base: Date },
  only?: readonly ViewName[],
): Promise<Record<string, unknown>> {
  const { window: W, now, views } = viewsOverDataset(scope.base);
  const out: Record<string, unknown> = {};
  for (const [view, params] of views.filter(([v]) => !only || only.includes(v))) {
    out[`view ${view}`] = await runPresetView({ ch, sql }, scope.tenantId, scope.projectId, view, params, now);
  }
  for (const [name, body] of Object.entries(GOLDEN_CASES)) {
    const windowed = { ...body, start: iso(W.start), end_exclusive: iso(W.endExclusive) };
    out[`query ${name}`] = await runAnalyticsQuery({ ch, config: { queryTimeoutSeconds: 15 } }, scope.tenantId, scope.projectId, windowed);
  }
  return out;
}
