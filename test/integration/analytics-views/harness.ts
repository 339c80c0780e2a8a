/**
 * A running service with a price list the tests know (test/unit/cost/test-catalog.ts, served as
 * PRICES_REFRESH_URL), and a project seeded through OTLP ingestion with dataset.ts's runs.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { removeDir, startTestService, type TestService } from '../../helpers/service.js';
import { testProviders } from '../../unit/cost/test-catalog.js';
import { otlpRequest, RUNS } from './dataset.js';

export interface Harness {
  svc: TestService;
  pricingFetchedAt: string;
  stop(): Promise<void>;
}

export async function startHarness(): Promise<Harness> {
  const prices = http.createServer((_req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify(testProviders()));
  });
  await new Promise<void>((resolve) => prices.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(prices.address() as AddressInfo).port}/data.json`;
  // A rootless trace settles TRACE_MAX_WAIT_MS after its first span: keep that short here.
  const svc = await startTestService({ PRICES_REFRESH_URL: url, TRACE_MAX_WAIT_MS: '1500' });
  const book = svc.service.deps.services.priceBook!;
  for (let i = 0; i < 200 && book.current()?.source !== 'refresh'; i++) await sleep(50);
  if (book.current()?.source !== 'refresh') throw new Error('the test price list was not loaded');
  return {
    svc,
    pricingFetchedAt: book.current()!.fetchedAt.toISOString(),
    async stop() {
      await svc.stop();
      await new Promise((resolve) => prices.close(resolve));
      removeDir(svc.dataDir);
    },
  };
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `probe` until it returns true (or fails after `timeoutMs`). */
export async function until(what: string, probe: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await probe()) return;
    await sleep(100);
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function count(svc: TestService, tableName: string, projectId: string, eventName?: string): Promise<number> {
  const ch = svc.service.deps.ch;
  const result = await ch.client.query({
    query: `SELECT count() AS n FROM ${ch.table(tableName)} FINAL WHERE project_id = {p:String}${eventName ? ' AND name = {name:String}' : ''}`,
    query_params: { p: projectId, name: eventName ?? '' },
    format: 'JSONEachRow',
  });
  const [row] = await result.json<{ n: string | number }>();
  return Number(row.n);
}

/** Sends the runs through POST /v1/traces and waits until every trace is processed. */
export async function seedThroughIngestion(svc: TestService, projectId: string, base: Date, runs = RUNS): Promise<void> {
  const response = await fetch(`${svc.url}/v1/traces`, {
    method: 'POST',
    headers: { authorization: `Bearer ${svc.adminKey}`, 'content-type': 'application/json', 'x-lookout-project': projectId },
    body: JSON.stringify(otlpRequest(base, runs)),
  });
  const body = await response.text();
  if (response.status !== 200) throw new Error(`ingest answered ${response.status}: ${body}`);
  if (body.includes('rejected')) {
    const parsed = JSON.parse(body) as { partialSuccess?: { rejectedSpans?: string | number; errorMessage?: string } };
    if (Number(parsed.partialSuccess?.rejectedSpans ?? 0) > 0) throw new Error(`ingest rejected spans: ${body}`);
  }
  const generations = runs.reduce((s, r) => s + r.generations.length, 0);
  const tools = runs.reduce((s, r) => s + r.tools.length, 0);
  await until('every trace to be processed', async () =>
    (await count(svc, 'event_trace_processed', projectId)) === runs.length &&
    (await count(svc, 'event_generation_completed', projectId)) === generations &&
    (await count(svc, 'event_tool_called', projectId)) === tools,
  );
}

/** Waits until `n` issue.* events named `name` of the project reached ClickHouse (outbox relay). */
export async function waitForIssueEvents(svc: TestService, projectId: string, name: string, n: number): Promise<void> {
  await until(`${n} ${name} events`, async () => (await count(svc, 'event_issue', projectId, name)) >= n);
}
