import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestService } from '../../../src/ingest/ingest-module.js';
import { queueDepth } from '../../../src/ingest/settle/settle-queue.js';
import { lookoutTraceId } from '../../../src/spans/trace-id.js';
import { traceHooks } from '../../../src/ingest/trace-hook-registry.js';
import type { ProcessedTrace } from '../../../src/ingest/trace-hooks.js';
import type { TestService } from '../../helpers/service.js';
import { pauseNextFlush } from '../../helpers/writer-pause.js';
import { postOtlp, protobufBody, waitFor } from '../ingest/otlp-client.js';
import { openSharedStores, sleep, type SharedStores } from './instances.js';
import { agentRun } from '../../helpers/agent-run.js';

/**
 * Settling across instances: the spans of one trace reach two instances, and the
 * trace still ends with one complete summary and one run of the hooks; a settler that dies holding
 * claims leaves them to another instance once PostgreSQL lets its lease run out.
 */

let stores: SharedStores;
const instances: TestService[] = [];
/** Lets a hook that blocks to hold a claim open return (also when a test fails before it does). */
let unblock: () => void = () => {};
beforeAll(async () => {
  stores = await openSharedStores();
}, 120_000);
afterAll(async () => {
  unblock();
  for (const svc of instances) await svc.stop().catch(() => {});
  await stores?.close();
});

/** Counts hook runs per trace on an instance (every instance registers the same listeners). */
function countHooks(svc: TestService, runs: Map<string, number>, seen?: (t: ProcessedTrace) => Promise<void>): void {
  traceHooks(svc.service.deps).onTracesProcessed.push(async (traces) => {
    for (const t of traces) {
      runs.set(t.traceId, (runs.get(t.traceId) ?? 0) + 1);
      await seen?.(t);
    }
  });
}

async function summaries(traceId: string) {
  const { ch } = stores;
  const read = async (table: string) => {
    const res = await ch.client.query({
      query: `SELECT count() AS n, any(span_count) AS spans, any(total_tokens) AS tokens FROM ${ch.table(table)} FINAL WHERE trace_id = {t:String}`,
      query_params: { t: traceId },
      format: 'JSONEachRow',
      clickhouse_settings: { output_format_json_quote_64bit_integers: 0 },
    });
    return (await res.json<{ n: number; spans: number; tokens: number }>())[0];
  };
  const processed = await ch.client.query({
    query: `SELECT count() AS n, any(total_tokens) AS tokens, any(api_key_id) AS api_key_id, any(toUnixTimestamp64Milli(processed_at)) AS version
            FROM ${ch.table('event_trace_processed')} FINAL WHERE trace_id = {t:String}`,
    query_params: { t: traceId },
    format: 'JSONEachRow',
    clickhouse_settings: { output_format_json_quote_64bit_integers: 0 },
  });
  return { traces: await read('traces'), processed: (await processed.json<{ n: number; tokens: number; api_key_id: string; version: number }>())[0] };
}

describe('settling across instances', () => {
  it('a trace split over two instances, both passing the duplicate check, ends with one complete summary and one hook run', { timeout: 120_000 }, async () => {
    const env = { TRACE_SETTLE_MS: '1500', TRACE_MAX_WAIT_MS: '30000' };
    const a = await stores.start(env);
    instances.push(a);
    const b = await stores.start(env);
    instances.push(b);
    const runs = new Map<string, number>();
    countHooks(a, runs);
    countHooks(b, runs);
    const project = await a.newProject('split');
    const run = agentRun(5, 'split-agent');
    const traceId = lookoutTraceId(project.id, run.otelTraceId);
    const send = (svc: TestService, spans: ReadableSpan[]) =>
      postOtlp(svc.url, svc.adminKey, protobufBody(spans), { headers: { 'x-lookout-project': project.id } });

    // A checks for duplicates, then pauses before inserting; meanwhile B stores an overlapping
    // batch (a retry that went to another instance): both find chat 0-2 new and both store them.
    const { paused: pausedAtA, resume: resumeA } = pauseNextFlush(ingestService(a.service.deps).writer);
    // Merges would fold the duplicate span rows together before they are counted below.
    await stores.ch.client.command({ query: `SYSTEM STOP MERGES ${stores.ch.table('spans')}` });
    const sentToA = send(a, [run.root, ...run.children.slice(0, 3)]);
    await pausedAtA;
    expect((await send(b, run.children)).status).toBe(200);
    resumeA();
    expect((await sentToA).status).toBe(200);

    // Both instances store chat 0-2: the span rows are there twice.
    const stored = await stores.ch.client.query({
      query: `SELECT count() AS n FROM ${stores.ch.table('spans')} WHERE trace_id = {t:String}`,
      query_params: { t: traceId },
      format: 'JSONEachRow',
      clickhouse_settings: { output_format_json_quote_64bit_integers: 0 },
    });
    expect((await stored.json<{ n: number }>())[0].n).toBe(9);
    await stores.ch.client.command({ query: `SYSTEM START MERGES ${stores.ch.table('spans')}` });

    await waitFor(async () => ((runs.get(traceId) ?? 0) > 0 ? true : undefined), 30_000, 'trace settled');
    // Longer than a quiet period more: no second settle comes.
    await sleep(4000);
    expect(runs.get(traceId)).toBe(1);
    const { traces, processed } = await summaries(traceId);
    expect(traces).toEqual({ n: 1, spans: 6, tokens: 5 * 12 });
    expect(processed).toMatchObject({ n: 1, tokens: 5 * 12 });
    expect(await queueDepth(stores.pg.sql)).toBe(0);
    // Only the instances of the next test settle from here on.
    for (const svc of [a, b]) {
      await svc.stop();
      instances.splice(instances.indexOf(svc), 1);
    }
  });

  it("an instance that dies holding claims has its traces finished by another, under a newer version", { timeout: 120_000 }, async () => {
    const env = { TRACE_SETTLE_MS: '200', TRACE_MAX_WAIT_MS: '30000', SETTLE_LEASE_MS: '1500' };
    const dying = await stores.start(env);
    instances.push(dying);
    const project = await dying.newProject('takeover');
    // The dying instance writes the summary, then hangs in the hooks with its claim open.
    let entered!: () => void;
    const inHooks = new Promise<void>((resolve) => (entered = resolve));
    const blocked = new Promise<void>((resolve) => (unblock = resolve));
    const runs = new Map<string, number>();
    countHooks(dying, runs, async () => {
      entered();
      await blocked;
    });
    const run = agentRun(3, 'split-agent');
    const traceId = lookoutTraceId(project.id, run.otelTraceId);
    const sent = await postOtlp(dying.url, dying.adminKey, protobufBody([run.root, ...run.children]), { headers: { 'x-lookout-project': project.id } });
    expect(sent.status).toBe(200);
    await inHooks;
    const first = await summaries(traceId);
    expect(first.traces).toMatchObject({ n: 1, spans: 4 });
    // The process "dies": its PostgreSQL connections go, so the lease is no longer renewed.
    await dying.service.deps.sql.end({ timeout: 0 });
    expect(await queueDepth(stores.pg.sql)).toBe(1);

    const heir = await stores.start(env);
    instances.push(heir);
    const heirRuns = new Map<string, number>();
    countHooks(heir, heirRuns);
    await waitFor(async () => ((heirRuns.get(traceId) ?? 0) > 0 ? true : undefined), 30_000, 'trace settled by the other instance');
    await waitFor(async () => ((await queueDepth(stores.pg.sql)) === 0 ? true : undefined), 10_000, 'claim finished');
    const second = await summaries(traceId);
    expect(second.traces).toMatchObject({ n: 1, spans: 4 });
    expect(second.processed.version).toBeGreaterThan(first.processed.version);
    // Attribution survives the takeover: the sender's key, not a system origin.
    expect(second.processed.api_key_id).toBe(first.processed.api_key_id);
    expect(second.processed.api_key_id).not.toBe('');
    unblock();
    expect(heirRuns.get(traceId)).toBe(1);
  });
});
