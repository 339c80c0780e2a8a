/**
 * A trace-detail page of a big settled trace reads only its page (the stored summary
 * and one keyset page of spans ordered by ClickHouse, trace-page.ts). Pinned against the
 * whole-trace path (trace-detail-build.ts) over the same stored spans: the same spans in the same
 * order with the same fields, the same trace-level fields, interchangeable cursors — including
 * groups of spans that start in the same nanosecond (parent and child, and unrelated spans of
 * different depths, ordered by depth), which the page must never split.
 */
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTraceDetail } from '../../../src/traces/trace-detail-build.js';
import { SMALL_TRACE_SPANS, storedTraceDetailPage } from '../../../src/traces/trace-page.js';
import { readTraceBytes } from '../../../src/traces/trace-store.js';
import { traceStats } from '../../../src/traces/trace-view.js';
import { startTestService, type TestService } from '../../helpers/service.js';
import { waitFor } from '../ingest/otlp-client.js';

const SPANS = 2600;
let svc: TestService;
let adminKey: string;
let tenantId: string;
let projectId: string;
const otelTraceId = crypto.randomBytes(16).toString('hex');
const startNs = BigInt(Date.now() - 60_000) * 1_000_000n;
const spanIdOf = (i: number) => (i + 1).toString(16).padStart(16, '0');

/**
 * Span i starts with its group of three (i / 3): 3k continues a chain (depth k), 3k+1 is its child
 * (same start), 3k+2 a child of the root (depth 1). So every group orders its last span id first,
 * by depth, and a page that split a group would miss it.
 */
function span(i: number) {
  const parent = i === 0 ? null : i % 3 === 0 ? i - 3 : i % 3 === 1 ? i - 1 : 0;
  const start = startNs + BigInt(Math.floor(i / 3)) * 1000n;
  return {
    traceId: otelTraceId,
    spanId: spanIdOf(i),
    ...(parent !== null ? { parentSpanId: spanIdOf(parent) } : {}),
    name: i === 0 ? 'invoke_agent pages' : `step ${i}`,
    kind: 1,
    startTimeUnixNano: start.toString(),
    endTimeUnixNano: (start + 5_000_000n).toString(),
    attributes: [
      ...(i === 0 ? [{ key: 'gen_ai.agent.name', value: { stringValue: 'pages-agent' } }, { key: 'gen_ai.operation.name', value: { stringValue: 'invoke_agent' } }] : []),
      ...(i % 50 === 5 ? [{ key: 'gen_ai.operation.name', value: { stringValue: 'chat' } }, { key: 'gen_ai.request.model', value: { stringValue: 'gpt-4o' } }, { key: 'gen_ai.usage.input_tokens', value: { intValue: '7' } }, { key: 'gen_ai.usage.output_tokens', value: { intValue: '3' } }] : []),
      { key: 'step.index', value: { intValue: String(i) } },
    ],
    events: i % 100 === 0 ? [{ timeUnixNano: start.toString(), name: 'mark', attributes: [{ key: 'k', value: { stringValue: 'v' } }] }] : [],
    status: i % 97 === 3 ? { code: 2, message: 'failed' } : {},
  };
}

async function send(spans: object[]): Promise<void> {
  const ingestKey = await svc.newKey('ingest', { key: adminKey });
  const res = await fetch(`${svc.url}/v1/traces`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${ingestKey}`, 'x-lookout-project': projectId },
    body: JSON.stringify({ resourceSpans: [{ resource: { attributes: [{ key: 'service.name', value: { stringValue: 'pages-svc' } }] }, scopeSpans: [{ scope: { name: 't' }, spans }] }] }),
  });
  expect(res.status).toBe(200);
}

async function settled(count: number): Promise<void> {
  await waitFor(async () => {
    const res = await svc.call('GET', `/projects/${projectId}/traces?limit=5`, { key: adminKey });
    const row = (res.body.traces as { otel_trace_id: string; span_count: number }[]).find((t) => t.otel_trace_id === otelTraceId);
    return row?.span_count === count ? true : undefined;
  }, 120_000, `the trace to settle with ${count} spans`);
}

const view = { includeAttributes: true, includeEvents: true };

/** The whole-trace path over the stored spans: every span, in order, and the summary it computes. */
async function wholeTrace(cursor: string | null = null, limit = 100_000) {
  const rows = await readTraceBytes(svc.service.deps.ch, { tenantId, projectId }, otelTraceId);
  const built = buildTraceDetail({ rows, view, page: { form: 'default', limit, cursor } });
  if (!built.found || built.invalidCursor) throw new Error('whole path found no trace');
  return built;
}

beforeAll(async () => {
  // A trace re-opened by log records (no root in that write) settles TRACE_MAX_WAIT_MS after them.
  svc = await startTestService({ TRACE_SETTLE_MS: '500', TRACE_MAX_WAIT_MS: '3000' });
  ({ tenantId, adminKey } = await svc.newTenant('pages'));
  projectId = (await svc.newProject('pages', adminKey)).id;
  await send(Array.from({ length: SPANS }, (_, i) => span(i)));
  await settled(SPANS);
}, 180_000);

afterAll(async () => {
  await svc?.stop();
});

describe('trace-detail pages of a big settled trace', () => {
  it('are served from the stored summary and one page of spans', async () => {
    expect(SPANS).toBeGreaterThan(SMALL_TRACE_SPANS);
    const page = await storedTraceDetailPage(svc.service.deps.ch, svc.service.deps.compute, { tenantId, projectId }, otelTraceId, { view, limit: 10, cursor: null });
    expect(page).toMatchObject({ found: true, spansTotal: SPANS });
  });

  it('answer the same spans, order, fields and trace-level values as the whole-trace path', async () => {
    const whole = await wholeTrace();
    const expected = JSON.parse(whole.spansJson) as { otel_span_id: string }[];
    expect(expected).toHaveLength(SPANS);
    const got: unknown[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res: { status: number; body: any } = await svc.call('GET', `/traces/${otelTraceId}?span_limit=301${cursor ? `&span_cursor=${cursor}` : ''}`, { key: adminKey });
      expect(res.status).toBe(200);
      expect(res.body.spans_total).toBe(SPANS);
      expect(res.body.stats).toEqual(traceStats(whole.trace));
      expect(res.body).toMatchObject({ agent_name: 'pages-agent', service_name: 'pages-svc', has_error: true, total_duration_ms: whole.trace.total_duration_ms, otel_trace_id: otelTraceId });
      got.push(...res.body.spans);
      cursor = res.body.next_span_cursor;
      pages++;
    } while (cursor !== null && pages < 20);
    expect(pages).toBe(Math.ceil(SPANS / 301));
    expect(got).toEqual(expected);
    // Same-start groups are ordered by depth: 3k+2 (under the root), then 3k, then its child 3k+1.
    const order = expected.map((s) => s.otel_span_id);
    expect(order.slice(3 * 100, 3 * 101)).toEqual([spanIdOf(302), spanIdOf(300), spanIdOf(301)]);
  }, 120_000);

  it('takes the cursors of the whole-trace path and gives ones it takes', async () => {
    const first = await svc.call('GET', `/traces/${otelTraceId}?span_limit=400`, { key: adminKey });
    const wholeNext = await wholeTrace(first.body.next_span_cursor as string, 400);
    const storedNext = await svc.call('GET', `/traces/${otelTraceId}?span_limit=400&span_cursor=${first.body.next_span_cursor}`, { key: adminKey });
    expect(storedNext.body.spans).toEqual(JSON.parse(wholeNext.spansJson));
    expect(storedNext.body.next_span_cursor).toBe(wholeNext.nextCursor);
    const bad = await svc.call('GET', `/traces/${otelTraceId}?span_cursor=nonsense`, { key: adminKey });
    expect(bad.status).toBe(400);
  }, 60_000);

  it('falls back to the whole trace while log records are newer than the summary, and pages join them once it is settled again', async () => {
    const readNow = async () =>
      (await svc.call('GET', `/traces/${otelTraceId}?span_limit=1`, { key: adminKey })).body as { agent_output: unknown; spans: { events: { name: string }[] }[] };
    expect((await readNow()).agent_output).toBeNull();
    const ingestKey = await svc.newKey('ingest', { key: adminKey });
    const nowNs = (BigInt(Date.now()) * 1_000_000n).toString();
    const record = (spanId: string, eventName: string, body: object) => ({ timeUnixNano: nowNs, traceId: otelTraceId, spanId, eventName, body });
    const answer = { index: 0, finish_reason: 'stop', message: { role: 'assistant', content: 'all pages done' } };
    const res = await fetch(`${svc.url}/v1/logs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${ingestKey}`, 'x-lookout-project': projectId },
      body: JSON.stringify({
        resourceLogs: [
          {
            scopeLogs: [
              {
                logRecords: [
                  record(spanIdOf(2555), 'gen_ai.choice', { kvlistValue: { values: [{ key: 'index', value: { intValue: '0' } }, { key: 'finish_reason', value: { stringValue: 'stop' } }, { key: 'message', value: { kvlistValue: { values: [{ key: 'role', value: { stringValue: 'assistant' } }, { key: 'content', value: { stringValue: answer.message.content } }] } } }] } }),
                  record(spanIdOf(0), 'app.checkpoint', { stringValue: 'half way' }),
                ],
              },
            ],
          },
        ],
      }),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({});
    const expectedOutput = [{ role: 'assistant', parts: [{ type: 'text', content: 'all pages done' }], finish_reason: 'stop' }];
    // Until the trace settles again the stored summary does not have them: the whole trace is read.
    expect(await storedTraceDetailPage(svc.service.deps.ch, svc.service.deps.compute, { tenantId, projectId }, otelTraceId, { view, limit: 10, cursor: null })).toBeNull();
    expect((await readNow()).agent_output).toEqual(expectedOutput);
    // Settled again: served from the summary and a page again, with the records joined.
    const page = await waitFor(
      async () => (await storedTraceDetailPage(svc.service.deps.ch, svc.service.deps.compute, { tenantId, projectId }, otelTraceId, { view, limit: 1, cursor: null })) ?? undefined,
      60_000,
      'the trace settled again with its records',
    );
    if (!page.found || page.invalidCursor) throw new Error('no page');
    expect(JSON.parse(String(page.trace.agent_output))).toEqual(expectedOutput);
    const [root] = JSON.parse(page.spansJson) as { otel_span_id: string; events: { name: string; attributes: Record<string, unknown> }[] }[];
    expect(root.otel_span_id).toBe(spanIdOf(0));
    expect(root.events.map((e) => [e.name, e.attributes])).toEqual([
      ['mark', { k: 'v' }],
      ['app.checkpoint', { 'log.body': 'half way' }],
    ]);
  }, 90_000);

  it('falls back to the whole trace once more spans arrive than the summary counted', async () => {
    await send([span(SPANS)]);
    const page = await storedTraceDetailPage(svc.service.deps.ch, svc.service.deps.compute, { tenantId, projectId }, otelTraceId, { view, limit: 10, cursor: null });
    expect(page).toBeNull();
    const res = await svc.call('GET', `/traces/${otelTraceId}?span_limit=5`, { key: adminKey });
    expect(res.body.spans_total).toBe(SPANS + 1);
    expect(res.body.stats.span_count).toBe(SPANS + 1);
  }, 60_000);
});

describe('the default form at the small-trace bound', () => {
  /** A settled trace of `count` spans under one root, each starting a microsecond after the last. */
  async function storedTrace(count: number): Promise<string> {
    const id = crypto.randomBytes(16).toString('hex');
    const spanId = (i: number) => (i + 1).toString(16).padStart(16, '0');
    await send(
      Array.from({ length: count }, (_, i) => ({
        traceId: id,
        spanId: spanId(i),
        ...(i > 0 ? { parentSpanId: spanId(0) } : {}),
        name: i === 0 ? 'invoke_agent bound' : `step ${i}`,
        kind: 1,
        startTimeUnixNano: (startNs + BigInt(i) * 1000n).toString(),
        endTimeUnixNano: (startNs + BigInt(i) * 1000n + 1_000_000n).toString(),
      })),
    );
    await waitFor(async () => {
      const res = await svc.call('GET', `/projects/${projectId}/traces?limit=10`, { key: adminKey });
      return (res.body.traces as { otel_trace_id: string; span_count: number }[]).some((t) => t.otel_trace_id === id && t.span_count === count) ? true : undefined;
    }, 120_000, `the ${count}-span trace to settle`);
    return id;
  }

  it('answers a trace of exactly that many spans whole, and one of one span more in pages', async () => {
    const whole = await svc.call('GET', `/traces/${await storedTrace(SMALL_TRACE_SPANS)}`, { key: adminKey });
    expect(whole.status).toBe(200);
    expect(whole.body.spans).toHaveLength(SMALL_TRACE_SPANS);
    expect(whole.body).not.toHaveProperty('spans_total');
    expect(whole.body.stats.span_count).toBe(SMALL_TRACE_SPANS);

    const bigId = await storedTrace(SMALL_TRACE_SPANS + 1);
    const first = await svc.call('GET', `/traces/${bigId}`, { key: adminKey });
    expect(first.status).toBe(200);
    expect(first.body.spans).toHaveLength(SMALL_TRACE_SPANS);
    expect(first.body.spans_total).toBe(SMALL_TRACE_SPANS + 1);
    const rest = await svc.call('GET', `/traces/${bigId}?span_cursor=${first.body.next_span_cursor}`, { key: adminKey });
    expect(rest.body.spans.map((s: { name: string }) => s.name)).toEqual([`step ${SMALL_TRACE_SPANS}`]);
    expect(rest.body.next_span_cursor).toBeNull();
  }, 120_000);
});
