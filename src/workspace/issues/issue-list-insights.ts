import type { AppDeps } from '../../app/app-deps.js';
import { traceAgentNames } from './issue-trace-agents.js';
import { OCCURRENCE_TREND_DAYS, type Issue } from './issue-schemas.js';

/**
 * The optional columns of the issue list (docs/issues.md "Triage columns"), computed for the page's
 * issues only and exactly from the stores:
 *
 * - agent_names: PostgreSQL knows which traces an issue's occurrences are in, ClickHouse which
 *   agent ran each trace (occurrences do not store it), so the page's distinct trace ids are looked
 *   up in the trace summaries by primary key. A trace deleted or past retention has no summary and
 *   adds no agent.
 * - occurrence_trend: occurrences per UTC day by occurred_at over the last OCCURRENCE_TREND_DAYS
 *   days, counted in PostgreSQL, zero-filled.
 */

const DAY_MS = 86_400_000;

export interface IssueListInsights {
  agents: boolean;
  trend: boolean;
}

/** The UTC dates of the trend window, oldest first, ending with `now`'s date. */
export function trendDates(now: Date): string[] {
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  return Array.from({ length: OCCURRENCE_TREND_DAYS }, (_, i) => new Date(today - (OCCURRENCE_TREND_DAYS - 1 - i) * DAY_MS).toISOString().slice(0, 10));
}

async function agentNamesOf(deps: AppDeps, tenantId: string, projectId: string, issueIds: string[]): Promise<Map<string, string[]>> {
  const pairs = await deps.sql<{ issue_id: string; trace_id: string }[]>`
    select distinct issue_id, trace_id from issue_occurrences
    where tenant_id = ${tenantId} and issue_id = any(${issueIds}::uuid[])`;
  const agentOf = await traceAgentNames(deps.ch, tenantId, projectId, [...new Set(pairs.map((p) => p.trace_id))]);
  const names = new Map<string, Set<string>>(issueIds.map((id) => [id, new Set()]));
  for (const p of pairs) {
    const agent = agentOf.get(p.trace_id);
    if (agent !== undefined) names.get(p.issue_id)?.add(agent);
  }
  return new Map([...names].map(([id, set]) => [id, [...set].sort()]));
}

async function trendsOf(deps: AppDeps, tenantId: string, issueIds: string[], now: Date): Promise<Map<string, { date: string; count: number }[]>> {
  const dates = trendDates(now);
  const from = `${dates[0]}T00:00:00Z`;
  const until = new Date(Date.parse(`${dates[dates.length - 1]}T00:00:00Z`) + DAY_MS).toISOString();
  const rows = await deps.sql<{ issue_id: string; day: string; n: number }[]>`
    select issue_id, to_char(occurred_at at time zone 'UTC', 'YYYY-MM-DD') as day, count(*)::int as n
    from issue_occurrences
    where tenant_id = ${tenantId} and issue_id = any(${issueIds}::uuid[])
      and occurred_at >= ${from}::timestamptz and occurred_at < ${until}::timestamptz
    group by 1, 2`;
  const counts = new Map<string, number>(rows.map((r) => [`${r.issue_id} ${r.day}`, r.n]));
  return new Map(issueIds.map((id) => [id, dates.map((date) => ({ date, count: counts.get(`${id} ${date}`) ?? 0 }))]));
}

/** The page's issues with the asked columns added. */
export async function withListInsights(deps: AppDeps, tenantId: string, projectId: string, issues: Issue[], asked: IssueListInsights, now = new Date()): Promise<Issue[]> {
  if (issues.length === 0 || (!asked.agents && !asked.trend)) return issues;
  const ids = issues.map((i) => i.id);
  const [agents, trends] = await Promise.all([
    asked.agents ? agentNamesOf(deps, tenantId, projectId, ids) : Promise.resolve(null),
    asked.trend ? trendsOf(deps, tenantId, ids, now) : Promise.resolve(null),
  ]);
  return issues.map((issue) => ({
    ...issue,
    ...(agents ? { agent_names: agents.get(issue.id) ?? [] } : {}),
    ...(trends ? { occurrence_trend: trends.get(issue.id) ?? [] } : {}),
  }));
}
