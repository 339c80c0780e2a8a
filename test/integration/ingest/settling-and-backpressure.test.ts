import { afterAll, describe, expect, it } from 'vitest';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { lookoutTraceId } from '../../../src/spans/trace-id.js';
import { removeDir, startTestService, type TestService } from '../../helpers/service.js';
import { tempDataDir } from '../../helpers/temp-dir.js';
import { GEN_AI_RUN, runGenAiSupportAgent } from '../../unit/ingest/fixtures/gen-ai-agent-run.js';
import { postOtlp, protobufBody, waitFor } from './otlp-client.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach(removeDir));

function agentRun(): { spans: ReadableSpan[]; otelTraceId: string } {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'settle-svc' }),
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  const otelTraceId = runGenAiSupportAgent(provider.getTracer('settle'));
  return { spans: exporter.getFinishedSpans(), otelTraceId };
}

async function processedRows(svc: TestService, traceId: string) {
  const { ch } = svc.service.deps;
  const res = await ch.client.query({
    query: `SELECT input_tokens, output_tokens, error_count FROM ${ch.table('event_trace_processed')} FINAL WHERE trace_id = {t:String}`,
    query_params: { t: traceId },
    format: 'JSONEachRow',
    clickhouse_settings: { output_format_json_quote_64bit_integers: 0 },
  });
  return res.json<{ input_tokens: number; output_tokens: number; error_count: number }>();
}

describe('trace settling', () => {
  it('re-processes a trace when a late span arrives; the newer row replaces the older', async () => {
    const dataDir = tempDataDir();
    dirs.push(dataDir);
    const svc = await startTestService({ TRACE_SETTLE_MS: '200' }, dataDir);
    try {
      const project = await svc.newProject('late spans');
      const run = agentRun();
      const traceId = lookoutTraceId(project.id, run.otelTraceId);
      const late = run.spans.find((s) => s.name === 'chat claude-3-5-haiku-20241022')!;
      const early = run.spans.filter((s) => s !== late);
      const send = (spans: ReadableSpan[]) => postOtlp(svc.url, svc.adminKey, protobufBody(spans), { headers: { 'x-lookout-project': project.id } });
      expect((await send(early)).status).toBe(200);
      const first = await waitFor(async () => {
        const rows = await processedRows(svc, traceId);
        return rows.length === 1 ? rows[0] : undefined;
      }, 10_000, 'first processing');
      expect(first).toEqual({ input_tokens: 900, output_tokens: 40, error_count: 1 });
      expect((await svc.call('GET', `/traces/${traceId}`)).body.stats.span_count).toBe(4);

      expect((await send([late])).status).toBe(200);
      const second = await waitFor(async () => {
        const rows = await processedRows(svc, traceId);
        return rows.length === 1 && rows[0].input_tokens === 2000 ? rows[0] : undefined;
      }, 10_000, 'second processing');
      expect(second).toEqual({ input_tokens: 2000, output_tokens: 100, error_count: 1 });
      // A settle round writes trace.processed, then the traces row: the list may trail by that insert.
      const listed = await waitFor(async () => {
        const page = await svc.call('GET', `/projects/${project.id}/traces`);
        const mine = page.body.traces.filter((t: { id: string }) => t.id === traceId);
        return mine.length === 1 && mine[0].span_count === 5 ? mine : undefined;
      }, 10_000, 'the listed trace re-processed');
      expect(listed).toEqual([expect.objectContaining({ span_count: 5, total_tokens: 2100 })]);
    } finally {
      await svc.stop();
    }
  });

  it('settles open traces on graceful shutdown', async () => {
    const dataDir = tempDataDir();
    dirs.push(dataDir);
    // Settling would take a minute on its own: only the shutdown can have done it.
    const svc = await startTestService({ TRACE_SETTLE_MS: '60000', TRACE_MAX_WAIT_MS: '120000' }, dataDir);
    const project = await svc.newProject('shutdown');
    const run = agentRun();
    expect((await postOtlp(svc.url, svc.adminKey, protobufBody(run.spans), { headers: { 'x-lookout-project': project.id } })).status).toBe(200);
    const traceId = lookoutTraceId(project.id, run.otelTraceId);
    expect(await processedRows(svc, traceId)).toEqual([]);
    await svc.stop();

    const again = await startTestService({ TRACE_SETTLE_MS: '60000' }, dataDir);
    try {
      expect(await processedRows(again, traceId)).toEqual([{ input_tokens: 2000, output_tokens: 100, error_count: 1 }]);
      const listed = await again.call('GET', `/projects/${project.id}/traces`);
      expect(listed.body.traces.map((t: { id: string; agent_name: string }) => [t.id, t.agent_name])).toEqual([[traceId, GEN_AI_RUN.agentName]]);
    } finally {
      await again.stop();
    }
  });
});

describe('back-pressure', () => {
  it('answers 429 with Retry-After over the in-flight bound, and the retry succeeds', async () => {
    const dataDir = tempDataDir();
    dirs.push(dataDir);
    // Room for one request at a time (a request is always admitted when nothing is in flight).
    const svc = await startTestService({ INGEST_MAX_INFLIGHT_BYTES: '1000', INGEST_FLUSH_MS: '200' }, dataDir);
    try {
      const project = await svc.newProject('pressure');
      const runs = Array.from({ length: 6 }, agentRun);
      const send = (spans: ReadableSpan[]) => postOtlp(svc.url, svc.adminKey, protobufBody(spans), { headers: { 'x-lookout-project': project.id } });
      const answers = await Promise.all(runs.map((r) => send(r.spans)));
      const refused = answers.filter((a) => a.status === 429);
      expect(refused.length).toBeGreaterThan(0);
      expect(answers.every((a) => a.status === 200 || a.status === 429)).toBe(true);
      for (const a of refused) {
        expect(a.headers.get('retry-after')).toBe('1');
        expect(a.contentType).toBe('application/x-protobuf');
      }
      // An exporter retries after Retry-After; then every run is stored exactly once.
      for (const [i, a] of answers.entries()) {
        if (a.status === 429) expect((await send(runs[i].spans)).status).toBe(200);
      }
      for (const r of runs) {
        const detail = await svc.call('GET', `/traces/${lookoutTraceId(project.id, r.otelTraceId)}`);
        expect(detail.body.stats.span_count).toBe(5);
      }
    } finally {
      await svc.stop();
    }
  });
});
