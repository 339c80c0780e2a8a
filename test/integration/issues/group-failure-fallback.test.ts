import crypto from 'node:crypto';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../../helpers/service.js';
import type { ProcessedTrace } from '../../../src/ingest/trace-hooks.js';
import { extractIssueGroup, extractionGroupListener } from '../../../src/workspace/issues/issue-extraction.js';
import { monitorEvaluator } from '../../../src/workspace/monitors/monitor-evaluator.js';

/**
 * A settle group is one transaction per hook; when it fails, its traces are handled one
 * by one, so one trace PostgreSQL cannot store fails alone. Here that trace's failure message holds
 * a NUL character, which PostgreSQL text refuses (settling writes a real trace's NULs as U+FFFD —
 * issue-extraction-otlp.test.ts; this hand-made payload stands for any trace the store refuses): the
 * others get their issues, records, observations and events as if it were not there.
 */
let svc: TestService;
const silent = pino({ level: 'silent' });

beforeAll(async () => {
  svc = await startTestService({ MONITOR_LEARNING_MIN_TRACES: '5' });
});
afterAll(async () => {
  await svc?.stop();
});

type Shape = 'fails' | 'ok' | 'unstorable';

/** A trace with one search call: failing (a TimeoutError), fine, or failing with a NUL in its message. */
function trace(tenantId: string, projectId: string, shape: Shape): ProcessedTrace {
  const traceId = crypto.randomUUID();
  const spanId = crypto.randomBytes(8).toString('hex');
  const fails = shape !== 'ok';
  return {
    tenantId, projectId, traceId, otelTraceId: traceId.replace(/-/g, ''), timestamp: new Date().toISOString(), agentName: 'support-bot',
    hasError: fails,
    failures: fails
      ? [{ span_id: spanId, span_name: 'search', error_type: 'TimeoutError', tool_name: 'search', timestamp: new Date().toISOString(),
          message: shape === 'unstorable' ? 'search timed out\u0000 at byte 0' : 'search timed out' }]
      : [],
    toolCalls: [{ span_id: spanId, name: 'search', is_error: fails, duration_ms: 120, input: '{}', output: fails ? '' : '3 results' }],
    agentInput: 'where is my order?', agentOutput: 'It ships tomorrow.', spanAttributes: {},
  };
}

async function project(name: string) {
  const { id } = await svc.newProject(name);
  const [{ tenant_id: tenantId }] = await svc.service.deps.sql<{ tenant_id: string }[]>`select tenant_id from projects where id = ${id}`;
  /** The group: two failing traces, a fine one, the unstorable one, a failing one after it. */
  const group = (['fails', 'fails', 'ok', 'unstorable', 'fails'] as const).map((s) => trace(tenantId, id, s));
  return { projectId: id, tenantId, group };
}

describe('a settle group with one trace PostgreSQL cannot store', () => {
  it('issue extraction: the other traces are extracted, only that one is recorded failed', async () => {
    const { projectId, group } = await project('fallback extraction');
    const sql = svc.service.deps.sql;
    let woken = 0;
    // The group at once fails (and leaves nothing behind): the listener falls back to one trace at a time.
    await expect(extractIssueGroup(sql, group)).rejects.toMatchObject({ code: '22021' });
    const listener = extractionGroupListener(sql, silent, () => woken++);
    // The bad trace's error comes back for the caller to log.
    await expect(listener(group)).rejects.toMatchObject({ code: '22021' });

    const records = await sql<{ trace_id: string; status: string; reason: string; issue_count: number; occurrence_count: number }[]>`
      select trace_id, status, reason, issue_count, occurrence_count from trace_issue_extractions where project_id = ${projectId}`;
    const byTrace = new Map(records.map(({ trace_id, ...r }) => [trace_id, r]));
    const attached = { status: 'completed', reason: 'failures_attached', issue_count: 1, occurrence_count: 1 };
    expect(group.map((t) => byTrace.get(t.traceId))).toEqual([
      attached,
      attached,
      { status: 'completed', reason: 'no_failures', issue_count: 0, occurrence_count: 0 },
      { status: 'failed', reason: 'extraction_error', issue_count: 0, occurrence_count: 0 },
      attached,
    ]);
    const issues = await sql`select title, description, status, occurrence_count from issues where project_id = ${projectId}`;
    expect([...issues]).toEqual([{ title: 'TimeoutError in tool search', description: 'search timed out', status: 'open', occurrence_count: 3 }]);
    const occurrences = await sql<{ trace_id: string }[]>`select trace_id from issue_occurrences where project_id = ${projectId}`;
    expect(occurrences.map((o) => o.trace_id).sort()).toEqual([group[0], group[1], group[4]].map((t) => t.traceId).sort());
    const events = await sql<{ name: string }[]>`select name from issue_event_outbox where project_id = ${projectId} order by id`;
    expect(events.map((e) => e.name)).toEqual(['issue.created']);
    // The outbox's readers were woken for the event the others wrote.
    expect(woken).toBe(1);
  });

  it('a monitor: the other traces are observed and still trigger, that one is left out', async () => {
    const { projectId, tenantId, group } = await project('fallback monitor');
    const sql = svc.service.deps.sql;
    const monitor = (await svc.call('POST', `/projects/${projectId}/monitors`, { body: { name: 'Search failures', kind: 'tool', tool_name: 'search', issue_criteria: { error: true } } })).body;
    const evaluator = monitorEvaluator(svc.service.deps);
    // Five fine traces end learning: a baseline of no failures, so 3 matching calls in the window (5 traces) trigger.
    await evaluator.onTracesProcessed(Array.from({ length: 5 }, () => trace(tenantId, projectId, 'ok')));
    // The group triggers at the unstorable trace (3 of 4) and after it; that trace's issue occurrence fails the group (rolled back).
    await expect(evaluator.evaluateGroup(monitor.id, group)).rejects.toMatchObject({ code: '22021' });
    await evaluator.onTracesProcessed(group);

    const observations = await sql<{ trace_id: string; matches: number }[]>`
      select trace_id, matches from monitor_observations where monitor_id = ${monitor.id} and phase = 'active' order by observed_at`;
    // In group order, stamped one by one: the unstorable trace (3) is not observed.
    expect(observations).toEqual([0, 1, 2, 4].map((i) => ({ trace_id: group[i].traceId, matches: i === 2 ? 0 : 1 })));
    // One by one, the last trace's window is traces 0, 1, 2 and 4: 3 of 4 calls failed, which triggers.
    const issues = await sql<{ id: string; occurrence_count: number }[]>`select id, occurrence_count from issues where project_id = ${projectId}`;
    expect(issues.map((i) => i.occurrence_count)).toEqual([1]);
    const [occurrence] = await sql<{ trace_id: string }[]>`select trace_id from issue_occurrences where issue_id = ${issues[0].id}`;
    expect(occurrence.trace_id).toBe(group[4].traceId);
    const [state] = await sql<{ exploration_status: string; last_issue_id: string }[]>`select exploration_status, last_issue_id from monitors where id = ${monitor.id}`;
    expect(state).toEqual({ exploration_status: 'active', last_issue_id: issues[0].id });
    const events = await sql<{ name: string }[]>`select name from issue_event_outbox where project_id = ${projectId} order by id`;
    expect(events.map((e) => e.name)).toEqual(['monitor.activated', 'issue.created']);
  });
});
