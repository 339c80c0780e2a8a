/**
 * The writer's duplicate check of a trace the stored-trace registry already holds costs what was
 * ingested lately, not the size of the `spans` table. The registry row of a trace created by a flush
 * keeps when that flush began (stored_since_ms): the check of a later flush reads with `ingested_at`
 * at or after it, and the minmax index on it drops the granules of older parts; by key alone, the
 * primary index selects a granule of every large part whose key range covers each trace (8,192 rows
 * per trace per part), held or not. Counted by the engine's own counters (system.events
 * SelectedRows), so the machine's load does not matter. Settling is held off (long quiet period),
 * so nothing else reads spans meanwhile.
 *
 * Exactness is what TRACE_MAX_SPANS shows: a trace at its limit takes no new span, so a re-sent
 * part answered without a rejection was found stored (every span of it a duplicate), and a part
 * past the limit is cut exactly where the stored count says. Both hold for a trace whose history
 * the registry does not know (a row from before it kept the time, with spans written an hour ago),
 * which is read by key alone — the read whose cost the bound is set against.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeDir, startTestService, type TestService } from '../../helpers/service.js';
import { registryComplete, seedOldSpans, selectedRows } from '../../helpers/filled-store.js';
import { chainRequests } from '../../helpers/span-chain.js';
import { tempDataDir } from '../../helpers/temp-dir.js';
import { postOtlp } from './otlp-client.js';
import { lookoutTraceId } from '../../../src/spans/trace-id.js';
import { msToDateTime64 } from '../../../src/platform/clickhouse/clickhouse-time.js';

/** Old spans in one large part: 37 granules of the default 8,192 rows. */
const OLD_SPANS = 300_000;
const TRACES = 10;
/** Each trace: 15 spans in 3 parts of 5; the limit falls inside the third part. */
const LIMIT = 12;
let svc: TestService;
let dataDir: string;
let projectId: string;
let tenantId: string;

beforeAll(async () => {
  dataDir = tempDataDir();
  svc = await startTestService({ TRACE_SETTLE_MS: '600000', TRACE_MAX_WAIT_MS: '600000', TRACE_MAX_SPANS: String(LIMIT) }, dataDir);
  projectId = (await svc.newProject('duplicate-check')).id;
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

type Body = { resourceSpans: unknown[] };

/** One request carrying part `part` of every chain. */
function partOf(chains: { bodies: object[] }[], part: number): Body {
  return { resourceSpans: chains.flatMap((c) => (c.bodies[part] as Body).resourceSpans) };
}

/** Sends a request; its OTLP answer body and the rows the engine selected meanwhile. */
async function send(body: Body): Promise<{ answer: { partialSuccess?: { rejectedSpans?: string } }; read: number }> {
  const before = await selectedRows(svc.service.deps.ch);
  const answer = await postOtlp(svc.url, svc.adminKey, JSON.stringify(body), { contentType: 'application/json', headers: { 'x-lookout-project': projectId } });
  expect(answer.status).toBe(200);
  return { answer: JSON.parse(answer.body.toString() || '{}'), read: (await selectedRows(svc.service.deps.ch)) - before };
}

const chains = () => Array.from({ length: TRACES }, () => chainRequests({ length: 15, requests: 3 }));

describe('duplicate check of known traces on a filled spans table', () => {
  it('reads a bounded number of rows per trace whose first spans the registry dates, and stays exact', async () => {
    const sent = chains();
    const first = await send(partOf(sent, 0));
    expect(first.answer).toEqual({});
    // Every trace is known now, its registry row dated by the first flush.
    const { sql } = svc.service.deps;
    const ids = sent.map((c) => lookoutTraceId(projectId, c.traceId));
    const [dated] = await sql<{ n: number }[]>`select count(*)::int as n from stored_traces where trace_id = any(${ids}::uuid[]) and stored_since_ms is not null`;
    expect(dated.n).toBe(TRACES);

    const second = await send(partOf(sent, 1));
    expect(second.answer).toEqual({});
    // By key alone each trace costs a granule of the old part: about TRACES × 8,192 rows. Bounded, the
    // check reads the new part(s) only: a few dozen rows.
    expect(second.read).toBeGreaterThan(0);
    expect(second.read).toBeLessThan(TRACES * 1000);

    // 10 stored: of the third part 2 fit under the limit, 3 per trace are refused.
    const third = await send(partOf(sent, 2));
    expect(third.answer.partialSuccess?.rejectedSpans).toBe(String(TRACES * 3));
    expect(third.read).toBeLessThan(TRACES * 1000);
    // At the limit, a re-sent part is taken whole for duplicates (a span taken for new would be refused).
    const again = await send(partOf(sent, 1));
    expect(again.answer).toEqual({});
    const thirdAgain = await send(partOf(sent, 2));
    expect(thirdAgain.answer.partialSuccess?.rejectedSpans).toBe(String(TRACES * 3));
  }, 120_000);

  it('reads a trace whose history is unknown by key, and finds its spans written long before', async () => {
    const { sql, ch } = svc.service.deps;
    const sent = chains();
    const ids = sent.map((c) => lookoutTraceId(projectId, c.traceId));
    // The first two parts of each chain stored an hour ago, and registry rows that do not date them
    // (as the backfill writes, or rows from before the registry kept the time).
    const anHourAgo = msToDateTime64(Date.now() - 3_600_000);
    const values = sent.flatMap((c, t) =>
      Array.from({ length: 10 }, (_, i) => ({
        tenant_id: tenantId,
        project_id: projectId,
        trace_id: ids[t],
        otel_trace_id: c.traceId,
        span_id: (i + 1).toString(16).padStart(16, '0'),
        parent_span_id: i === 0 ? '' : i.toString(16).padStart(16, '0'),
        name: 'old',
        kind: 'INTERNAL',
        start_time_ns: '0',
        end_time_ns: '1000000',
        status_code: 'OK',
        attributes: '{}',
        events: '[]',
        resource: '{}',
        timestamp: anHourAgo,
        ingested_at: anHourAgo,
      })),
    );
    await ch.client.insert({ table: ch.table('spans'), values, format: 'JSONEachRow' });
    await sql`insert into stored_traces (tenant_id, project_id, trace_id) select ${tenantId}::uuid, ${projectId}::uuid, unnest(${ids}::uuid[])`;

    // Found stored, though written before any bound this check could have used.
    const first = await send(partOf(sent, 0));
    expect(first.answer).toEqual({});
    // The read the bound saves: a granule of the old part per trace.
    expect(first.read).toBeGreaterThan(TRACES * 1000);
    expect((await send(partOf(sent, 1))).answer).toEqual({});
    const third = await send(partOf(sent, 2));
    expect(third.answer.partialSuccess?.rejectedSpans).toBe(String(TRACES * 3));
    // The rows stay undated: later flushes of these traces keep reading by key.
    const [dated] = await sql<{ n: number }[]>`select count(*)::int as n from stored_traces where trace_id = any(${ids}::uuid[]) and stored_since_ms is not null`;
    expect(dated.n).toBe(0);
  }, 120_000);
});
