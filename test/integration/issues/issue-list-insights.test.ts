/**
 * The issue list's optional triage columns (GET /projects/{id}/issues?include_agents=true&include_trend=true):
 * failing runs of two agents sent over OTLP/HTTP, some of them days old, open two issues; agent_names
 * lists the agents of the traces behind each issue's occurrences, occurrence_trend counts them per
 * UTC day over the last 14 days (an older occurrence outside it), both as the occurrences and the
 * traces say. Another tenant with the same failure and other agents never shows through; without
 * the flags the list answers the issue record as before.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { traceAgentNames } from '../../../src/workspace/issues/issue-trace-agents.js';
import { sendRuns, type RunSpec } from '../../helpers/otlp-json.js';
import { startTestService, type TestService } from '../../helpers/service.js';
import { waitFor } from '../ingest/otlp-client.js';

const DAY = 86_400_000;

let svc: TestService;
let projectId: string;
let other: { tenantId: string; adminKey: string; projectId: string };

interface ListedIssue {
  id: string;
  title: string;
  occurrence_count: number;
  agent_names?: string[];
  occurrence_trend?: { date: string; count: number }[];
}

/** A run whose tool `tool` fails, `daysAgo` days before now. */
function failing(agent: string, tool: string, daysAgo: number): RunSpec {
  return { start: new Date(Date.now() - daysAgo * DAY - 5 * 60_000), agent, generations: [{ model: 'gpt-4o-mini', input: 10, output: 2 }], tools: [{ name: tool, error: true }] };
}

async function issuesOf(project: string, params: string, key = svc.adminKey): Promise<ListedIssue[]> {
  const res = await svc.call('GET', `/projects/${project}/issues?status=open&${params}`, { key });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.issues;
}

beforeAll(async () => {
  svc = await startTestService({ TRACE_SETTLE_MS: '100' });
  projectId = (await svc.newProject('insights')).id;
  await sendRuns(svc.url, svc.adminKey, projectId, [
    failing('support', 'refund_lookup', 0),
    failing('support', 'refund_lookup', 0),
    failing('billing', 'refund_lookup', 2),
    failing('support', 'refund_lookup', 20),
    failing('billing', 'send_invoice', 5),
  ]);
  const tenant = await svc.newTenant('insights-other');
  other = { tenantId: tenant.tenantId, adminKey: tenant.adminKey, projectId: (await svc.newProject('insights other', tenant.adminKey)).id };
  await sendRuns(svc.url, other.adminKey, other.projectId, [failing('intruder', 'refund_lookup', 0), failing('intruder', 'send_invoice', 1)]);
  const occurrences = async (project: string, key: string, expected: number) =>
    (await issuesOf(project, 'limit=200', key)).reduce((n, i) => n + i.occurrence_count, 0) === expected ? true : undefined;
  await waitFor(() => occurrences(projectId, svc.adminKey, 5), 60_000, 'five occurrences');
  await waitFor(() => occurrences(other.projectId, other.adminKey, 2), 60_000, 'the other tenant\'s two occurrences');
}, 120_000);

afterAll(async () => {
  await svc?.stop();
});

describe('issue list triage columns', () => {
  it('are absent unless asked for', async () => {
    for (const issue of await issuesOf(projectId, '')) {
      expect(issue).not.toHaveProperty('agent_names');
      expect(issue).not.toHaveProperty('occurrence_trend');
    }
  });

  it('agent_names: the agents of the traces the occurrences are in, sorted, of this tenant only', async () => {
    const issues = await issuesOf(projectId, 'include_agents=true');
    expect(issues).toHaveLength(2);
    const byTool = (tool: string) => issues.find((i) => i.title.includes(tool))!;
    expect(byTool('refund_lookup').agent_names).toEqual(['billing', 'support']);
    expect(byTool('send_invoice').agent_names).toEqual(['billing']);
    expect(byTool('refund_lookup')).not.toHaveProperty('occurrence_trend');
    const theirs = await issuesOf(other.projectId, 'include_agents=true', other.adminKey);
    expect(theirs.map((i) => i.agent_names)).toEqual([['intruder'], ['intruder']]);
  });

  it('occurrence_trend: 14 UTC days ending today, each day the occurrences that happened then', async () => {
    const issues = await issuesOf(projectId, 'include_trend=true&include_agents=true');
    const today = new Date().toISOString().slice(0, 10);
    for (const issue of issues) {
      const trend = issue.occurrence_trend!;
      expect(trend).toHaveLength(14);
      expect(trend[13].date).toBe(today);
      expect(Date.parse(`${trend[13].date}T00:00:00Z`) - Date.parse(`${trend[0].date}T00:00:00Z`)).toBe(13 * DAY);
      // The counts the occurrences themselves give, by the UTC date they happened on.
      const occurrences = (await svc.call('GET', `/issues/${issue.id}/occurrences?limit=500`)).body.occurrences as { occurred_at: string }[];
      expect(occurrences).toHaveLength(issue.occurrence_count);
      const expected = trend.map(({ date }) => ({ date, count: occurrences.filter((o) => o.occurred_at.slice(0, 10) === date).length }));
      expect(trend).toEqual(expected);
    }
    const refund = issues.find((i) => i.title.includes('refund_lookup'))!;
    // Three of its four occurrences in the window, on two days; the one 20 days old outside.
    expect(refund.occurrence_count).toBe(4);
    expect(refund.occurrence_trend!.reduce((n, p) => n + p.count, 0)).toBe(3);
    expect(refund.occurrence_trend!.filter((p) => p.count > 0).length).toBe(2);
    expect(refund.agent_names).toEqual(['billing', 'support']);
  });

  it('looks the traces up a chunk of ids at a time, within the tenant and project asked for', async () => {
    const traceIdsOf = async (project: string, key: string) => {
      const ids: string[] = [];
      for (const issue of await issuesOf(project, '', key)) {
        const res = await svc.call('GET', `/issues/${issue.id}/occurrences?limit=500`, { key });
        ids.push(...res.body.occurrences.map((o: { trace_id: string }) => o.trace_id));
      }
      return [...new Set(ids)];
    };
    const ours = await traceIdsOf(projectId, svc.adminKey);
    const theirs = await traceIdsOf(other.projectId, other.adminKey);
    expect(ours).toHaveLength(5);
    expect(theirs).toHaveLength(2);
    // Every id asked for, ours and theirs, one per statement: only their own project's traces answer.
    const found = await traceAgentNames(svc.service.deps.ch, other.tenantId, other.projectId, [...ours, ...theirs], 1);
    expect([...found.keys()].sort()).toEqual([...theirs].sort());
    expect([...found.values()]).toEqual(['intruder', 'intruder']);
    const whole = await traceAgentNames(svc.service.deps.ch, other.tenantId, other.projectId, [...ours, ...theirs]);
    expect(whole).toEqual(found);
  });

  it('rejects a flag that is not a boolean', async () => {
    const res = await svc.call('GET', `/projects/${projectId}/issues?include_trend=often`);
    expect(res.status).toBe(400);
    expect(res.body.detail).toMatch(/include_trend/);
  });
});
