import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../../helpers/service.js';
import { traceHooks } from '../../../src/ingest/trace-hook-registry.js';
import type { ProcessedTrace } from '../../../src/ingest/trace-hooks.js';
import { deliverProcessedTraces } from '../../helpers/deliver-traces.js';

/**
 * End to end through ingestion: agents export OTLP/JSON traces to POST /v1/traces; each trace
 * settles, the monitor evaluator observes it; after 50 traces the tool monitor is active, and when
 * failing `search` calls rise it opens an issue through the issues module.
 */
let svc: TestService;
let ingestKey: string;
let projectId: string;

beforeAll(async () => {
  svc = await startTestService({ MONITOR_LEARNING_MIN_TRACES: '50' });
  projectId = (await svc.newProject('monitor-ingest')).id;
  ingestKey = await svc.newKey('ingest', { projectId });
});
afterAll(async () => {
  await svc?.stop();
});

const attr = (key: string, value: string) => ({ key, value: { stringValue: value } });

/** One agent run: a root agent span and one `search` tool call, failing when asked. */
function agentRun(searchFails: boolean) {
  const traceId = crypto.randomBytes(16).toString('hex');
  const rootId = crypto.randomBytes(8).toString('hex');
  const start = BigInt(Date.now()) * 1_000_000n;
  const ns = (ms: number) => String(start + BigInt(ms) * 1_000_000n);
  return {
    traceId,
    span: (extra: object) => extra,
    spans: [
      {
        traceId, spanId: rootId, name: 'invoke_agent support', kind: 1, startTimeUnixNano: ns(0), endTimeUnixNano: ns(50),
        attributes: [attr('gen_ai.operation.name', 'invoke_agent'), attr('gen_ai.agent.name', 'support-bot')],
        status: { code: searchFails ? 2 : 1 },
      },
      {
        traceId, spanId: crypto.randomBytes(8).toString('hex'), parentSpanId: rootId, name: 'execute_tool search', kind: 1,
        startTimeUnixNano: ns(10), endTimeUnixNano: ns(40),
        attributes: [attr('gen_ai.operation.name', 'execute_tool'), attr('gen_ai.tool.name', 'search'), ...(searchFails ? [attr('error.type', 'TimeoutError')] : [])],
        status: searchFails ? { code: 2, message: 'search timed out' } : { code: 1 },
      },
    ],
  };
}

async function ingest(runs: ReturnType<typeof agentRun>[], key = ingestKey): Promise<void> {
  const body = {
    resourceSpans: [{
      resource: { attributes: [attr('service.name', 'support-service')] },
      scopeSpans: [{ scope: { name: 'monitor-test' }, spans: runs.flatMap((r) => r.spans) }],
    }],
  };
  const res = await fetch(`${svc.url}/v1/traces`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(200);
}

async function observed(monitorId: string): Promise<number> {
  const [row] = await svc.service.deps.sql<{ n: number }[]>`select count(*)::int as n from monitor_observations where monitor_id = ${monitorId}`;
  return row.n;
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function monitorIssue(monitorId: string) {
  const issues = (await svc.call('GET', `/projects/${projectId}/issues?limit=200`)).body.issues as { fingerprint: string | null }[];
  return issues.find((i) => i.fingerprint === `monitor:${monitorId}`) as any;
}

describe('monitors over ingested traces', () => {
  it('learns from 50 ingested traces and records its baseline', async () => {
    const monitor = (await svc.call('POST', `/projects/${projectId}/monitors`, {
      body: { name: 'Search failures', kind: 'tool', tool_name: 'search', issue_criteria: { error: true } },
    })).body;

    // 50 learning traces, one of them with a failing search call.
    const learning = Array.from({ length: 50 }, (_, i) => agentRun(i === 20));
    await ingest(learning.slice(0, 25));
    await ingest(learning.slice(25));
    await waitFor('50 observed traces', async () => (await observed(monitor.id)) === 50);
    await waitFor('the monitor to become active', async () => (await svc.call('GET', `/monitors/${monitor.id}`)).body.exploration_status === 'active');
    const [row] = await svc.service.deps.sql<{ baseline: any }[]>`select baseline from monitors where id = ${monitor.id}`;
    expect(row.baseline).toMatchObject({ traces: 50, calls: 50, matches: 1, rate: 0.02 });
  });

  it('opens an issue when failing search calls rise above the learned baseline', async () => {
    const monitor = (await svc.call('GET', `/projects/${projectId}/monitors`)).body.monitors[0];
    expect(monitor.exploration_status).toBe('active');
    await ingest([agentRun(false), agentRun(true), agentRun(true)]);
    await waitFor('53 observed traces', async () => (await observed(monitor.id)) === 53);
    expect(await monitorIssue(monitor.id)).toBeUndefined();
    await ingest([agentRun(true), agentRun(true)]);
    const issue = await waitFor('the monitor issue', () => monitorIssue(monitor.id));
    expect(issue).toMatchObject({ status: 'open' });
    expect(issue.title).toMatch(/Tool 'search'/);
    await waitFor('both rising traces attached', async () => (await monitorIssue(monitor.id))?.occurrence_count === 2);
  });
});

describe('span attributes in processed traces', () => {
  it('carries them only for projects where a monitor reads them, and such a monitor skips traces settled without them', async () => {
    const project = (await svc.newProject('monitor-attributes')).id;
    const key = await svc.newKey('ingest', { projectId: project });
    const payloads: ProcessedTrace[] = [];
    traceHooks(svc.service.deps).onTracesProcessed.push(async (traces) => {
      payloads.push(...traces.filter((t) => t.projectId === project));
    });
    const settled = (run: ReturnType<typeof agentRun>) => waitFor(`trace ${run.traceId}`, async () => payloads.find((p) => p.otelTraceId === run.traceId));

    // A tool monitor reads tool calls only: the payload carries no attributes.
    const tool = (await svc.call('POST', `/projects/${project}/monitors`, {
      body: { name: 'Search failures', kind: 'tool', tool_name: 'search', issue_criteria: { error: true } },
    })).body;
    const first = agentRun(false);
    await ingest([first], key);
    expect((await settled(first)).spanAttributes).toBeNull();
    await waitFor('the tool monitor to observe it', async () => (await observed(tool.id)) === 1);

    // A signal monitor with an attribute clause reads them: the next trace carries them.
    const signal = (await svc.call('POST', `/projects/${project}/monitors`, {
      body: { name: 'Search spans', seed_hint: 'gen_ai.tool.name=search' },
    })).body;
    const second = agentRun(false);
    await ingest([second], key);
    const carried = await settled(second);
    expect(Object.values(carried.spanAttributes ?? {})).toContainEqual(expect.objectContaining({ 'gen_ai.tool.name': 'search' }));
    await waitFor('both monitors to observe it', async () => (await observed(signal.id)) === 1 && (await observed(tool.id)) === 2);

    // A trace that settled without attributes is not observed by the signal monitor (the tool monitor observes it).
    await deliverProcessedTraces(traceHooks(svc.service.deps), [{ ...carried, traceId: crypto.randomUUID(), spanAttributes: null }]);
    expect(await observed(signal.id)).toBe(1);
    expect(await observed(tool.id)).toBe(3);
  });
});
