import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../../helpers/service.js';
import type { ProcessedTrace } from '../../../src/ingest/trace-hooks.js';
import { PostgresStatementStats } from '../../../src/platform/postgres/postgres-statement-stats.js';
import { MonitorEvaluator, monitorEvaluator, type Evaluation } from '../../../src/workspace/monitors/monitor-evaluator.js';
import { activeWindowRows } from '../../../src/workspace/monitors/monitor-store.js';

/**
 * A monitor evaluates a settle group in one transaction: what it makes of each trace —
 * learning, the end of learning, watching, triggering its issue — and what it stores are what
 * evaluating the traces one by one gives, with re-processed traces in the group.
 */
let svc: TestService;

beforeAll(async () => {
  svc = await startTestService({ MONITOR_LEARNING_MIN_TRACES: '10' });
});
afterAll(async () => {
  await svc?.stop();
});

function trace(tenantId: string, projectId: string, traceId: string, searchFails: boolean): ProcessedTrace {
  const spanId = crypto.createHash('sha256').update(`${traceId}${searchFails}`).digest('hex').slice(0, 16);
  return {
    tenantId, projectId, traceId, otelTraceId: traceId.replace(/-/g, ''), timestamp: '2026-11-24T10:00:00.000Z', agentName: 'support-bot',
    hasError: searchFails,
    failures: searchFails ? [{ span_id: spanId, span_name: 'search', error_type: 'TimeoutError', message: 'search timed out', tool_name: 'search', timestamp: '2026-11-24T10:00:00.000Z' }] : [],
    toolCalls: [{ span_id: spanId, name: 'search', is_error: searchFails, duration_ms: 120, input: '{}', output: searchFails ? '' : '3 results' }],
    agentInput: 'where is my order?', agentOutput: 'It ships tomorrow.', spanAttributes: {},
  };
}

/** A project with a learning tool monitor, and the traces of the scenario (by name) for it. */
async function setUp(name: string) {
  const project = await svc.newProject(name);
  const [{ tenant_id: tenantId }] = await svc.service.deps.sql<{ tenant_id: string }[]>`select tenant_id from projects where id = ${project.id}`;
  const monitor = (await svc.call('POST', `/projects/${project.id}/monitors`, { body: { name: 'Search failures', kind: 'tool', tool_name: 'search', issue_criteria: { error: true } } })).body;
  const ids = new Map<string, string>();
  const t = (n: number, fails = false) => {
    if (!ids.has(`t${n}`)) ids.set(`t${n}`, crypto.randomUUID());
    return trace(tenantId, project.id, ids.get(`t${n}`)!, fails);
  };
  // Learning: nine traces (t2 fails), t3 re-processed failing, the tenth ends learning; then
  // failures rise (t4, re-processed while active, stays a learning observation), normal traffic, triggers after it.
  const traces = [
    ...Array.from({ length: 9 }, (_, i) => t(i, i === 2)),
    t(3, true),
    t(9),
    t(10, true), t(11, true), t(4, true), t(12, true), t(13), t(14, true), t(15, true), t(15, true), t(16), t(17, true),
    // The window (10 traces) moves on: the early failures leave it.
    ...Array.from({ length: 5 }, (_, i) => t(18 + i)), t(23, true), t(24, true), t(25, true),
  ];
  return { projectId: project.id, monitorId: monitor.id as string, traces, names: new Map([...ids].map(([n, id]) => [id, n])) };
}

async function stored(projectId: string, monitorId: string, names: Map<string, string>) {
  const sql = svc.service.deps.sql;
  const [monitor] = await sql`select exploration_status, baseline - 'recorded_at' as baseline, last_issue_id is not null as triggered from monitors where id = ${monitorId}`;
  const observations = await sql<{ trace_id: string; phase: string; calls: number; matches: number }[]>`
    select trace_id, phase, calls, matches from monitor_observations where monitor_id = ${monitorId} order by observed_at, trace_id`;
  const issues = await sql`select title, description, status, occurrence_count from issues where project_id = ${projectId}`;
  const events = await sql<{ name: string }[]>`select name from issue_event_outbox where project_id = ${projectId} order by id`;
  return {
    monitor,
    observations: observations.map((o) => ({ ...o, trace_id: names.get(o.trace_id) })),
    issues: [...issues],
    events: events.map((e) => e.name),
  };
}

/** Evaluations without what differs between two monitors: the issue id, the time a baseline was recorded. */
const outcomes = (evaluations: Evaluation[]) =>
  evaluations.map((e) =>
    e.outcome === 'triggered' ? { ...e, issueId: 'the issue' } : e.outcome === 'activated' ? { ...e, baseline: { ...e.baseline, recorded_at: 'then' } } : e,
  );

describe('monitor evaluation of a settle group', () => {
  it('gives what evaluating the traces one by one gives, through learning, activation and triggering', async () => {
    const evaluator = monitorEvaluator(svc.service.deps);
    const grouped = await setUp('monitor group');
    const single = await setUp('monitor one by one');
    // Split unevenly, so groups end mid-learning and mid-window.
    const groupEvaluations = [
      ...(await evaluator.evaluateGroup(grouped.monitorId, grouped.traces.slice(0, 7))),
      ...(await evaluator.evaluateGroup(grouped.monitorId, grouped.traces.slice(7, 20))),
      ...(await evaluator.evaluateGroup(grouped.monitorId, grouped.traces.slice(20))),
    ];
    const singleEvaluations: Evaluation[] = [];
    for (const t of single.traces) singleEvaluations.push(...(await evaluator.evaluateGroup(single.monitorId, [t])));

    expect(outcomes(groupEvaluations)).toEqual(outcomes(singleEvaluations));
    expect(await stored(grouped.projectId, grouped.monitorId, grouped.names)).toEqual(await stored(single.projectId, single.monitorId, single.names));
    // And what that is, by hand (threshold at a 0.2 baseline: 3 matches up to 3 calls, 4 at 4, 5 at 5–7, 6 at 8–9, 7 at 10).
    const learning = (observed: number) => ({ outcome: 'learning', observed });
    const watching = (traces: number, matches: number) => ({ outcome: 'watching', window: { traces, calls: traces, matches } });
    const triggered = (traces: number, matches: number) => ({ outcome: 'triggered', window: { traces, calls: traces, matches }, issueId: 'the issue' });
    expect(outcomes(groupEvaluations)).toEqual([
      // t0…t8 (t2 fails), t3 again (failing now: counted once), t9 the tenth ends learning.
      ...[1, 2, 3, 4, 5, 6, 7, 8, 9].map(learning), learning(9),
      { outcome: 'activated', baseline: { traces: 10, calls: 10, matches: 2, rate: 0.2, recorded_at: 'then' } },
      watching(1, 1), // t10
      watching(2, 2), // t11
      watching(2, 2), // t4 fails again: still a learning observation, outside the window
      triggered(3, 3), // t12
      watching(4, 3), // t13
      watching(5, 4), // t14: 4 of 5 is below 5
      triggered(6, 5), // t15
      triggered(6, 5), // t15 again: same window
      watching(7, 5), // t16 (no match: never triggers)
      triggered(8, 6), // t17
      watching(9, 6), // t18
      watching(10, 6), // t19
      watching(10, 5), // t20: t10 leaves
      watching(10, 4), // t21: t11 leaves
      watching(10, 3), // t22: t12 leaves
      // t23, t24, t25 fail as t13, t14, t15 leave: the window t16…t25 holds four failures, below 7.
      watching(10, 4),
      watching(10, 4),
      watching(10, 4),
    ]);
    const state = await stored(grouped.projectId, grouped.monitorId, grouped.names);
    expect(state.monitor).toMatchObject({ exploration_status: 'active', triggered: true });
    expect(state.observations.find((o) => o.trace_id === 't4')).toMatchObject({ phase: 'learning', matches: 1 });
    expect(state.events).toEqual(['monitor.activated', 'issue.created']);
  });

  it('stamps a new observation newest even when stored stamps are ahead of the clock', async () => {
    const evaluator = monitorEvaluator(svc.service.deps);
    const { monitorId, traces, names } = await setUp('monitor stamps');
    const sql = svc.service.deps.sql;
    await evaluator.evaluateGroup(monitorId, traces.slice(0, 20));
    // An earlier writer's stamps ahead of this clock (stamps run a group's length past the clock; clocks step back).
    await sql`update monitor_observations set observed_at = observed_at + interval '1 hour' where monitor_id = ${monitorId}`;
    const evaluations = await evaluator.evaluateGroup(monitorId, traces.slice(20));
    // The stored latest ten are the ten the evaluator counted: t16…t25, newest first.
    const latest = await activeWindowRows(sql, monitorId, 10);
    expect(latest.map((r) => names.get(r.trace_id))).toEqual(['t25', 't24', 't23', 't22', 't21', 't20', 't19', 't18', 't17', 't16']);
    expect(evaluations.at(-1)).toEqual({ outcome: 'watching', window: { traces: 10, calls: 10, matches: latest.reduce((n, r) => n + r.matches, 0) } });
  });

  it('evaluates a group in a fixed number of statements, read once and written once', async () => {
    const { monitorId, traces } = await setUp('monitor statements');
    // A pool of its own on the service's PostgreSQL, counting what it sends (as the PostgreSQL statistics file of the ingest benchmark does).
    const stats = new PostgresStatementStats('/dev/null');
    const counted = svc.postgresPool({ max: 2, stats });
    await counted`select 1`;
    const before = stats.snapshot().statements;
    const evaluations = await new MonitorEvaluator({ ...svc.service.deps, sql: counted }).evaluateGroup(monitorId, traces);
    expect(evaluations.map((e) => e.outcome)).toContain('triggered');
    // The 29 traces of the scenario. begin, lock, observations, totals, window, upsert, activated, the issue (5), monitor, notify, commit — not ~6 per trace.
    expect(stats.snapshot().statements - before).toBeLessThanOrEqual(16);
  });
});
