/**
 * The trace export reads the project's spans once, however many slices it is read in
 * (docs/data-lifecycle.md "Getting your data out"). `spans` is sorted by trace id, so a slice that
 * found its traces by id without a bound of its own read nearly every granule of the project, and
 * an export of n slices read the project n times over. Read in slices of trace ids, each statement
 * reads its own range's granules. Counted by the engine's own counter (system.events SelectedRows),
 * so the machine's load does not matter: a project of 250,000 spans from weeks ago (another month's
 * partition) and 50,000 in the window, exported in slices of 5,000 spans (ten or more), reads fewer
 * than three times the project's spans — once a slice would be ten times — and writes every trace of
 * the window whole.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { streamTraceExport, traceExportParts } from '../../../src/lifecycle/trace-export.js';
import { startTestService, type TestService } from '../../helpers/service.js';
import { until } from './deletion-harness.js';

const DAY = 86_400_000;
const SPANS_PER_TRACE = 10;
const WINDOW_SPANS = 50_000;
const OLD_SPANS = 250_000;
const SLICE_SPANS = 5_000;
const d0 = Math.floor(Date.now() / DAY) * DAY - 3 * DAY;
const end = d0 + 2 * DAY;
/** 45 days before the window: always another month, so another partition. */
const old = d0 - 45 * DAY;

let svc: TestService;
let scope: { tenantId: string; projectId: string };

/** `count` spans in traces of ten, the trace number offset by `first`, the traces' starts spread over `spreadMs` from `at`. */
async function seed(first: number, count: number, at: number, spreadMs: number): Promise<void> {
  const { ch } = svc.service.deps;
  const trace = `(${first} + intDiv(number, ${SPANS_PER_TRACE}))`;
  const ts = `fromUnixTimestamp64Milli(toInt64({at:Int64} + (${trace} * 7919) % {spread:Int64} + number % ${SPANS_PER_TRACE}), 'UTC')`;
  await ch.client.command({
    query: `INSERT INTO ${ch.table('spans')} (tenant_id, project_id, trace_id, otel_trace_id, span_id, name, kind, start_time_ns, end_time_ns, status_code, attributes, events, resource, timestamp, ingested_at)
      SELECT {t:String}, {p:String}, toString(reinterpretAsUUID(MD5(toString(${trace})))), lower(hex(MD5(toString(${trace})))),
             lower(hex(cityHash64(number))), 'step', 'INTERNAL', toUInt64(toUnixTimestamp64Nano(${ts})), toUInt64(toUnixTimestamp64Nano(${ts})) + 1000000,
             'OK', '{}', '[]', '{}', ${ts}, now64(3)
      FROM numbers(${count})`,
    query_params: { t: scope.tenantId, p: scope.projectId, at, spread: spreadMs },
  });
}

async function selectedRows(): Promise<number> {
  const { ch } = svc.service.deps;
  const rows = await (await ch.client.query({ query: `SELECT value FROM system.events WHERE event = 'SelectedRows'`, format: 'JSONEachRow' })).json<{ value: string }>();
  return Number(rows[0]?.value ?? 0);
}

beforeAll(async () => {
  svc = await startTestService();
  const projectId = (await svc.newProject('trace-read-bound')).id;
  scope = { tenantId: svc.service.bootstrap!.tenantId, projectId };
  const { sql } = svc.service.deps;
  // The stored-trace registry's backfill reads `spans` once at start-up: done before anything is counted.
  await until('the stored-trace registry backfill', async () => {
    const [r] = await sql<{ n: number }[]>`select count(*)::int as n from shared_state where name = 'stored_traces_backfill'`;
    return r.n > 0;
  });
  await seed(0, OLD_SPANS, old, 10 * DAY);
  // Starts at least a minute before the window's end, so each trace's ten spans lie inside it.
  await seed(1_000_000, WINDOW_SPANS, d0, 2 * DAY - 60_000);
}, 180_000);

afterAll(async () => {
  await svc?.stop();
});

it('reads the project once over all its slices and writes every trace of the window whole', async () => {
  const { ch, compute } = svc.service.deps;
  const window = { start: new Date(d0), endExclusive: new Date(end) };
  expect((await traceExportParts({ ch }, scope, window, SLICE_SPANS)).parts.length).toBeGreaterThanOrEqual(10);

  const before = await selectedRows();
  const body = await streamTraceExport({ ch, compute, config: { exportTimeoutSeconds: 120 } }, scope, window, SLICE_SPANS);
  const chunks: Buffer[] = [];
  for await (const chunk of body as AsyncIterable<Buffer>) chunks.push(chunk);
  const read = (await selectedRows()) - before;

  const lines = Buffer.concat(chunks).toString('utf8').split('\n').filter(Boolean);
  expect(lines).toHaveLength(WINDOW_SPANS / SPANS_PER_TRACE);
  const traceIds = new Set<string>();
  for (const line of lines) {
    const spans = (JSON.parse(line).resourceSpans as { scopeSpans: { spans: { traceId: string }[] }[] }[]).flatMap((r) => r.scopeSpans.flatMap((s) => s.spans));
    expect(spans).toHaveLength(SPANS_PER_TRACE);
    traceIds.add(spans[0].traceId);
  }
  expect(traceIds.size).toBe(lines.length);

  // The count per prefix and each slice's search read the window's month; the slices' reads of their
  // traces' spans cover the project once (plus a granule at each range's ends in each part).
  // One slice reading the whole project would be 10 × 300,000.
  expect(read).toBeGreaterThan(0);
  expect(read).toBeLessThan(3 * (OLD_SPANS + WINDOW_SPANS));
}, 180_000);
