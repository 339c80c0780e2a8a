/**
 * A preset view's statements run under the DSL's memory ceiling, and a view over it answers 400
 * with what to change instead of a bare 500 (the engine's MEMORY_LIMIT_EXCEEDED). The ceiling is
 * lowered for the test; the same rows under the default ceiling answer normally.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ValidationError } from '../../../src/platform/http/errors.js';
import { generalView } from '../../../src/analytics/views/general-view.js';
import { removeDir, startTestService, type TestService } from '../../helpers/service.js';

const T = 'tenant-mem';
const P = 'project-mem';
const START = new Date('2026-11-01T00:00:00Z');
const ROWS = 400_000;
const params = { window: { start: START, endExclusive: new Date(START.getTime() + 86_400_000) }, granularity: 'day' as const, hours: 24 };

describe('preset views: memory ceiling', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
    const ch = svc.service.deps.ch;
    // Distinct speeds, so quantilesExact has to keep every one of them.
    await ch.client.command({
      query: `INSERT INTO ${ch.table('event_generation_completed')} (tenant_id, project_id, timestamp, actor, surface, model, provider, trace_id, span_id, duration_ms, input_tokens, output_tokens, tps, error)
        SELECT '${T}', '${P}', toDateTime64('2026-11-01 00:00:00', 3, 'UTC') + toIntervalMillisecond(number * 200), 'sdk', 'otlp', 'm', 'p',
          toUUID(concat('00000000-0000-5000-8000-', leftPad(toString(number), 12, '0'))), number + 1, 10, 1, 1, number + 0.5, 0 FROM numbers(${ROWS})`,
    });
  }, 120_000);
  afterAll(async () => {
    await svc?.stop();
    removeDir(svc?.dataDir);
  });

  it('answers 400 validation_error over the ceiling', async () => {
    const deps = { ch: svc.service.deps.ch, sql: svc.service.deps.sql, catalog: null, maxMemoryBytes: 1024 * 1024 };
    const error = await generalView(deps, T, P, params).then(() => null, (e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).status).toBe(400);
    expect((error as ValidationError).detail).toMatch(/narrow its window/);
  });

  it('answers under the default ceiling', async () => {
    const deps = { ch: svc.service.deps.ch, sql: svc.service.deps.sql, catalog: null };
    const view = await generalView(deps, T, P, params);
    expect(view.totals.requests).toBe(ROWS);
    expect(view.totals.speed_percentiles.p50).toBe(Math.floor(ROWS * 0.5) + 0.5);
  });
});
