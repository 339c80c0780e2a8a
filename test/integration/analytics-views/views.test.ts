/**
 * Every number of every preset view, for a known set of agent runs sent through OTLP ingestion,
 * checked against what expected.ts computes from the runs; at each granularity, including weeks
 * that start on Sunday and a window across a month boundary.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { baseInstant, dayAt, iso } from './dataset.js';
import {
  bucketOf,
  buckets,
  expectedAgentScorecard,
  expectedBase,
  expectedGeneral,
  expectedModelScorecard,
  expectedRoiTraceSeries,
  expectedToolAggregates,
  expectedWindow,
  type Granularity,
  type Window,
} from './expected.js';
import { seedThroughIngestion, startHarness, until, waitForIssueEvents, type Harness } from './harness.js';

let h: Harness;
let projectId: string;
const base = baseInstant();
const GRANULARITIES: Granularity[] = ['day', 'week', 'month'];
/** Five days before M to twelve after: both sides of a month boundary, several Sunday weeks. */
const W: Window = { start: dayAt(base, -5), endExclusive: dayAt(base, 12) };
const windowQuery = (g: Granularity) => `start=${iso(W.start)}&endExclusive=${iso(W.endExclusive)}&granularity=${g}`;

/** Non-integers compare to 9 decimal places (sums of dollars, means); everything else exactly. */
function approx(value: unknown): unknown {
  if (typeof value === 'number' && !Number.isInteger(value)) return expect.closeTo(value, 9);
  if (Array.isArray(value)) return value.map(approx);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, approx(v)]));
  return value;
}

/** A view's panel; the freshness fields beside it (read per request) are checked and left out. */
async function view(query: string) {
  const res = await h.svc.call('GET', `/projects/${projectId}/analytics?${query}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const { data_as_of: asOf, settle_lag_ms: lag, settle_max_lag_ms: max, ...panel } = res.body;
  expect(max).toBe(30_000);
  expect(typeof lag).toBe('number');
  expect(Date.parse(asOf)).not.toBeNaN();
  return panel;
}

beforeAll(async () => {
  h = await startHarness();
  projectId = (await h.svc.newProject('views')).id;
  await seedThroughIngestion(h.svc, projectId, base);
});

afterAll(async () => {
  await h?.stop();
});

describe('the seeded data set', () => {
  it('spans a month boundary and more than one Sunday week', () => {
    expect(new Set(buckets(W, 'month')).size).toBe(2);
    expect(buckets(W, 'week').length).toBeGreaterThanOrEqual(3);
    for (const week of buckets(W, 'week')) expect(new Date(`${week}T00:00:00Z`).getUTCDay()).toBe(0);
  });
});

describe.each(GRANULARITIES)('granularity %s', (g) => {
  it('general: model calls of the hours before endExclusive', async () => {
    const end = dayAt(base, 3);
    const body = await view(`view=general&hours=168&endExclusive=${iso(end)}&granularity=${g}`);
    const w = { start: dayAt(base, -4), endExclusive: end };
    expect(body).toEqual(approx({ window: { start: iso(w.start), end_exclusive: iso(end) }, ...expectedGeneral(base, w, g, h.pricingFetchedAt) }));
  });

  it('window: latency, outcomes, coverage and cost', async () => {
    const body = await view(`view=window&${windowQuery(g)}`);
    expect(body).toEqual(approx({ window: { start: iso(W.start), end_exclusive: iso(W.endExclusive) }, ...expectedWindow(base, W, g, h.pricingFetchedAt) }));
  });

  it('base: complete series of traces, errors, tokens and cost', async () => {
    const body = await view(`view=base&${windowQuery(g)}`);
    expect(body).toEqual(approx({ window: { start: iso(W.start), end_exclusive: iso(W.endExclusive) }, ...expectedBase(base, W, g, h.pricingFetchedAt) }));
    // Complete: one entry per bucket, zeros where nothing happened.
    expect(body.traces.map((p: { date: string }) => p.date)).toEqual(buckets(W, g));
  });

  it('tool_aggregates: rows, volume, failing volume and error concentration', async () => {
    const body = await view(`view=tool_aggregates&${windowQuery(g)}`);
    expect(body).toEqual(approx({ window: { start: iso(W.start), end_exclusive: iso(W.endExclusive) }, ...expectedToolAggregates(base, W, g) }));
  });
});

describe('windows without granularity', () => {
  it('agent_scorecard: one row per agent, busiest first', async () => {
    const body = await view(`view=agent_scorecard&start=${iso(W.start)}&end_exclusive=${iso(W.endExclusive)}`);
    expect(body).toEqual(approx({ window: { start: iso(W.start), end_exclusive: iso(W.endExclusive) }, rows: expectedAgentScorecard(base, W) }));
  });

  it('agent_scorecard on a narrower window leaves out the runs outside it', async () => {
    const w = { start: dayAt(base, -1), endExclusive: dayAt(base, 3) };
    const body = await view(`view=agent_scorecard&start=${iso(w.start)}&endExclusive=${iso(w.endExclusive)}`);
    expect(body.rows).toEqual(approx(expectedAgentScorecard(base, w)));
    expect(body.rows.map((r: { agent: string }) => r.agent).sort()).toEqual(['planner', 'writer']);
  });

  it('model_scorecard: inclusive end and endExclusive give the same answer', async () => {
    const lastSecond = new Date(W.endExclusive.getTime() - 1000);
    const inclusive = await view(`view=model_scorecard&start=${iso(W.start)}&end=${iso(lastSecond)}`);
    const exclusive = await view(`view=model_scorecard&start=${iso(W.start)}&endExclusive=${iso(W.endExclusive)}`);
    expect(inclusive).toEqual(exclusive);
    expect(inclusive).toEqual(approx({ window: { start: iso(W.start), end_exclusive: iso(W.endExclusive) }, ...expectedModelScorecard(base, W, h.pricingFetchedAt) }));
    // The rows add up to the window's figure.
    const rowSum = inclusive.rows.reduce((s: number, r: { estimated_cost_usd: number | null }) => s + (r.estimated_cost_usd ?? 0), 0);
    expect(rowSum).toBeCloseTo(inclusive.estimated_cost_usd, 9);
  });

  it('model_scorecard without an end runs up to now', async () => {
    const body = await view(`view=model_scorecard&start=${iso(W.start)}`);
    const end = new Date(body.window.end_exclusive);
    expect(Math.abs(end.getTime() - Date.now())).toBeLessThan(60_000);
    expect(body).toEqual(approx({ window: body.window, ...expectedModelScorecard(base, { start: W.start, endExclusive: end }, h.pricingFetchedAt) }));
  });

  it('general without parameters: the last 24 hours by day, nothing in them', async () => {
    const body = await view('');
    const end = new Date(body.window.end_exclusive);
    expect(Math.abs(end.getTime() - Date.now())).toBeLessThan(60_000);
    expect(end.getTime() - new Date(body.window.start).getTime()).toBe(24 * 3_600_000);
    const w = { start: new Date(body.window.start), endExclusive: end };
    expect(body).toEqual(approx({ window: body.window, ...expectedGeneral(base, w, 'day', h.pricingFetchedAt) }));
    expect(body.requests.every((p: { value: number }) => p.value === 0)).toBe(true);
  });
});

describe('capabilities outside the window', () => {
  it('a window without runs still reports what the project sends, with zero counts', async () => {
    const w = { start: dayAt(base, 20), endExclusive: dayAt(base, 21) };
    const body = await view(`view=window&start=${iso(w.start)}&endExclusive=${iso(w.endExclusive)}`);
    expect(body).toEqual(approx({ window: { start: iso(w.start), end_exclusive: iso(w.endExclusive) }, ...expectedWindow(base, w, 'day', h.pricingFetchedAt) }));
    expect(body.coverage.window.tools).toEqual({ observed: 0, eligible: 0, is_lower_bound: true });
  });

  it('a project that never sent a tool span: tools capability false, tools_used a lower bound', async () => {
    const { RUNS } = await import('./dataset.js');
    const toolless = (await h.svc.newProject('no tools')).id;
    // Run 3: a writer run with a root span, a model call and no tool.
    await seedThroughIngestion(h.svc, toolless, base, [RUNS[2]]);
    const q = `start=${iso(W.start)}&endExclusive=${iso(W.endExclusive)}`;
    const window = await h.svc.call('GET', `/projects/${toolless}/analytics?view=window&${q}`);
    expect(window.body.coverage.capability.tools).toBe(false);
    expect(window.body.coverage.window.tools).toBeNull();
    expect(window.body.coverage.capability.root_status).toBe(true);
    expect(window.body.coverage.window.root_status).toEqual({ observed: 1, eligible: 1, is_lower_bound: false });
    const agents = await h.svc.call('GET', `/projects/${toolless}/analytics?view=agent_scorecard&${q}`);
    expect(agents.body.rows).toHaveLength(1);
    expect(agents.body.rows[0]).toMatchObject({ agent: 'writer', traces: 1, tools_used: 0, tools_used_is_lower_bound: true, root_status_known: 1, error_rate: 0 });
  });
});

describe('roi', () => {
  it('counts, issue series, artifact iterations and resolution time', async () => {
    const { svc } = h;
    // Extraction opens issues for the failing runs; wait until it looked at every trace.
    await until('issue extraction of every trace', async () => {
      const [row] = await svc.service.deps.sql<{ n: number }[]>`select count(*)::int as n from trace_issue_extractions where project_id = ${projectId}`;
      return row.n === 6;
    });
    const handMade = await svc.call('POST', `/projects/${projectId}/issues`, { body: { title: 'made by hand' } });
    expect(handMade.status).toBe(201);
    const listed = await svc.call('GET', `/projects/${projectId}/issues?limit=200`);
    const issues: { id: string; created_at: string }[] = listed.body.issues;
    expect(issues.length).toBeGreaterThanOrEqual(2);
    const resolved = await svc.call('PATCH', `/issues/${issues[0].id}/resolve`);
    const dismissed = await svc.call('PATCH', `/issues/${issues[1].id}/dismiss`);
    expect([resolved.status, dismissed.status]).toEqual([200, 200]);
    for (const agent of ['planner', 'planner']) {
      const v = await svc.call('POST', `/projects/${projectId}/artifacts/versions`, { body: { agent_name: agent, understanding: 'u', expectations: 'e' } });
      expect(v.status).toBe(201);
    }
    await waitForIssueEvents(svc, projectId, 'issue.created', issues.length);
    await waitForIssueEvents(svc, projectId, 'issue.resolved', 1);
    await waitForIssueEvents(svc, projectId, 'issue.dismissed', 1);

    for (const g of GRANULARITIES) {
      const body = await view(`view=roi&granularity=${g}`);
      const w = { start: new Date(body.window.start), endExclusive: new Date(body.window.end_exclusive) };
      expect(Math.abs(w.endExclusive.getTime() - Date.now())).toBeLessThan(60_000);
      expect(w.endExclusive.getTime() - w.start.getTime()).toBe(90 * 86_400_000);
      const dates = buckets(w, g);
      const series = (events: Date[]) => dates.map((date) => ({ date, value: events.filter((e) => bucketOf(e, g) === date).length }));
      const resolvedAt = new Date(resolved.body.updated_at);
      const createdAt = new Date(resolved.body.created_at);
      const today = bucketOf(resolvedAt, g);
      const { traces, errors } = expectedRoiTraceSeries(base, w, g);
      expect(body).toEqual(
        approx({
          window: body.window,
          state: 'populated',
          counts: { agents: 3, lifetime_traces: 6, issues: issues.length, resolved: 1 },
          base: {
            caught: series(issues.map((i) => new Date(i.created_at))),
            resolved: series([resolvedAt]),
            dismissed: series([new Date(dismissed.body.updated_at)]),
            traces,
            errors,
            artifact_iterations: dates.map((date) => ({ date, value: date === bucketOf(new Date(), g) ? 2 : 0 })),
            resolution_days: body.base.resolution_days,
          },
        }),
      );
      const days = body.base.resolution_days as { date: string; value: number }[];
      expect(days.map((d) => d.date)).toEqual(dates);
      for (const d of days) {
        if (d.date === today) expect(d.value).toBeCloseTo((resolvedAt.getTime() - createdAt.getTime()) / 86_400_000, 6);
        else expect(d.value).toBe(0);
      }
    }
  });

  it('is waiting for a project with traces but no issue, and connect for one that never sent a trace', async () => {
    const quiet = (await h.svc.newProject('quiet')).id;
    // The first run only: it fails nowhere, so no issue is opened.
    const { RUNS } = await import('./dataset.js');
    await seedThroughIngestion(h.svc, quiet, base, [RUNS[0]]);
    const waiting = await h.svc.call('GET', `/projects/${quiet}/analytics?view=roi`);
    expect(waiting.body.state).toBe('waiting');
    expect(waiting.body.counts).toEqual({ agents: 1, lifetime_traces: 1, issues: 0, resolved: 0 });
    const empty = (await h.svc.newProject('never')).id;
    const connect = await h.svc.call('GET', `/projects/${empty}/analytics?view=roi`);
    expect(connect.body.state).toBe('connect');
    expect(connect.body.counts).toEqual({ agents: 0, lifetime_traces: 0, issues: 0, resolved: 0 });
  });
});
