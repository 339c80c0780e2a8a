/**
 * The ROI view (its state is connect | waiting | populated). It takes no window: counts are lifetime (every retained
 * trace, every issue of the project) and the series cover the retention period ending now
 * (docs/analytics.md "roi").
 */
import { artifactIterationsByDay } from '../../workspace/artifacts/artifact-store.js';
import { windowEcho } from '../query/window.js';
import { aggregate, call, column, compare, inList, literal, orderItem, ref, select, selectItem, value, type SelectNode } from '../query/ast.js';
import { bucketDates, bucketExpr, bucketStart, completeSeries, dateText } from './time-buckets.js';
import type { RoiParams } from './view-params.js';
import { isUuid } from '../../platform/uuid.js';
import { BY_DATE_WITH_TOTALS, byDate, isTotal, selectRows, selectWithTotals, viewTable, windowWhere, type ViewDeps, type ViewScope } from './view-sql.js';
import type { RoiPayload } from './view-schemas.js';

export type RoiState = RoiPayload['state'];

type Series = { date: string; value: number }[];

export type { RoiPayload };

const DAY_SECONDS = 86_400;

interface TraceBucket {
  date: string;
  traces: number;
  errors: number;
  agents: number;
}

export function roiState(lifetimeTraces: number, issues: number): RoiState {
  if (issues > 0) return 'populated';
  return lifetimeTraces > 0 ? 'waiting' : 'connect';
}

/**
 * Every retained trace per bucket and in all. No window filter: the totals row is the lifetime
 * figure; buckets before the series are dropped.
 */
export function roiTracesStatement(params: RoiParams): SelectNode {
  const agent = column('agent_name');
  return select({
    items: [
      selectItem(bucketExpr(params.granularity), 'date'),
      selectItem(isTotal('date'), 'is_total'),
      selectItem(aggregate('count', null, null), 'traces'),
      selectItem(aggregate('count', null, compare('>', column('error_count'), literal(0))), 'errors'),
      selectItem(aggregate('uniqExact', agent, compare('!=', agent, literal(''))), 'agents'),
    ],
    from: viewTable('event_trace_processed'),
    where: null,
    groupBy: [],
    groupingSets: BY_DATE_WITH_TOTALS,
    orderBy: [orderItem(ref('date'), 'ASC')],
    limit: null,
    settings: [],
  });
}

const ISSUE_EVENTS = ['issue.created', 'issue.resolved', 'issue.dismissed'] as const;

/** Issue events of the window per bucket and name. */
export function issueEventsStatement(params: RoiParams): SelectNode {
  return select({
    items: [selectItem(bucketExpr(params.granularity), 'date'), selectItem(column('name'), 'name'), selectItem(aggregate('count', null, null), 'events')],
    from: viewTable('event_issue'),
    where: windowWhere(params.window, inList(column('name'), ISSUE_EVENTS.map((name) => value('String', name)))),
    groupBy: [ref('date'), ref('name')],
    orderBy: [],
    limit: null,
    settings: [],
  });
}

/** Each resolution of the window with its bucket and time, for the days it took. */
export function resolutionsStatement(params: RoiParams): SelectNode {
  return select({
    items: [selectItem(bucketExpr(params.granularity), 'date'), selectItem(column('issue_id'), 'issue_id'), selectItem(call('toString', column('timestamp')), 'resolved_at')],
    from: viewTable('event_issue'),
    where: windowWhere(params.window, compare('=', column('name'), value('String', 'issue.resolved'))),
    groupBy: [],
    orderBy: [],
    limit: null,
    settings: [],
  });
}

export async function roiView(deps: ViewDeps, tenantId: string, projectId: string, params: RoiParams): Promise<RoiPayload> {
  const scope: ViewScope = { deps, tenantId, projectId };
  const { window, granularity } = params;
  const [traces, issueEvents, resolutions, issueCounts, iterations] = await Promise.all([
    selectWithTotals<TraceBucket>(scope, roiTracesStatement(params)),
    selectRows<{ date: string; name: string; events: number }>(scope, issueEventsStatement(params)),
    selectRows<{ date: string; issue_id: string; resolved_at: string }>(scope, resolutionsStatement(params)),
    deps.sql<{ issues: number; resolved: number }[]>`
      select count(*)::int as issues, (count(*) filter (where status = 'resolved'))::int as resolved
      from issues where tenant_id = ${tenantId} and project_id = ${projectId}`,
    artifactIterationsByDay(deps.sql, tenantId, projectId, window.start, window.endExclusive),
  ]);

  const dates = bucketDates(window, granularity);
  const series = (values: ReadonlyMap<string, number>): Series =>
    completeSeries(dates, values, (value, date) => ({ date, value }), (date) => ({ date, value: 0 }));
  const traceRows = byDate(traces.rows);
  const eventsOf = (name: string) => new Map(issueEvents.filter((e) => e.name === name).map((e) => [e.date, Number(e.events)]));

  const iterationsByBucket = new Map<string, number>();
  for (const day of iterations) {
    const key = dateText(bucketStart(new Date(`${day.date}T00:00:00Z`), granularity));
    iterationsByBucket.set(key, (iterationsByBucket.get(key) ?? 0) + day.value);
  }

  const createdAt = await issueCreationTimes(deps, tenantId, projectId, [...new Set(resolutions.map((r) => r.issue_id))]);
  const spans = new Map<string, { days: number; n: number }>();
  for (const r of resolutions) {
    const created = createdAt.get(r.issue_id);
    if (created === undefined) continue; // the issue was deleted with its history
    const resolvedMs = Date.parse(`${r.resolved_at.replace(' ', 'T')}Z`);
    const acc = spans.get(r.date) ?? { days: 0, n: 0 };
    acc.days += Math.max(0, resolvedMs - created) / 1000 / DAY_SECONDS;
    acc.n += 1;
    spans.set(r.date, acc);
  }

  const lifetimeTraces = Number(traces.rows.length > 0 ? (traces.totals?.traces ?? 0) : 0);
  const counts = issueCounts[0] ?? { issues: 0, resolved: 0 };
  return {
    window: windowEcho(window),
    state: roiState(lifetimeTraces, counts.issues),
    counts: {
      agents: Number(traces.rows.length > 0 ? (traces.totals?.agents ?? 0) : 0),
      lifetime_traces: lifetimeTraces,
      issues: counts.issues,
      resolved: counts.resolved,
    },
    base: {
      caught: series(eventsOf('issue.created')),
      resolved: series(eventsOf('issue.resolved')),
      dismissed: series(eventsOf('issue.dismissed')),
      traces: series(new Map([...traceRows].map(([date, row]) => [date, Number(row.traces)]))),
      errors: series(new Map([...traceRows].map(([date, row]) => [date, Number(row.errors)]))),
      artifact_iterations: series(iterationsByBucket),
      resolution_days: series(new Map([...spans].map(([date, s]) => [date, s.days / s.n]))),
    },
  };
}

/**
 * created_at (epoch ms) of the given issues of the project. Ids are compared as uuid, so the issues'
 * primary key finds them; an id that is no UUID names no issue and is left out before the cast.
 */
async function issueCreationTimes(deps: ViewDeps, tenantId: string, projectId: string, issueIds: string[]): Promise<Map<string, number>> {
  const ids = issueIds.filter(isUuid);
  if (ids.length === 0) return new Map();
  const rows = await deps.sql<{ id: string; created_at: Date }[]>`
    select id::text as id, created_at from issues
    where tenant_id = ${tenantId} and project_id = ${projectId} and id = any(${ids}::uuid[])`;
  return new Map(rows.map((r) => [r.id, r.created_at.getTime()]));
}

