import { afterAll, describe, expect, it } from 'vitest';
import { agentRunRequest } from '../../helpers/otlp-json.js';
import { freePort, sampleSum, scrape } from '../../helpers/prometheus-text.js';
import { removeDir, startTestService } from '../../helpers/service.js';
import { tempDataDir } from '../../helpers/temp-dir.js';
import { postOtlp, waitFor } from './otlp-client.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach(removeDir));

/**
 * Bounded lag by back-pressure: a process whose traces are not being settled (no worker role, so
 * no settler runs) keeps accepting until the oldest due trace is older than SETTLE_MAX_LAG_MS, then
 * answers 503 `overloaded` with Retry-After; once a settler catches up it accepts again by itself.
 * Before that, past INGEST_FLUSH_CATCH_UP_LAG_MS, its flushes are paced for settling to catch up
 * (the writer's side: ingest-writer-flushes.test.ts). The trace list says how far behind it is meanwhile.
 */
describe('settle lag back-pressure', () => {
  it('answers 503 + Retry-After past SETTLE_MAX_LAG_MS and recovers when settling catches up', async () => {
    const dataDir = tempDataDir();
    dirs.push(dataDir);
    const metricsPort = await freePort();
    const svc = await startTestService(
      { LOOKOUT_ROLES: 'api,ingest', TRACE_SETTLE_MS: '100', SETTLE_MAX_LAG_MS: '1500', INGEST_FLUSH_CATCH_UP_LAG_MS: '500', METRICS_PORT: String(metricsPort) },
      dataDir,
    );
    const ingest = svc.service.deps.services.ingest!;
    try {
      const project = await svc.newProject('lagging');
      const send = () =>
        postOtlp(svc.url, svc.adminKey, agentRunRequest({ start: new Date(), agent: 'lag-agent', generations: [{ model: 'gpt-4o', input: 1, output: 1 }] }).body, {
          contentType: 'application/json',
          headers: { 'x-lookout-project': project.id },
        });
      expect((await send()).status).toBe(200);

      // Nothing settles: the first trace is due after 100 ms and waits; past 1.5 s ingestion refuses.
      const refused = await waitFor(async () => {
        const res = await send();
        return res.status === 503 ? res : undefined;
      }, 30_000, 'a 503 once the lag passes the bound');
      expect(refused.headers.get('retry-after')).toBe('5');
      expect(JSON.parse(refused.body.toString())).toMatchObject({ code: 'overloaded' });
      expect(JSON.parse(refused.body.toString()).detail).toMatch(/SETTLE_MAX_LAG_MS=1500/);
      // Refused again on the next try: the lag is read from the queue, not a one-off.
      expect((await send()).status).toBe(503);

      const behind = await svc.call('GET', `/projects/${project.id}/traces`);
      expect(behind.status).toBe(200);
      expect(behind.body.traces).toEqual([]);
      expect(behind.body.settle_lag_ms).toBeGreaterThan(1500);
      expect(behind.body.settle_max_lag_ms).toBe(1500);
      expect(Date.parse(behind.body.data_as_of)).toBeLessThan(Date.now() - 1500);

      const metrics = await scrape(svc.service.metricsUrl!);
      expect(sampleSum(metrics, 'lookout_http_overload_responses_total', { status: '503', reason: 'settle_lag' })).toBeGreaterThanOrEqual(2);
      expect(sampleSum(metrics, 'lookout_ingest_requests_total', { code: 'overloaded' })).toBeGreaterThanOrEqual(2);
      expect(sampleSum(metrics, 'lookout_settle_oldest_due_age_seconds')).toBeGreaterThan(1.5);
      expect(sampleSum(metrics, 'lookout_settle_queue_depth')).toBeGreaterThanOrEqual(1);
      expect(sampleSum(metrics, 'lookout_ingest_catching_up')).toBe(1);
      expect(ingest.catchingUp()).toBe(true);

      // A settler starts (as a worker process would): the queue drains and ingestion accepts again.
      ingest.settler.start();
      await waitFor(async () => ((await send()).status === 200 ? true : undefined), 30_000, 'a 200 once settling caught up');
      const caughtUp = await waitFor(async () => {
        const res = await svc.call('GET', `/projects/${project.id}/traces`);
        return res.body.traces.length >= 2 ? res.body : undefined;
      }, 30_000, 'the traces listed');
      expect(caughtUp.settle_lag_ms).toBeLessThanOrEqual(1500);
      // Caught up: flushes are no longer paced for it.
      await waitFor(async () => (sampleSum(await scrape(svc.service.metricsUrl!), 'lookout_ingest_catching_up') === 0 ? true : undefined), 30_000, 'catching up over');
      expect(ingest.catchingUp()).toBe(false);

      // The OpenAPI document describes the fields, optional beside the required ones.
      const doc = (await svc.call('GET', '/openapi.json')).body;
      for (const schema of ['TraceList', 'AnalyticsGeneralView', 'AnalyticsRoiView']) {
        expect(Object.keys(doc.components.schemas[schema].properties), schema).toEqual(expect.arrayContaining(['data_as_of', 'settle_lag_ms', 'settle_max_lag_ms']));
        expect(doc.components.schemas[schema].required, schema).not.toContain('data_as_of');
      }
    } finally {
      await ingest.settler.stop();
      await svc.stop();
    }
  });
});
