import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../../helpers/service.js';
import { traceHooks } from '../../../src/ingest/trace-hook-registry.js';
import { type ProcessedTrace, type TraceFailure } from '../../../src/ingest/trace-hooks.js';
import { deliverProcessedTraces } from '../../helpers/deliver-traces.js';
import { extractIssues } from '../../../src/workspace/issues/issue-extraction.js';
import { fingerprintOf } from '../../../src/workspace/issues/issue-fingerprint.js';
import { settledIssueEvents } from './issue-test-helpers.js';

let svc: TestService;
let tenantId: string;

beforeAll(async () => {
  svc = await startTestService();
  tenantId = svc.service.bootstrap!.tenantId;
});
afterAll(async () => {
  await svc?.stop();
});

function failure(partial: Partial<TraceFailure> & { span_name: string }): TraceFailure {
  return { span_id: crypto.randomBytes(8).toString('hex'), error_type: '', message: '', tool_name: '', timestamp: new Date().toISOString(), ...partial };
}

function trace(projectId: string, failures: TraceFailure[], traceId: string = crypto.randomUUID()): ProcessedTrace {
  return {
    tenantId, projectId, traceId, otelTraceId: crypto.randomBytes(16).toString('hex'), timestamp: new Date().toISOString(),
    agentName: 'support', hasError: failures.length > 0, failures, toolCalls: [], agentInput: null, agentOutput: null, spanAttributes: {},
  };
}

/** The registered listeners, exactly as ingestion calls them (a group of one). */
async function processed(t: ProcessedTrace): Promise<void> {
  await deliverProcessedTraces(traceHooks(svc.service.deps), [t]);
}

async function issuesOf(projectId: string) {
  const res = await svc.call('GET', `/projects/${projectId}/issues`);
  return res.body.issues as any[];
}

describe('issue extraction', () => {
  it('opens one issue per fingerprint, attaches occurrences and fills the trace blocks', async () => {
    const projectId = (await svc.newProject('extraction')).id;
    const t0 = new Date(Date.now() - 60_000).toISOString();
    const t1 = new Date(Date.now() - 30_000).toISOString();
    const search1 = failure({ span_name: 'execute_tool search_docs', tool_name: 'search_docs', error_type: 'TimeoutError', message: 'timed out after 30s', timestamp: t0 });
    const search2 = failure({ span_name: 'execute_tool search_docs', tool_name: 'search_docs', error_type: 'TimeoutError', message: 'timed out after 31s', timestamp: t1 });
    const llm = failure({ span_name: 'chat gpt-4o', error_type: 'RateLimitError', timestamp: t1 });
    const t = trace(projectId, [search1, llm, search2]);
    await processed(t);

    const issues = await issuesOf(projectId);
    expect(issues).toHaveLength(2);
    const search = issues.find((i) => i.title === 'TimeoutError in tool search_docs');
    const rate = issues.find((i) => i.title === 'RateLimitError in chat gpt-4o');
    expect(search).toMatchObject({ status: 'open', occurrence_count: 2, first_seen_at: t0, last_seen_at: t1, description: 'timed out after 30s', fingerprint: fingerprintOf(search1) });
    expect(rate).toMatchObject({ status: 'open', occurrence_count: 1, first_seen_at: t1, last_seen_at: t1 });

    const hooks = traceHooks(svc.service.deps);
    const extraction = await hooks.issueExtraction!(tenantId, projectId, t.traceId);
    expect(extraction).toMatchObject({ status: 'completed', reason: 'failures_attached', issue_count: 2, occurrence_count: 3 });
    expect(new Date(extraction!.completed_at!).getTime()).toBeGreaterThan(Date.now() - 60_000);
    const occurrences = await hooks.traceOccurrences!(tenantId, projectId, t.traceId);
    expect(occurrences).toHaveLength(3);
    expect(occurrences[0]).toEqual({ issue_id: search.id, issue_title: search.title, issue_status: 'open', span_id: search1.span_id, occurred_at: t0 });
    // Another tenant asking about this trace learns nothing.
    const other = await svc.newTenant('extraction-other');
    expect(await hooks.issueExtraction!(other.tenantId, projectId, t.traceId)).toBeNull();
    expect(await hooks.traceOccurrences!(other.tenantId, projectId, t.traceId)).toEqual([]);

    const listed = await svc.call('GET', `/issues/${search.id}/occurrences`);
    expect(listed.body.occurrences.map((o: { span_id: string }) => o.span_id).sort()).toEqual([search1.span_id, search2.span_id].sort());
    expect(listed.body.occurrences[0]).toMatchObject({ trace_id: t.traceId, otel_trace_id: t.otelTraceId, tool_name: 'search_docs' });

    const events = await settledIssueEvents(svc, [search.id, rate.id]);
    expect(events.map((e) => e.name)).toEqual(['issue.created', 'issue.created']);
    for (const e of events) expect(e).toMatchObject({ actor: 'system', surface: 'system', user_id: '', api_key_id: '' });

    // Re-processing (a late span arrived) adds only the new failure.
    const late = failure({ span_name: 'execute_tool search_docs', tool_name: 'search_docs', error_type: 'TimeoutError' });
    await processed({ ...t, failures: [search1, llm, search2, late] });
    expect((await svc.call('GET', `/issues/${search.id}`)).body.occurrence_count).toBe(3);
    expect((await svc.call('GET', `/issues/${rate.id}`)).body.occurrence_count).toBe(1);
    expect(await hooks.issueExtraction!(tenantId, projectId, t.traceId)).toMatchObject({ issue_count: 2, occurrence_count: 4 });
    expect((await settledIssueEvents(svc, [search.id, rate.id]))).toHaveLength(2);
  });

  it('masks variable parts of span names, keeps projects apart, and reports traces without failures', async () => {
    const projectA = (await svc.newProject('mask a')).id;
    const projectB = (await svc.newProject('mask b')).id;
    await processed(trace(projectA, [failure({ span_name: 'GET /users/123', error_type: 'HttpError' })]));
    await processed(trace(projectA, [failure({ span_name: 'GET  /users/98765', error_type: 'HttpError' })]));
    await processed(trace(projectA, [failure({ span_name: 'GET /orders/1', error_type: 'HttpError' })]));
    await processed(trace(projectB, [failure({ span_name: 'GET /users/5', error_type: 'HttpError' })]));
    const a = await issuesOf(projectA);
    expect(a.map((i) => [i.title, i.occurrence_count]).sort()).toEqual([['HttpError in GET /orders/{n}', 1], ['HttpError in GET /users/{n}', 2]]);
    const b = await issuesOf(projectB);
    expect(b.map((i) => [i.title, i.occurrence_count])).toEqual([['HttpError in GET /users/{n}', 1]]);

    const clean = trace(projectA, []);
    await processed(clean);
    expect(await traceHooks(svc.service.deps).issueExtraction!(tenantId, projectA, clean.traceId)).toMatchObject({
      status: 'completed', reason: 'no_failures', issue_count: 0, occurrence_count: 0,
    });
    expect(await traceHooks(svc.service.deps).issueExtraction!(tenantId, projectA, crypto.randomUUID())).toBeNull();
  });

  it('records a group of traces as one by one: clean ones by one statement, failing ones with their issues, re-processed ones with their earlier occurrences', async () => {
    const projectId = (await svc.newProject('group')).id;
    const hooks = traceHooks(svc.service.deps);
    // Processed earlier with a failure; re-processed now without one (e.g. the failing span was replaced): its occurrence stays counted.
    const earlier = trace(projectId, [failure({ span_name: 'execute_tool refund', tool_name: 'refund', error_type: 'ValueError' })]);
    await processed(earlier);
    const cleanA = trace(projectId, []);
    const cleanB = trace(projectId, []);
    const failing = trace(projectId, [failure({ span_name: 'chat gpt-4o', error_type: 'RateLimitError' })]);
    const again = trace(projectId, [], earlier.traceId);
    // The same trace twice in a group (two settle versions delivered together) is recorded once.
    await deliverProcessedTraces(hooks, [cleanA, failing, again, cleanB, cleanA]);
    const extraction = (t: ProcessedTrace) => hooks.issueExtraction!(tenantId, projectId, t.traceId);
    for (const t of [cleanA, cleanB]) {
      expect(await extraction(t)).toMatchObject({ status: 'completed', reason: 'no_failures', issue_count: 0, occurrence_count: 0 });
    }
    expect(await extraction(failing)).toMatchObject({ status: 'completed', reason: 'failures_attached', issue_count: 1, occurrence_count: 1 });
    expect(await extraction(again)).toMatchObject({ status: 'completed', reason: 'failures_attached', issue_count: 1, occurrence_count: 1 });
    expect((await issuesOf(projectId)).map((i) => i.title).sort()).toEqual(['RateLimitError in chat gpt-4o', 'ValueError in tool refund']);
  });

  it('reopens a resolved issue when the failure recurs after the resolution; a dismissed issue only counts it', async () => {
    const projectId = (await svc.newProject('recurrence')).id;
    const kind = { span_name: 'execute_tool refund', tool_name: 'refund', error_type: 'ValueError' };
    const other = { span_name: 'execute_tool lookup', tool_name: 'lookup', error_type: 'KeyError' };
    await processed(trace(projectId, [failure({ ...kind, timestamp: new Date(Date.now() - 3_600_000).toISOString() }), failure(other)]));
    const [issueA] = (await issuesOf(projectId)).filter((i) => i.title.includes('refund'));
    const [issueB] = (await issuesOf(projectId)).filter((i) => i.title.includes('lookup'));
    await svc.call('PATCH', `/issues/${issueA.id}/resolve`);
    await svc.call('PATCH', `/issues/${issueB.id}/dismiss`);

    // A late trace whose failure happened before the resolution does not reopen.
    await processed(trace(projectId, [failure({ ...kind, timestamp: new Date(Date.now() - 1_800_000).toISOString() })]));
    expect((await svc.call('GET', `/issues/${issueA.id}`)).body).toMatchObject({ status: 'resolved', occurrence_count: 2 });

    await processed(trace(projectId, [failure({ ...kind, timestamp: new Date(Date.now() + 1000).toISOString() }), failure({ ...other, timestamp: new Date(Date.now() + 1000).toISOString() })]));
    expect((await svc.call('GET', `/issues/${issueA.id}`)).body).toMatchObject({ status: 'open', occurrence_count: 3 });
    expect((await svc.call('GET', `/issues/${issueB.id}`)).body).toMatchObject({ status: 'dismissed', occurrence_count: 2 });

    const events = await settledIssueEvents(svc, [issueA.id, issueB.id]);
    const reopened = events.filter((e) => e.name === 'issue.reopened');
    expect(reopened).toHaveLength(1);
    expect(reopened[0]).toMatchObject({ issue_id: issueA.id, actor: 'system', surface: 'system' });
    expect(events.filter((e) => e.issue_id === issueB.id).map((e) => e.name).sort()).toEqual(['issue.created', 'issue.dismissed']);
  });

  it('concurrent traces with one new fingerprint open exactly one issue', async () => {
    const projectId = (await svc.newProject('extraction race')).id;
    const traces = Array.from({ length: 10 }, () => trace(projectId, [failure({ span_name: 'execute_tool pay', tool_name: 'pay', error_type: 'PaymentError' })]));
    await Promise.all(traces.map((t) => extractIssues(svc.service.deps.sql, t)));
    const issues = await issuesOf(projectId);
    expect(issues).toHaveLength(1);
    expect(issues[0].occurrence_count).toBe(10);
    const events = await settledIssueEvents(svc, [issues[0].id]);
    expect(events.map((e) => e.name)).toEqual(['issue.created']);
  });
});
