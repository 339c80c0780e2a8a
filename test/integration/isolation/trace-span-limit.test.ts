import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeDir, startTestService, type TestService } from '../../helpers/service.js';
import { chainRequests } from '../../helpers/span-chain.js';

/**
 * TRACE_MAX_SPANS bounds the spans stored per trace.
 * Spans past it are rejected through OTLP partial_success with a message naming the trace and the
 * limit; the count holds across requests, and re-sent spans are duplicates, not new spans.
 */

let svc: TestService;
let project: { id: string };

beforeAll(async () => {
  svc = await startTestService({ TRACE_MAX_SPANS: '50' });
  project = await svc.newProject('span limit');
});

afterAll(async () => {
  await svc?.stop();
  if (svc) removeDir(svc.dataDir);
});

async function send(body: object): Promise<{ status: number; body: any }> {
  const res = await fetch(`${svc.url}/v1/traces`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${svc.adminKey}`, 'x-lookout-project': project.id },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

describe('per-trace span limit', () => {
  it('stores up to TRACE_MAX_SPANS spans of a trace and rejects the rest through partial_success', async () => {
    // 80 spans in 4 requests of 20: the limit (50) falls inside the third request.
    const { traceId, bodies } = chainRequests({ length: 80, requests: 4 });
    const other = chainRequests({ length: 5 });
    expect((await send(bodies[0])).body).toEqual({});
    expect((await send(bodies[1])).body).toEqual({});
    const third = await send(bodies[2]);
    expect(third.status).toBe(200);
    expect(third.body.partialSuccess.rejectedSpans).toBe('10');
    expect(third.body.partialSuccess.errorMessage).toBe(
      `rejected 10 spans: trace ${traceId} reached the limit of 50 spans per trace (TRACE_MAX_SPANS)`,
    );
    const fourth = await send(bodies[3]);
    expect(fourth.body.partialSuccess.rejectedSpans).toBe('20');
    // A re-sent part: its stored spans are duplicates (acknowledged), the others still over the limit.
    const again = await send(bodies[2]);
    expect(again.body.partialSuccess.rejectedSpans).toBe('10');
    // Another trace is not affected.
    expect((await send(other.bodies[0])).body).toEqual({});

    const detail = await svc.call('GET', `/traces/${traceId}`);
    expect(detail.status).toBe(200);
    expect(detail.body.stats.span_count).toBe(50);
    expect(detail.body.spans).toHaveLength(50);
    // The first 50 spans of the chain are the stored ones.
    expect(detail.body.spans.map((s: { otel_span_id: string }) => s.otel_span_id)).toEqual(
      Array.from({ length: 50 }, (_, i) => (i + 1).toString(16).padStart(16, '0')),
    );
  });

  it('pages the default detail form by span_limit and span_cursor, and rejects a bad cursor', async () => {
    const { traceId, bodies } = chainRequests({ length: 30 });
    await send(bodies[0]);
    const first = await svc.call('GET', `/traces/${traceId}?span_limit=12`);
    expect(first.body).toMatchObject({ spans_total: 30, next_span_cursor: expect.any(String) });
    expect(first.body.spans).toHaveLength(12);
    const second = await svc.call('GET', `/traces/${traceId}?span_limit=12&span_cursor=${first.body.next_span_cursor}`);
    const third = await svc.call('GET', `/traces/${traceId}?span_limit=12&span_cursor=${second.body.next_span_cursor}`);
    expect(third.body.next_span_cursor).toBeNull();
    const ids = [...first.body.spans, ...second.body.spans, ...third.body.spans].map((s: { otel_span_id: string }) => s.otel_span_id);
    expect(ids).toEqual(Array.from({ length: 30 }, (_, i) => (i + 1).toString(16).padStart(16, '0')));
    // A trace within one page keeps the plain shape: no paging fields.
    const whole = await svc.call('GET', `/traces/${traceId}`);
    expect(whole.body.spans).toHaveLength(30);
    expect(whole.body).not.toHaveProperty('spans_total');
    expect(whole.body).not.toHaveProperty('next_span_cursor');

    const bad = await svc.call('GET', `/traces/${traceId}?span_cursor=not-a-cursor`);
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ detail: 'span_cursor: invalid cursor', code: 'validation_error' });
    const mixed = await svc.call('GET', `/traces/${traceId}?expand=context&project_id=${project.id}&span_limit=5`);
    expect(mixed.status).toBe(400);
  });
});
