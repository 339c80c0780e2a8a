/**
 * The settler's read-back of spans costs what was ingested lately, not the size of the `spans`
 * table. A trace the stored-trace registry created in its flush has no span written before that
 * flush, so its read-back is bounded by `ingested_at` and the minmax index on it drops the granules
 * of older parts; by key alone, the primary index selects a granule of every large part whose key
 * range covers each trace (8,192 rows per trace per part), held or not. Counted by the engine's own
 * counters (system.events SelectedRows), so the machine's load does not matter. The settle cache
 * holds nothing here: every trace is read back. A trace reopened by a late span is still read whole:
 * its new queue row takes the time its registry row keeps (when its first spans were written).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queueDepth } from '../../../src/ingest/settle/settle-queue.js';
import { removeDir, startTestService, type TestService } from '../../helpers/service.js';
import { registryComplete, seedOldSpans, selectedRows } from '../../helpers/filled-store.js';
import { syntheticBatch } from '../../helpers/synthetic-batch.js';
import { tempDataDir } from '../../helpers/temp-dir.js';
import { postOtlp, waitFor } from './otlp-client.js';
import { lookoutTraceId } from '../../../src/spans/trace-id.js';

/** Old spans in one large part: 37 granules of the default 8,192 rows. */
const OLD_SPANS = 300_000;
const TRACES = 10;
let svc: TestService;
let dataDir: string;
let projectId: string;
let tenantId: string;

beforeAll(async () => {
  dataDir = tempDataDir();
  svc = await startTestService({ TRACE_SETTLE_MS: '300', SETTLE_CACHE_MAX_BYTES: '1' }, dataDir);
  projectId = (await svc.newProject('read-back')).id;
  const { sql, ch } = svc.service.deps;
  [{ tenant_id: tenantId }] = await sql<{ tenant_id: string }[]>`select tenant_id::text from projects where id = ${projectId}`;
  await registryComplete(sql);
  // Other traces of the same project, written an hour ago: what a store that has been filling holds.
  await seedOldSpans(ch, tenantId, projectId, OLD_SPANS);
}, 180_000);

afterAll(async () => {
  await svc?.stop();
  if (dataDir) removeDir(dataDir);
});

async function settled(): Promise<void> {
  await waitFor(async () => ((await queueDepth(svc.service.deps.sql)) === 0 ? true : undefined), 60_000, 'the settle queue to drain');
}

async function spanCounts(traceIds: string[]): Promise<Map<string, number>> {
  const { ch } = svc.service.deps;
  const result = await ch.client.query({
    query: `SELECT trace_id, span_count FROM ${ch.table('traces')} FINAL WHERE project_id = {p:String} AND trace_id IN {ids:Array(String)} AND preview = 0`,
    query_params: { p: projectId, ids: traceIds },
    format: 'JSONEachRow',
  });
  return new Map((await result.json<{ trace_id: string; span_count: number }>()).map((r) => [r.trace_id, Number(r.span_count)]));
}

const send = async (body: Uint8Array) => {
  const answer = await postOtlp(svc.url, svc.adminKey, body, { headers: { 'x-lookout-project': projectId } });
  expect(answer.status).toBe(200);
};

describe('settle read-back on a filled spans table', () => {
  it('reads a bounded number of rows per new trace, whatever the table holds, and settles each trace whole', async () => {
    const batch = syntheticBatch(TRACES * 10);
    const ids = batch.traceIds.map((otel) => lookoutTraceId(projectId, otel));
    const before = await selectedRows(svc.service.deps.ch);
    await send(batch.protobuf);
    await settled();
    const read = (await selectedRows(svc.service.deps.ch)) - before;
    // By key alone each trace costs a granule of the old part: about TRACES × 8,192 rows. Bounded, the
    // read touches the new part(s) only — a few hundred rows — plus what the rest of the round reads.
    expect(read).toBeGreaterThan(0);
    expect(read).toBeLessThan(TRACES * 1000);
    const counts = await spanCounts(ids);
    expect(ids.map((id) => counts.get(id))).toEqual(ids.map(() => 10));
  }, 120_000);

  it('reads a trace reopened by a late span whole: its bound is when its first spans were written', async () => {
    const first = syntheticBatch(10);
    const id = lookoutTraceId(projectId, first.traceIds[0]);
    await send(first.protobuf);
    await settled();
    expect((await spanCounts([id])).get(id)).toBe(10);
    // The same trace again with one more span (a new span id): a new queue row, bounded by the registry's time.
    const late = syntheticBatch(10);
    const otel = first.traceIds[0];
    const json = JSON.parse(late.json.toString()) as { resourceSpans: { scopeSpans: { spans: { traceId: string; spanId: string; parentSpanId?: string }[] }[] }[] };
    const span = json.resourceSpans[0].scopeSpans[0].spans[1];
    span.traceId = otel;
    json.resourceSpans[0].scopeSpans[0].spans = [span];
    const before = await selectedRows(svc.service.deps.ch);
    const answer = await postOtlp(svc.url, svc.adminKey, JSON.stringify(json), { contentType: 'application/json', headers: { 'x-lookout-project': projectId } });
    expect(answer.status).toBe(200);
    await settled();
    // The late span's duplicate check and the read-back, both bounded: by key each would cost a
    // granule (8,192 rows) of the old part.
    expect((await selectedRows(svc.service.deps.ch)) - before).toBeLessThan(4000);
    await waitFor(async () => ((await spanCounts([id])).get(id) === 11 ? true : undefined), 30_000, 'the reopened trace to settle with 11 spans');
  }, 120_000);
});
