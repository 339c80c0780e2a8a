import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestService } from '../../../src/ingest/ingest-module.js';
import { queueDepth } from '../../../src/ingest/settle/settle-queue.js';
import { lookoutTraceId } from '../../../src/spans/trace-id.js';
import type { TestService } from '../../helpers/service.js';
import { pauseNextFlush } from '../../helpers/writer-pause.js';
import { postOtlp, protobufBody, waitFor } from '../ingest/otlp-client.js';
import { openSharedStores, type SharedStores } from './instances.js';
import { agentRun } from '../../helpers/agent-run.js';

/**
 * The stored-trace registry across instances and restarts: the registry lives in the
 * shared PostgreSQL, so a trace one instance created is known to every other and to a restarted
 * one — their flushes check it in ClickHouse, and re-sent spans are not stored twice. The trace
 * settles with every span, each settle writing one processed row.
 */

let stores: SharedStores;
const instances: TestService[] = [];
beforeAll(async () => {
  stores = await openSharedStores();
}, 120_000);
afterAll(async () => {
  for (const svc of instances) await svc.stop().catch(() => {});
  await stores?.close();
});

async function one(query: string, traceId: string): Promise<Record<string, number>> {
  const result = await stores.ch.client.query({ query, query_params: { t: traceId }, format: 'JSONEachRow', clickhouse_settings: { output_format_json_quote_64bit_integers: 0 } });
  return (await result.json<Record<string, number>>())[0];
}

describe('the stored-trace registry across instances', () => {
  it('an instance and a restarted one both know a trace another created: re-sent spans stay single, each settle one row', { timeout: 120_000 }, async () => {
    // The settle window outlasts the gap between two instances' sends on a loaded runner, so the two
    // parts settle as one trace.
    const env = { TRACE_SETTLE_MS: '5000', TRACE_MAX_WAIT_MS: '30000' };
    const a = await stores.start(env);
    instances.push(a);
    const b = await stores.start(env);
    instances.push(b);
    const project = await a.newProject('registry-split');
    const run = agentRun(4, 'registry-agent');
    const traceId = lookoutTraceId(project.id, run.otelTraceId);
    const send = (svc: TestService, spans: ReadableSpan[]) => postOtlp(svc.url, svc.adminKey, protobufBody(spans), { headers: { 'x-lookout-project': project.id } });
    const ch = stores.ch;
    // Merges would fold doubled rows together before they are counted.
    for (const table of ['spans', 'event_trace_processed']) await ch.client.command({ query: `SYSTEM STOP MERGES ${ch.table(table)}` });
    const spanRows = () => one(`SELECT count() AS rows, uniqExact(span_id) AS spans FROM ${ch.table('spans')} WHERE trace_id = {t:String}`, traceId);
    const processed = () => one(`SELECT count() AS rows FROM ${ch.table('event_trace_processed')} WHERE trace_id = {t:String}`, traceId);
    const summary = () => one(`SELECT count() AS n, any(span_count) AS spans FROM ${ch.table('traces')} FINAL WHERE trace_id = {t:String} AND preview = 0`, traceId);
    const settledRows = async (n: number) =>
      waitFor(async () => ((await processed()).rows >= n && (await queueDepth(stores.pg.sql)) === 0 ? true : undefined), 30_000, `settled ${n}x`);

    // A creates the trace; B gets the next part, which repeats chat 1.
    expect((await send(a, [run.root, run.children[0], run.children[1]])).status).toBe(200);
    expect((await send(b, run.children.slice(1))).status).toBe(200);
    expect(await spanRows()).toEqual({ rows: 5, spans: 5 });
    const registered = await stores.pg.sql<{ n: number }[]>`select count(*)::int as n from stored_traces where trace_id = ${traceId}`;
    expect(registered[0].n).toBe(1);
    await settledRows(1);
    expect(await summary()).toEqual({ n: 1, spans: 5 });
    expect(await processed()).toEqual({ rows: 1 });

    // A restarts (a new process on the same stores) and receives a retry of the first part.
    await a.stop();
    instances.splice(instances.indexOf(a), 1);
    const restarted = await stores.start(env);
    instances.push(restarted);
    expect((await send(restarted, [run.root, run.children[0]])).status).toBe(200);
    expect(await spanRows()).toEqual({ rows: 5, spans: 5 });
    // Recorded anyway (a retry's trace is queued): settled again, with 0.
    await settledRows(2);
    expect(await processed()).toEqual({ rows: 2 });
    expect(await summary()).toEqual({ n: 1, spans: 5 });
    for (const table of ['spans', 'event_trace_processed']) await ch.client.command({ query: `SYSTEM START MERGES ${ch.table(table)}` });
    for (const svc of [b, restarted]) {
      await svc.stop();
      instances.splice(instances.indexOf(svc), 1);
    }
  });

  it('a flush that stalls after creating a trace while another instance stores and settles spans of it: the trace still settles whole', { timeout: 120_000 }, async () => {
    const env = { TRACE_SETTLE_MS: '300', TRACE_MAX_WAIT_MS: '800' };
    const a = await stores.start(env);
    instances.push(a);
    // B only ingests: every settle happens in A, which holds its own part in memory.
    const b = await stores.start({ ...env, LOOKOUT_ROLES: 'api,ingest' });
    instances.push(b);
    const project = await a.newProject('registry-stall');
    const run = agentRun(3, 'registry-agent');
    const traceId = lookoutTraceId(project.id, run.otelTraceId);
    const send = (svc: TestService, spans: ReadableSpan[]) => postOtlp(svc.url, svc.adminKey, protobufBody(spans), { headers: { 'x-lookout-project': project.id } });
    const ch = stores.ch;
    const summary = () => one(`SELECT count() AS n, any(span_count) AS spans FROM ${ch.table('traces')} FINAL WHERE trace_id = {t:String} AND preview = 0`, traceId);
    // A registers the trace (new), then stalls before its inserts.
    const { paused: pausedAtA, resume: resumeA } = pauseNextFlush(ingestService(a.service.deps).writer);
    const sentToA = send(a, [run.root, run.children[0]]);
    await pausedAtA;
    // Meanwhile B stores chat 1 and 2 (known trace: checked, nothing stored yet) and they settle.
    expect((await send(b, run.children.slice(1))).status).toBe(200);
    await waitFor(async () => ((await summary()).n > 0 && (await queueDepth(stores.pg.sql)) === 0 ? true : undefined), 30_000, 'B settled its part');
    resumeA();
    expect((await sentToA).status).toBe(200);
    await waitFor(async () => ((await summary()).spans === 4 ? true : undefined), 30_000, 'the trace settled with all four spans').catch(async (error) => {
      throw new Error(`${(error as Error).message}: ${JSON.stringify(await summary())}`);
    });
    await waitFor(async () => ((await queueDepth(stores.pg.sql)) === 0 ? true : undefined), 30_000, 'queue empty');
    expect(await summary()).toEqual({ n: 1, spans: 4 });
  });
});
