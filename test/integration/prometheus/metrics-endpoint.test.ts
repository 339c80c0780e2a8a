import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentRunRequest } from '../../helpers/otlp-json.js';
import { freePort, sampleSum, scrape, type Family } from '../../helpers/prometheus-text.js';
import { removeDir, startTestService, type TestService } from '../../helpers/service.js';
import { tempDataDir } from '../../helpers/temp-dir.js';
import { postOtlp, waitFor } from '../ingest/otlp-client.js';

/**
 * The Prometheus listener of a running service: after real ingest, a scrape parses in full (every
 * family declared, every sample a number), the counters moved by what was sent, the levels read on
 * scrape are there, and no label carries an id.
 */
const dataDir = tempDataDir();
let svc: TestService;
let metricsUrl: string;

beforeAll(async () => {
  const port = await freePort();
  svc = await startTestService({ METRICS_PORT: String(port), METRICS_HOST: '127.0.0.1', TRACE_SETTLE_MS: '200' }, dataDir);
  metricsUrl = svc.service.metricsUrl!;
});

afterAll(async () => {
  await svc?.stop();
  removeDir(dataDir);
});

const FORBIDDEN_LABELS = /tenant|project|trace_id|^trace$|key|user/;

function assertBoundedLabels(families: Map<string, Family>): void {
  for (const family of families.values()) {
    for (const sample of family.samples) {
      for (const [label, value] of Object.entries(sample.labels)) {
        expect(label, `${family.name} label ${label}`).not.toMatch(FORBIDDEN_LABELS);
        // No UUID or trace id in any value.
        expect(value, `${family.name} ${label}`).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-|[0-9a-f]{32}/);
      }
    }
  }
}

describe('metrics endpoint', () => {
  it('answers on its own listener with the configured address, not on the API port', async () => {
    expect(metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    expect(new URL(metricsUrl).port).not.toBe(String(svc.service.port));
    expect((await fetch(`${svc.url}/metrics`)).status).toBe(404);
    expect((await fetch(metricsUrl.replace('/metrics', '/other'))).status).toBe(404);
  });

  it('counts ingest, settling and queries by the amounts that happened, and every family parses', async () => {
    const project = await svc.newProject('metrics');
    const before = await scrape(metricsUrl);

    const runs = [
      { start: new Date(), agent: 'metrics-agent', generations: [{ model: 'gpt-4o', input: 10, output: 5 }], tools: [{ name: 'search' }] },
      { start: new Date(), agent: 'metrics-agent', generations: [{ model: 'gpt-4o', input: 10, output: 5 }, { model: 'gpt-4o', input: 1, output: 1 }], failed: true },
      { start: new Date(), agent: 'metrics-agent', generations: [], tools: [{ name: 'a' }, { name: 'b', error: true }] },
    ];
    let spans = 0;
    let bodyBytes = 0;
    for (const run of runs) {
      const { body } = agentRunRequest(run);
      spans += JSON.parse(body).resourceSpans[0].scopeSpans[0].spans.length;
      bodyBytes += Buffer.byteLength(body);
      const res = await postOtlp(svc.url, svc.adminKey, body, { contentType: 'application/json', headers: { 'x-lookout-project': project.id } });
      expect(res.status).toBe(200);
    }
    // One span with an invalid id: rejected through partial_success, its neighbour kept.
    const bad = JSON.parse(agentRunRequest({ start: new Date(), agent: 'metrics-agent', generations: [] }).body);
    const root = bad.resourceSpans[0].scopeSpans[0].spans[0];
    bad.resourceSpans[0].scopeSpans[0].spans.push({ ...root, spanId: 'zz' });
    const partial = await postOtlp(svc.url, svc.adminKey, JSON.stringify(bad), { contentType: 'application/json', headers: { 'x-lookout-project': project.id } });
    expect(partial.status).toBe(200);
    spans += 1;
    // Refused before anything is read: no key.
    expect((await postOtlp(svc.url, null, '{}', { contentType: 'application/json' })).status).toBe(401);

    let listCalls = 0;
    await waitFor(async () => {
      listCalls++;
      const res = await svc.call('GET', `/projects/${project.id}/traces?limit=10`);
      return res.body.traces.length === 4 ? true : undefined;
    }, 20_000, 'four traces listed');
    const view = await svc.call('GET', `/projects/${project.id}/analytics?view=general&hours=1`);
    expect(view.status).toBe(200);

    // Settling finishes its claims after the rows are listed: wait for the queue to empty.
    const after = await waitFor(async () => {
      const families = await scrape(metricsUrl);
      return sampleSum(families, 'lookout_settle_queue_depth') === 0 && sampleSum(families, 'lookout_trace_hooks_pending') === 0 ? families : undefined;
    }, 20_000, 'settle queue empty');
    const delta = (family: string, labels: Record<string, string> = {}, sample = family) => sampleSum(after, family, labels, sample) - sampleSum(before, family, labels, sample);

    expect(delta('lookout_ingest_spans_accepted_total')).toBe(spans);
    expect(delta('lookout_ingest_spans_rejected_total', { reason: 'invalid' })).toBe(1);
    expect(delta('lookout_ingest_spans_rejected_total', { reason: 'trace_span_limit' })).toBe(0);
    expect(delta('lookout_ingest_spans_duplicate_total')).toBe(0);
    expect(delta('lookout_ingest_requests_total', { code: 'ok' })).toBe(4);
    expect(delta('lookout_ingest_requests_total', { code: 'unauthorized' })).toBe(1);
    expect(delta('lookout_ingest_request_body_bytes', {}, 'lookout_ingest_request_body_bytes_count')).toBe(4);
    expect(delta('lookout_ingest_request_body_bytes', {}, 'lookout_ingest_request_body_bytes_sum')).toBe(bodyBytes + Buffer.byteLength(JSON.stringify(bad)));
    expect(delta('lookout_settle_traces_total')).toBe(4);
    expect(delta('lookout_settle_rounds_total', { outcome: 'ok' })).toBeGreaterThanOrEqual(1);
    expect(delta('lookout_settle_rounds_total', { outcome: 'failed' })).toBe(0);
    expect(delta('lookout_settle_round_duration_seconds', {}, 'lookout_settle_round_duration_seconds_count')).toBe(delta('lookout_settle_rounds_total', { outcome: 'ok' }));
    // Each round's steps are timed; every round was claimed, and claims that found nothing count too.
    const phase = (name: string) => delta('lookout_settle_phase_duration_seconds', { phase: name }, 'lookout_settle_phase_duration_seconds_count');
    for (const name of ['read', 'summarize', 'write']) expect(phase(name), name).toBe(delta('lookout_settle_rounds_total', { outcome: 'ok' }));
    // Hooks and the finish are timed as they end, which the emptied queue may show a moment before.
    for (const name of ['hooks', 'finish']) {
      expect(phase(name), name).toBeGreaterThanOrEqual(1);
      expect(phase(name), name).toBeLessThanOrEqual(delta('lookout_settle_rounds_total', { outcome: 'ok' }));
    }
    expect(phase('claim')).toBeGreaterThanOrEqual(delta('lookout_settle_rounds_total', { outcome: 'ok' }));
    // Every flush registered, checked, inserted and recorded its traces.
    const flushes = delta('lookout_ingest_flush_phase_duration_seconds', { phase: 'record' }, 'lookout_ingest_flush_phase_duration_seconds_count');
    expect(flushes).toBeGreaterThanOrEqual(1);
    for (const name of ['register', 'check', 'insert']) {
      expect(delta('lookout_ingest_flush_phase_duration_seconds', { phase: name }, 'lookout_ingest_flush_phase_duration_seconds_count'), name).toBe(flushes);
    }
    // Issue extraction and monitors ran over the settled traces without failing.
    expect(delta('lookout_trace_hook_groups_total', { outcome: 'ok' })).toBeGreaterThanOrEqual(2);
    expect(delta('lookout_trace_hook_groups_total', { outcome: 'failed' })).toBe(0);
    expect(delta('lookout_http_request_duration_seconds', { route: '/projects/{project_id}/traces', method: 'GET', status_class: '2xx' }, 'lookout_http_request_duration_seconds_count')).toBe(listCalls);
    expect(delta('lookout_analytics_view_duration_seconds', { view: 'general' }, 'lookout_analytics_view_duration_seconds_count')).toBe(1);
    expect(delta('lookout_clickhouse_statement_duration_seconds', { lane: 'ingest' }, 'lookout_clickhouse_statement_duration_seconds_count')).toBeGreaterThan(0);
    expect(delta('lookout_clickhouse_statement_duration_seconds', { lane: 'interactive' }, 'lookout_clickhouse_statement_duration_seconds_count')).toBeGreaterThanOrEqual(listCalls);
    expect(delta('lookout_clickhouse_statement_duration_seconds', { lane: 'analytics' }, 'lookout_clickhouse_statement_duration_seconds_count')).toBeGreaterThan(0);
    expect(delta('lookout_compute_task_duration_seconds', { task: 'prepare-ingest' }, 'lookout_compute_task_duration_seconds_count')).toBe(4);
    // Each task's wait for the worker is part of its time.
    expect(delta('lookout_compute_task_wait_seconds', { task: 'prepare-ingest' }, 'lookout_compute_task_wait_seconds_count')).toBe(4);
    expect(delta('lookout_compute_task_wait_seconds', { task: 'settle-summaries' }, 'lookout_compute_task_wait_seconds_sum'))
      .toBeLessThanOrEqual(delta('lookout_compute_task_duration_seconds', { task: 'settle-summaries' }, 'lookout_compute_task_duration_seconds_sum'));
    expect(delta('lookout_compute_task_wait_seconds', { task: 'settle-summaries' }, 'lookout_compute_task_wait_seconds_count')).toBeGreaterThanOrEqual(1);
    expect(delta('lookout_clickhouse_statement_errors_total')).toBe(0);

    // Levels read on scrape.
    expect(sampleSum(after, 'lookout_ingest_budget_limit_bytes')).toBe(svc.service.deps.config.ingestMaxInflightBytes);
    expect(sampleSum(after, 'lookout_ingest_budget_in_use_bytes')).toBe(0);
    expect(sampleSum(after, 'lookout_ingest_catching_up')).toBe(0);
    expect(sampleSum(after, 'lookout_settle_max_lag_seconds')).toBe(30);
    expect(after.get('lookout_settle_oldest_due_age_seconds')?.samples).toHaveLength(1);
    expect(after.get('lookout_webhook_attempts_pending')?.samples).toHaveLength(1);
    expect(after.get('lookout_query_gate_queued')?.samples.map((s) => s.labels.lane).sort()).toEqual(['analytics', 'interactive']);
    expect(sampleSum(after, 'lookout_compute_pool_threads')).toBe(svc.service.deps.compute.threads);
    const utilization = sampleSum(after, 'lookout_compute_pool_utilization_ratio');
    expect(utilization).toBeGreaterThanOrEqual(0);
    expect(utilization).toBeLessThanOrEqual(1);
    // The engine's merges and parts, read on scrape (the first scrapes may report nothing while the read is under way).
    const engine = await waitFor(async () => {
      const families = await scrape(metricsUrl);
      return families.get('lookout_clickhouse_active_parts')?.samples.some((s) => s.labels.table === 'spans') ? families : undefined;
    }, 20_000, 'the engine gauges');
    expect(sampleSum(engine, 'lookout_clickhouse_active_parts', { table: 'spans' })).toBeGreaterThanOrEqual(1);
    expect(engine.get('lookout_clickhouse_merges_running')?.samples).toHaveLength(1);
    expect(sampleSum(engine, 'lookout_clickhouse_merges_running')).toBeGreaterThanOrEqual(0);
    const progress = sampleSum(engine, 'lookout_clickhouse_merge_largest_progress_ratio');
    expect(progress).toBeGreaterThanOrEqual(0);
    expect(progress).toBeLessThanOrEqual(1);
    // prom-client's process metrics: event-loop lag and memory.
    expect(after.get('nodejs_eventloop_lag_p99_seconds')?.type).toBe('gauge');
    expect(sampleSum(after, 'process_resident_memory_bytes')).toBeGreaterThan(0);

    // Names follow the conventions: counters end in _total, Lookout's own families are prefixed.
    for (const family of after.values()) {
      if (family.type === 'counter') expect(family.samples.every((s) => s.name.endsWith('_total')), family.name).toBe(true);
      if (!/^(nodejs_|process_)/.test(family.name)) expect(family.name).toMatch(/^lookout_[a-z_]+$/);
    }
    assertBoundedLabels(after);
  });

  it('says why a settled trace was read back from ClickHouse: a span arriving after its first settle', async () => {
    const project = await svc.newProject('metrics-read-back');
    const post = async (body: string) => {
      const res = await postOtlp(svc.url, svc.adminKey, body, { contentType: 'application/json', headers: { 'x-lookout-project': project.id } });
      expect(res.status).toBe(200);
    };
    const queueEmpty = () =>
      waitFor(async () => {
        const families = await scrape(metricsUrl);
        return sampleSum(families, 'lookout_settle_queue_depth') === 0 && sampleSum(families, 'lookout_trace_hooks_pending') === 0 ? families : undefined;
      }, 20_000, 'settle queue empty');
    const run = agentRunRequest({ start: new Date(), agent: 'late-agent', generations: [], tools: [{ name: 'first' }] });
    await post(run.body);
    const before = await queueEmpty();
    // The same trace again, one new span: its earlier spans are in ClickHouse, not in this process's memory.
    const late = JSON.parse(run.body);
    const spans = late.resourceSpans[0].scopeSpans[0].spans;
    late.resourceSpans[0].scopeSpans[0].spans = [{ ...spans[spans.length - 1], spanId: 'abcdef0123456789' }];
    await post(JSON.stringify(late));
    const after = await queueEmpty();
    const delta = (family: string, labels: Record<string, string> = {}) => sampleSum(after, family, labels) - sampleSum(before, family, labels);
    expect(delta('lookout_settle_traces_total', { source: 'read_back' })).toBe(1);
    expect(delta('lookout_settle_read_backs_total', { reason: 'stored_before' })).toBe(1);
    expect(delta('lookout_settle_read_backs_total')).toBe(1);
    expect(after.get('lookout_settle_read_backs_total')?.type).toBe('counter');
  });
});
