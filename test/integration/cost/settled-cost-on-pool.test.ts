import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lookoutTraceId } from '../../../src/spans/trace-id.js';
import { startTestService, type TestService } from '../../helpers/service.js';
import { agentRunRequest } from '../../helpers/otlp-json.js';
import { waitFor } from '../ingest/otlp-client.js';
import { testCatalog } from '../../unit/cost/test-catalog.js';

/**
 * Settled traces are priced on the compute pool with the cost module's current catalog, which the
 * settler shares with the workers once per version (src/platform/compute/shared-value.ts): a custom catalog
 * set on the book prices the next trace exactly as it says, a changed catalog reaches the workers
 * for the next round, and no catalog writes `unavailable`. The service runs real worker threads.
 *
 * gpt-test: $2 input, $8 output per million; 1000 input + 100 output = $0.0028. With input at $4: $0.0048.
 */

interface CostRow {
  estimated_cost_usd: number | null;
  estimated_cost_basis: string;
  cost_priced_tokens: number;
  cost_unpriced_models: string[];
  cost_priced_at: string | null;
  cost_model_costs: Record<string, number>;
}

let svc: TestService;
let project: { id: string };

const book = () => svc.service.deps.services.priceBook!;

async function settledCost(models: string[]): Promise<CostRow> {
  const { body, traceId } = agentRunRequest({
    start: new Date(Date.now() - 5000),
    agent: 'priced-agent',
    generations: models.map((model) => ({ model, input: 1000, output: 100 })),
  });
  const res = await fetch(`${svc.url}/v1/traces`, {
    method: 'POST',
    headers: { authorization: `Bearer ${svc.adminKey}`, 'content-type': 'application/json', 'x-lookout-project': project.id },
    body,
  });
  expect(res.status).toBe(200);
  const { ch } = svc.service.deps;
  return waitFor(async () => {
    const rows = await (
      await ch.client.query({
        query: `SELECT estimated_cost_usd, estimated_cost_basis, cost_priced_tokens, cost_unpriced_models, cost_priced_at, cost_model_costs
                FROM ${ch.table('event_trace_processed')} FINAL WHERE trace_id = {t:String}`,
        query_params: { t: lookoutTraceId(project.id, traceId) },
        format: 'JSONEachRow',
      })
    ).json<CostRow>();
    return rows[0];
  });
}

// Both settle paths price: traces held in this process's memory, and traces read back from
// ClickHouse (no settle cache), which go to the pool as the bytes ClickHouse returned.
describe.each<{ path: string; env: Record<string, string> }>([
  { path: 'held in memory', env: {} },
  { path: 'read back from ClickHouse', env: { SETTLE_CACHE_MAX_BYTES: '0' } },
])('stored cost priced on the compute pool, traces $path', ({ env }) => {
  beforeAll(async () => {
    svc = await startTestService({ TRACE_SETTLE_MS: '200', COMPUTE_THREADS: '1', ...env });
    project = await svc.newProject('pool pricing');
  });
  afterAll(async () => {
    await svc?.stop();
  });

  it('prices with the catalog set on the book, follows a changed catalog, and writes unavailable without one', async () => {
    expect(svc.service.deps.compute.threads).toBe(1);
    book().set(testCatalog({ fetchedAt: new Date('2025-01-15T00:00:00.000Z') }));
    const first = await settledCost(['gpt-test', 'no-such-model']);
    expect(first).toMatchObject({
      estimated_cost_basis: 'partial',
      cost_priced_tokens: 1100,
      cost_unpriced_models: ['no-such-model'],
      cost_priced_at: '2025-01-15 00:00:00.000',
    });
    expect(first.estimated_cost_usd).toBeCloseTo(0.0028, 12);
    expect(first.cost_model_costs['gpt-test']).toBeCloseTo(0.0028, 12);

    // A new catalog (a refresh, or one shared by another process) prices the next round.
    book().set(testCatalog({ gptInput: 4, fetchedAt: new Date('2025-02-01T00:00:00.000Z') }));
    const second = await settledCost(['gpt-test']);
    expect(second).toMatchObject({ estimated_cost_basis: 'stored', cost_priced_at: '2025-02-01 00:00:00.000' });
    expect(second.estimated_cost_usd).toBeCloseTo(0.0048, 12);

    book().set(null);
    expect(await settledCost(['gpt-test'])).toMatchObject({ estimated_cost_usd: null, estimated_cost_basis: 'unavailable', cost_priced_at: null });
  });
});
