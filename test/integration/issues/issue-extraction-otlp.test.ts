import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../../helpers/service.js';
import { settledIssueEvents } from './issue-test-helpers.js';

let svc: TestService;

beforeAll(async () => {
  svc = await startTestService();
});
afterAll(async () => {
  await svc?.stop();
});

const str = (key: string, value: string) => ({ key, value: { stringValue: value } });

/** An OTLP/JSON export: an agent root span with a failing tool call (exception event) under it. */
function failingTrace(traceId: string, startMs: number, texts = { status: 'search backend timed out', type: 'TimeoutError' }) {
  const ns = (ms: number) => (BigInt(ms) * 1_000_000n).toString();
  const root = crypto.randomBytes(8).toString('hex');
  const tool = crypto.randomBytes(8).toString('hex');
  return {
    resourceSpans: [{
      resource: { attributes: [str('service.name', 'support-agent')] },
      scopeSpans: [{
        scope: { name: 'issues-e2e' },
        spans: [
          { traceId, spanId: root, name: 'invoke_agent support', kind: 1, startTimeUnixNano: ns(startMs), endTimeUnixNano: ns(startMs + 900),
            attributes: [str('gen_ai.agent.name', 'support')], status: { code: 1 } },
          { traceId, spanId: tool, parentSpanId: root, name: 'execute_tool search_docs', kind: 1, startTimeUnixNano: ns(startMs + 100), endTimeUnixNano: ns(startMs + 600),
            attributes: [str('gen_ai.tool.name', 'search_docs')],
            status: { code: 2, message: texts.status },
            events: [{ name: 'exception', timeUnixNano: ns(startMs + 600), attributes: [str('exception.type', texts.type), str('exception.message', 'timed out')] }] },
        ],
      }],
    }],
  };
}

async function until<T>(probe: () => Promise<T | null | undefined>, what: string, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('extraction end to end through POST /v1/traces', () => {
  it('a failing tool call in an ingested trace opens an issue and fills the trace blocks', async () => {
    const projectId = (await svc.newProject('otlp issues')).id;
    const ingestKey = await svc.newKey('ingest', { projectId });
    const otelTraceIds = [crypto.randomBytes(16).toString('hex'), crypto.randomBytes(16).toString('hex')];
    for (const [i, otelTraceId] of otelTraceIds.entries()) {
      const res = await fetch(`${svc.url}/v1/traces`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ingestKey}`, 'content-type': 'application/json' },
        body: JSON.stringify(failingTrace(otelTraceId, Date.now() - 10_000 + i * 1000)),
      });
      expect(res.status).toBe(200);
    }

    const issue = await until(async () => {
      const list = await svc.call('GET', `/projects/${projectId}/issues`);
      return list.body.issues?.[0]?.occurrence_count === 2 ? list.body.issues[0] : null;
    }, 'the issue with both occurrences');
    expect(issue).toMatchObject({ title: 'TimeoutError in tool search_docs', status: 'open', description: 'search backend timed out' });
    expect((await svc.call('GET', `/projects/${projectId}/issues`)).body.issues).toHaveLength(1);

    const traces = await svc.call('GET', `/projects/${projectId}/traces`);
    const trace = traces.body.traces.find((t: { otel_trace_id: string }) => t.otel_trace_id === otelTraceIds[0]);
    const detail = await until(async () => {
      const res = await svc.call('GET', `/traces/${trace.id}`);
      return res.body.issue_extraction?.status === 'completed' ? res.body : null;
    }, 'the extraction block');
    expect(detail.issue_extraction).toMatchObject({ status: 'completed', reason: 'failures_attached', issue_count: 1, occurrence_count: 1 });
    const bundle = await svc.call('GET', `/traces/${trace.id}?expand=context&project_id=${projectId}`);
    expect(bundle.status).toBe(200);
    expect(bundle.body.issue_occurrences).toEqual([
      expect.objectContaining({ issue_id: issue.id, issue_title: issue.title, issue_status: 'open' }),
    ]);

    const events = await settledIssueEvents(svc, [issue.id]);
    expect(events.map((e) => [e.name, e.actor, e.surface])).toEqual([['issue.created', 'system', 'system']]);
  });

  it('a failure message or type with a NUL (PostgreSQL text refuses it) still opens an issue, the NUL written as U+FFFD', async () => {
    const projectId = (await svc.newProject('otlp issues nul')).id;
    const ingestKey = await svc.newKey('ingest', { projectId });
    const otelTraceId = crypto.randomBytes(16).toString('hex');
    const res = await fetch(`${svc.url}/v1/traces`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ingestKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(failingTrace(otelTraceId, Date.now() - 10_000, { status: 'read 3 bytes: a\u0000b', type: 'IOError\u0000' })),
    });
    expect(res.status).toBe(200);
    const issue = await until(async () => (await svc.call('GET', `/projects/${projectId}/issues`)).body.issues?.[0], 'the issue');
    expect(issue).toMatchObject({ title: 'IOError\uFFFD in tool search_docs', description: 'read 3 bytes: a\uFFFDb', occurrence_count: 1 });
    const traces = await svc.call('GET', `/projects/${projectId}/traces`);
    const trace = traces.body.traces.find((t: { otel_trace_id: string }) => t.otel_trace_id === otelTraceId);
    const detail = await until(async () => {
      const got = await svc.call('GET', `/traces/${trace.id}`);
      return got.body.issue_extraction?.status === 'completed' ? got.body : null;
    }, 'the extraction block');
    expect(detail.issue_extraction).toMatchObject({ status: 'completed', reason: 'failures_attached', issue_count: 1, occurrence_count: 1 });
  });
});
