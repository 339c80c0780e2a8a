/**
 * A query running past the time limit fails with a timeout. The limit is
 * configuration (QUERY_TIMEOUT_SECONDS, default 15); this service runs with 1 ms so a real query
 * over two million rows trips it: 504 {detail, code: "query_timeout"}.
 */
import './mount.js';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startTestService, type TestService } from '../../helpers/service.js';
import { chTime, DAY, isoSecond } from '../analytics-query/seed.js';

let svc: TestService;
let projectId: string;
const NOW = Date.now();

beforeAll(async () => {
  svc = await startTestService({ QUERY_TIMEOUT_SECONDS: '0.001' });
  projectId = (await svc.newProject('slow')).id;
  const ch = svc.service.deps.ch;
  await ch.client.command({
    query: `INSERT INTO ${ch.table('event_generation_completed')} (tenant_id, project_id, timestamp, model, trace_id, span_id, duration_ms)
      SELECT {t:String}, {p:String}, toDateTime64({ts:String}, 3, 'UTC'), toString(number % 97), toUUID(concat('00000000-0000-5000-8000-', leftPad(toString(number % 50000), 12, '0'))), number + 1, number % 1000
      FROM numbers(2000000)`,
    query_params: { t: svc.service.bootstrap!.tenantId, p: projectId, ts: chTime(NOW - DAY) },
  });
});

afterAll(async () => {
  await svc?.stop();
});

test('504 query_timeout past the configured limit', async () => {
  const res = await svc.call('POST', `/projects/${projectId}/analytics/query`, {
    body: {
      from: 'generation.completed',
      start: isoSecond(NOW - 7 * DAY),
      end_exclusive: isoSecond(NOW + DAY),
      measures: [{ as: 'p99', agg: 'p99', field: 'duration_ms' }, { as: 'traces', agg: 'uniqExact', field: 'trace_id' }],
      group_by: [{ field: 'model' }],
    },
  });
  expect(res.status).toBe(504);
  expect(res.body.code).toBe('query_timeout');
  expect(res.body.detail).toMatch(/limit/);
});
