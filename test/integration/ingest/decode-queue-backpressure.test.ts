import { afterAll, describe, expect, it } from 'vitest';
import { freePort, sampleSum, scrape } from '../../helpers/prometheus-text.js';
import { removeDir, startTestService } from '../../helpers/service.js';
import { syntheticBatch } from '../../helpers/synthetic-batch.js';
import { tempDataDir } from '../../helpers/temp-dir.js';
import { postOtlp, type OtlpAnswer } from './otlp-client.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach(removeDir));

/**
 * Bounded decoding wait: with one compute worker and INGEST_MAX_QUEUE_MS=50, large requests sent
 * together queue their decoding; while the longest-waiting one has waited past the bound, a new
 * request is refused at once with 429 + Retry-After (nothing of it stored), and accepted again once
 * the queue has drained. Every request answered 200 is stored, each span once.
 */
describe('decoding queue back-pressure', () => {
  it('answers 429 + Retry-After while decoding waits past INGEST_MAX_QUEUE_MS, stores exactly what it accepted, and recovers', async () => {
    const dataDir = tempDataDir();
    dirs.push(dataDir);
    const metricsPort = await freePort();
    const svc = await startTestService({ COMPUTE_THREADS: '1', INGEST_MAX_QUEUE_MS: '50', METRICS_PORT: String(metricsPort) }, dataDir);
    try {
      const project = await svc.newProject('queued');
      const send = (body: Buffer, contentType = 'application/x-protobuf') => postOtlp(svc.url, svc.adminKey, body, { contentType, headers: { 'x-lookout-project': project.id } });
      // Loads the worker, so the large requests below wait for decoding, not for start-up.
      expect((await send(syntheticBatch(10).protobuf)).status).toBe(200);

      const large = Array.from({ length: 6 }, () => syntheticBatch(3000));
      let largeDone = false;
      const largeAnswers = Promise.all(large.map((batch) => send(batch.protobuf))).finally(() => (largeDone = true));
      // Small requests every 50 ms while the large ones decode, each without waiting for the last.
      const small: { batch: ReturnType<typeof syntheticBatch>; answer: Promise<OtlpAnswer> }[] = [];
      while (!largeDone) {
        const batch = syntheticBatch(10);
        small.push({ batch, answer: send(batch.json, 'application/json') });
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const smallAnswers = await Promise.all(small.map((s) => s.answer));
      const answers = [...(await largeAnswers), ...smallAnswers];
      for (const answer of answers) expect([200, 429]).toContain(answer.status);
      const refused = smallAnswers.find((a) => a.status === 429);
      expect(refused, 'a small request refused while the large ones waited for the worker').toBeDefined();
      expect(JSON.parse(refused!.body.toString())).toMatchObject({ code: 'rate_limited', detail: expect.stringMatching(/INGEST_MAX_QUEUE_MS=50/) });
      expect(refused!.headers.get('retry-after')).toBe('1');

      // Recovers: the refused requests, sent again together after Retry-After as exporters do, are
      // accepted within a few rounds (sent together, some may wait past 50 ms again).
      const batches = [...large, ...small.map((s) => s.batch)];
      let refusedBatches = batches.filter((_, i) => answers[i].status === 429);
      for (let round = 0; round < 10 && refusedBatches.length > 0; round++) {
        await new Promise((resolve) => setTimeout(resolve, 1000));
        const again = await Promise.all(refusedBatches.map((batch) => send(batch.json, 'application/json')));
        for (const answer of again) expect([200, 429]).toContain(answer.status);
        refusedBatches = refusedBatches.filter((_, i) => again[i].status === 429);
      }
      expect(refusedBatches).toEqual([]);

      // Stored: every span of every request, once (a refusal stored nothing; its second send did).
      const expectedSpans = batches.reduce((sum, b) => sum + b.spans, 10);
      const stored = await (
        await svc.service.deps.ch.client.query({
          query: `SELECT count() AS n, uniqExact(trace_id, span_id) AS u FROM ${svc.service.deps.ch.table('spans')} WHERE project_id = {p:String}`,
          query_params: { p: project.id },
          format: 'JSONEachRow',
        })
      ).json<{ n: string; u: string }>();
      expect(Number(stored[0].n)).toBe(expectedSpans);
      expect(Number(stored[0].u)).toBe(expectedSpans);

      const metrics = await scrape(svc.service.metricsUrl!);
      expect(sampleSum(metrics, 'lookout_http_overload_responses_total', { status: '429', reason: 'compute_queue' })).toBeGreaterThanOrEqual(1);
    } finally {
      await svc.stop();
    }
  });
});
