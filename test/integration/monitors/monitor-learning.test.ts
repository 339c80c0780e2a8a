import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../../helpers/service.js';
import { traceHooks } from '../../../src/ingest/trace-hook-registry.js';
import { type ProcessedTrace } from '../../../src/ingest/trace-hooks.js';
import { deliverProcessedTraces } from '../../helpers/deliver-traces.js';

/**
 * Monitors learn from processed traces and then open an issue when a failing tool-call pattern
 * rises. Traces are handed to every listener registered in the trace hooks, exactly as ingestion
 * does once a trace settles.
 */
let svc: TestService;

beforeAll(async () => {
  svc = await startTestService({ MONITOR_LEARNING_MIN_TRACES: '50' });
});
afterAll(async () => {
  await svc?.stop();
});

async function tenantOf(projectId: string): Promise<string> {
  const [row] = await svc.service.deps.sql<{ tenant_id: string }[]>`select tenant_id from projects where id = ${projectId}`;
  return row.tenant_id;
}

interface TraceShape {
  searchFails?: boolean;
  input?: string;
  output?: string;
  traceId?: string;
}

function processedTrace(tenantId: string, projectId: string, shape: TraceShape): ProcessedTrace {
  const otelTraceId = crypto.randomBytes(16).toString('hex');
  const spanId = crypto.randomBytes(8).toString('hex');
  const failed = shape.searchFails === true;
  return {
    tenantId,
    projectId,
    traceId: shape.traceId ?? crypto.randomUUID(),
    otelTraceId,
    timestamp: new Date().toISOString(),
    agentName: 'support-bot',
    hasError: failed,
    failures: failed ? [{ span_id: spanId, span_name: 'search', error_type: 'TimeoutError', message: 'search timed out after 30s', tool_name: 'search', timestamp: new Date().toISOString() }] : [],
    toolCalls: [{ span_id: spanId, name: 'search', is_error: failed, duration_ms: 120, input: '{"q":"order"}', output: failed ? '' : '3 results' }],
    agentInput: shape.input ?? 'where is my order?',
    agentOutput: shape.output ?? 'It ships tomorrow.',
    spanAttributes: { [spanId]: { 'tool.name': 'search' } },
  };
}

async function deliver(trace: ProcessedTrace): Promise<void> {
  await deliverProcessedTraces(traceHooks(svc.service.deps), [trace]);
}

async function monitorStatus(id: string): Promise<string> {
  return (await svc.call('GET', `/monitors/${id}`)).body.exploration_status;
}

async function monitorIssue(projectId: string, monitorId: string) {
  const issues = (await svc.call('GET', `/projects/${projectId}/issues?limit=200`)).body.issues as { fingerprint: string | null }[];
  return issues.find((i) => i.fingerprint === `monitor:${monitorId}`) as any;
}

async function observationCount(monitorId: string): Promise<number> {
  const [row] = await svc.service.deps.sql<{ n: number }[]>`select count(*)::int as n from monitor_observations where monitor_id = ${monitorId}`;
  return row.n;
}

describe('monitor learning and triggering', () => {
  let project: { id: string };
  let tenantId: string;
  let tool: any;
  let signal: any;

  beforeAll(async () => {
    project = await svc.newProject('monitor-learning');
    tenantId = await tenantOf(project.id);
    tool = (await svc.call('POST', `/projects/${project.id}/monitors`, {
      body: { name: 'Search failures', kind: 'tool', tool_name: 'search', issue_criteria: { error: true }, seed_hint: 'search is flaky at peak' },
    })).body;
    signal = (await svc.call('POST', `/projects/${project.id}/monitors`, {
      body: { name: 'Refund complaints', seed_hint: 'refund', expected_behavior: 'refund issued' },
    })).body;
  });

  it('learns from 50 traces, counting a re-processed trace once, then records its baseline', async () => {
    expect(tool.exploration_status).toBe('learning');
    // A trace of another project is not observed.
    const elsewhere = await svc.newProject('monitor-learning-elsewhere');
    await deliver(processedTrace(tenantId, elsewhere.id, { searchFails: true }));

    // 49 learning traces: one failing search call, refunds that were handled, one that was not.
    const learning: ProcessedTrace[] = [];
    for (let i = 0; i < 49; i++) {
      const shape: TraceShape = { searchFails: i === 7 };
      if (i < 10) Object.assign(shape, { input: 'I want a refund', output: 'Your refund issued today.' });
      if (i === 11) Object.assign(shape, { input: 'refund now', output: 'I cannot do that.' });
      learning.push(processedTrace(tenantId, project.id, shape));
    }
    for (const trace of learning) await deliver(trace);
    expect(await monitorStatus(tool.id)).toBe('learning');
    expect(await observationCount(tool.id)).toBe(49);
    // Re-processing a trace (a late span) counts it once.
    await deliver(learning[0]);
    expect(await observationCount(tool.id)).toBe(49);
    expect(await monitorStatus(tool.id)).toBe('learning');

    await deliver(processedTrace(tenantId, project.id, {}));
    const active = (await svc.call('GET', `/monitors/${tool.id}`)).body;
    expect(active.exploration_status).toBe('active');
    expect(active.updated_at > tool.updated_at).toBe(true);
    expect(await monitorStatus(signal.id)).toBe('active');
    const baselines = await svc.service.deps.sql<{ id: string; baseline: any }[]>`select id, baseline from monitors where project_id = ${project.id}`;
    const byId = new Map(baselines.map((b) => [b.id, b.baseline]));
    expect(byId.get(tool.id)).toMatchObject({ traces: 50, calls: 50, matches: 1, rate: 0.02 });
    expect(byId.get(signal.id)).toMatchObject({ traces: 50, calls: 50, matches: 1, rate: 0.02 });

    // Normal traffic after learning opens nothing.
    for (let i = 0; i < 10; i++) await deliver(processedTrace(tenantId, project.id, {}));
    expect(await monitorIssue(project.id, tool.id)).toBeUndefined();
  });

  it('opens an issue through the issues module when failing search calls rise, then updates it', async () => {
    // Two failures stay within the baseline's noise; the third opens the issue.
    await deliver(processedTrace(tenantId, project.id, { searchFails: true }));
    await deliver(processedTrace(tenantId, project.id, { searchFails: true }));
    expect(await monitorIssue(project.id, tool.id)).toBeUndefined();
    await deliver(processedTrace(tenantId, project.id, { searchFails: true }));
    const opened = await monitorIssue(project.id, tool.id);
    expect(opened).toMatchObject({ status: 'open', occurrence_count: 1 });
    expect(opened.title).toMatch(/Tool 'search'/);
    expect(opened.title).toMatch(/Search failures/);

    // Further failures while above the baseline update the same issue; a re-processed trace adds nothing.
    const fourth = processedTrace(tenantId, project.id, { searchFails: true });
    await deliver(fourth);
    await deliver(fourth);
    const updated = await monitorIssue(project.id, tool.id);
    expect(updated.id).toBe(opened.id);
    expect(updated.occurrence_count).toBe(2);
    const occurrences = await svc.call('GET', `/issues/${opened.id}/occurrences`);
    expect(occurrences.status).toBe(200);
    expect(JSON.stringify(occurrences.body)).toContain(fourth.traceId);
  });

  it('opens the signal monitor\'s issue when unresolved refunds rise', async () => {
    expect(await monitorIssue(project.id, signal.id)).toBeUndefined();
    for (let i = 0; i < 3; i++) await deliver(processedTrace(tenantId, project.id, { input: 'refund please', output: 'No.' }));
    const issue = await monitorIssue(project.id, signal.id);
    expect(issue).toMatchObject({ status: 'open', occurrence_count: 1 });
    expect(issue.title).toMatch(/Refund complaints/);
  });

  it('stops observing while paused, resumes with its baseline, and relearns from scratch', async () => {
    await svc.call('PATCH', `/monitors/${tool.id}`, { body: { exploration_status: 'paused' } });
    const before = await observationCount(tool.id);
    await deliver(processedTrace(tenantId, project.id, { searchFails: true }));
    expect(await observationCount(tool.id)).toBe(before);
    expect((await svc.call('PATCH', `/monitors/${tool.id}`, { body: { paused: false } })).body.exploration_status).toBe('active');

    const relearn = await svc.call('PATCH', `/monitors/${tool.id}`, { body: { exploration_status: 'learning' } });
    expect(relearn.body.exploration_status).toBe('learning');
    expect(await observationCount(tool.id)).toBe(0);
    const [row] = await svc.service.deps.sql<{ baseline: unknown }[]>`select baseline from monitors where id = ${tool.id}`;
    expect(row.baseline).toBeNull();
  });

  it('ends learning once under concurrent traces', async () => {
    const project = await svc.newProject('monitor-concurrent');
    const tenantId = await tenantOf(project.id);
    const tool = (await svc.call('POST', `/projects/${project.id}/monitors`, {
      body: { name: 'Search', kind: 'tool', tool_name: 'search', issue_criteria: 'timed out' },
    })).body;
    await Promise.all(Array.from({ length: 60 }, () => deliver(processedTrace(tenantId, project.id, {}))));
    expect(await monitorStatus(tool.id)).toBe('active');
    const [row] = await svc.service.deps.sql<{ baseline: any }[]>`select baseline from monitors where id = ${tool.id}`;
    expect(row.baseline).toMatchObject({ traces: 50, calls: 50, matches: 0, rate: 0 });
    const [phases] = await svc.service.deps.sql<{ learning: number; active: number }[]>`
      select count(*) filter (where phase = 'learning')::int as learning, count(*) filter (where phase = 'active')::int as active
      from monitor_observations where monitor_id = ${tool.id}`;
    expect(phases).toEqual({ learning: 50, active: 10 });
  });
});
