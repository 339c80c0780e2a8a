import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SpanStatusCode } from '@opentelemetry/api';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { lookoutTraceId } from '../../../src/spans/trace-id.js';
import { PREVIEW_PROCESSED_AT } from '../../../src/spans/trace-preview.js';
import { startTestService, type TestService } from '../../helpers/service.js';
import { runGenAiSupportAgent } from '../../unit/ingest/fixtures/gen-ai-agent-run.js';
import { postOtlp, protobufBody, waitFor } from '../ingest/otlp-client.js';

/**
 * A trace is listed from the request that stores its first spans (with include_unsettled=true; the
 * preview is written just after that request is answered), marked `settled: false`, and its settled
 * summary replaces that preview whichever lands first.
 */

function recordRun(projectId: string): { spans: ReadableSpan[]; traceId: string } {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'preview-svc' }),
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  const otelTraceId = runGenAiSupportAgent(provider.getTracer('trace-previews'));
  return { spans: exporter.getFinishedSpans(), traceId: lookoutTraceId(projectId, otelTraceId) };
}

async function send(svc: TestService, projectId: string, spans: ReadableSpan[]): Promise<void> {
  const res = await postOtlp(svc.url, svc.adminKey, protobufBody(spans), { headers: { 'x-lookout-project': projectId } });
  expect(res.status).toBe(200);
}

async function listed(svc: TestService, projectId: string, query = ''): Promise<any[]> {
  const res = await svc.call('GET', `/projects/${projectId}/traces?limit=200${query}`);
  expect(res.status).toBe(200);
  return res.body.traces;
}

describe('a trace not settled yet', () => {
  let svc: TestService;
  let project: { id: string };
  let run: { spans: ReadableSpan[]; traceId: string };

  beforeAll(async () => {
    // Settling waits longer than the test runs: every answer below comes before the summary.
    svc = await startTestService({ TRACE_SETTLE_MS: '120000', TRACE_MAX_WAIT_MS: '120000' });
    project = await svc.newProject('previews');
    run = recordRun(project.id);
    await send(svc, project.id, run.spans);
  });
  afterAll(async () => {
    await svc?.stop();
  });

  it('is listed with include_unsettled moments after its spans are acknowledged, settled: false', async () => {
    // The writer writes the preview right after answering (long before the 120 s settle).
    const rows = await waitFor(async () => {
      const found = (await listed(svc, project.id, '&include_unsettled=true')).filter((t) => t.id === run.traceId);
      return found.length > 0 ? found : undefined;
    }, 5_000, 'the trace listed unsettled');
    expect(rows).toHaveLength(1);
    const [row] = rows;
    expect(row.settled).toBe(false);
    expect(row.span_count).toBe(run.spans.length);
    expect(row.service_name).toBe('preview-svc');
    expect(row.agent_name).not.toBe('');
    const errors = run.spans.filter((s) => s.status.code === SpanStatusCode.ERROR).length;
    expect(errors).toBeGreaterThan(0);
    expect(row.has_error).toBe(true);
    expect(row.error_count).toBe(errors);
    // What only the summary knows is still empty.
    expect(row.total_tokens).toBe(0);
    expect(row.estimated_cost_usd).toBeNull();
    expect(row.tool_call_count).toBe(0);
  });

  it('is not listed without include_unsettled', async () => {
    expect((await listed(svc, project.id)).map((t) => t.id)).not.toContain(run.traceId);
  });

  it('answers its detail from its spans, not from the preview', async () => {
    const res = await svc.call('GET', `/traces/${run.traceId}`);
    expect(res.status).toBe(200);
    expect(res.body.spans).toHaveLength(run.spans.length);
    // The detail's figures come from the spans: the model calls' tokens are there.
    expect(res.body.stats.total_tokens).toBeGreaterThan(0);
  });

  it('is listed once when a request brings more of its spans', async () => {
    await send(svc, project.id, run.spans.slice(0, 2));
    const rows = (await listed(svc, project.id, '&include_unsettled=true')).filter((t) => t.id === run.traceId);
    expect(rows).toHaveLength(1);
  });
});

describe('a settled trace', () => {
  let svc: TestService;
  let project: { id: string };
  let run: { spans: ReadableSpan[]; traceId: string };
  let summary: any;

  beforeAll(async () => {
    svc = await startTestService({ TRACE_SETTLE_MS: '300' });
    project = await svc.newProject('previews settled');
    run = recordRun(project.id);
    await send(svc, project.id, run.spans);
    summary = await waitFor(async () => (await listed(svc, project.id)).find((t) => t.id === run.traceId), 15_000, 'the settled trace');
  });
  afterAll(async () => {
    await svc?.stop();
  });

  it('has its summary in place of the preview, listed once either way', async () => {
    expect(summary.settled).toBe(true);
    expect(summary.total_tokens).toBeGreaterThan(0);
    const rows = (await listed(svc, project.id, '&include_unsettled=true')).filter((t) => t.id === run.traceId);
    expect(rows).toEqual([summary]);
  });

  it('keeps its summary when a preview lands after it', async () => {
    const ch = svc.service.deps.ch;
    const late = {
      tenant_id: svc.service.bootstrap!.tenantId,
      project_id: project.id,
      trace_id: run.traceId,
      otel_trace_id: summary.otel_trace_id,
      timestamp: summary.timestamp.replace('T', ' ').replace('Z', ''),
      service_name: 'late-preview',
      agent_name: summary.agent_name,
      thread_id: '',
      release: '',
      tool_calls: '[]',
      has_error: 0,
      total_duration_ms: 1,
      span_count: 1,
      error_count: 0,
      preview: 1,
      processed_at: PREVIEW_PROCESSED_AT,
    };
    await ch.insertLines(ch.table('traces'), [JSON.stringify(late)], 'ingest');
    for (const query of ['', '&include_unsettled=true']) {
      const rows = (await listed(svc, project.id, query)).filter((t) => t.id === run.traceId);
      expect(rows).toEqual([summary]);
    }
    const detail = await svc.call('GET', `/traces/${run.traceId}`);
    expect(detail.body.service_name).toBe('preview-svc');
  });
});

