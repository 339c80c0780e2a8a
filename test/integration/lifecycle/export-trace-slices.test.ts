import { afterAll, beforeAll, expect, it } from 'vitest';
import { streamTraceExport, tracePrefixStatement } from '../../../src/lifecycle/trace-export.js';
import { cutTraceIdRanges } from '../../../src/lifecycle/trace-id-ranges.js';
import { startTestService, type TestService } from '../../helpers/service.js';
import { until } from './deletion-harness.js';

/**
 * The trace export read in slices of trace ids (docs/data-lifecycle.md "Getting your data out"):
 * every trace whose first span starts in the window is written exactly once, with every one of its
 * spans exactly once — a trace that starts before midnight and goes on after it, one whose spans go
 * past the window's end, many with spans hours apart — while a trace that started before the window
 * is left out though it has spans inside; through the route (one slice for this window) and read in
 * many slices of a few traces each. Against the real engines.
 */
let svc: TestService;
let projectId: string;
const SECOND = 1000;
const HOUR = 3_600_000;
const DAY = 86_400_000;
const d0 = Math.floor(Date.now() / DAY) * DAY - 3 * DAY;
const midnight = d0 + DAY;
const end = d0 + 2 * DAY;
const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');

const hex = (n: number, width: number) => n.toString(16).padStart(width, '0');
const traceHex = (n: number) => `e${hex(n, 31)}`;

/** Trace number → its spans' start times (ms). */
const TRACES = new Map<number, number[]>([
  [1, [midnight - 30 * SECOND, midnight - 10 * SECOND, midnight + 10 * SECOND, midnight + 40 * SECOND]],
  [2, [end - 20 * SECOND, end + 30 * SECOND]],
  [3, [d0 - 60 * SECOND, d0 + 30 * SECOND]],
]);
for (let i = 0; i < 200; i++) {
  const first = d0 + 7 * SECOND + Math.floor((i * 2 * DAY) / 200);
  // Every tenth trace has a span 13 hours on: past the midnight (or the window's end) for some of them.
  TRACES.set(100 + i, [first, first + SECOND, first + 2 * SECOND, ...(i % 10 === 0 ? [first + 13 * HOUR] : [])]);
}
const EXPORTED = [...TRACES].filter(([, starts]) => Math.min(...starts) >= d0 && Math.min(...starts) < end);

function request(trace: number, starts: number[]): string {
  const ns = (ms: number) => (BigInt(ms) * 1_000_000n).toString();
  const spans = starts.map((ms, k) => ({
    traceId: traceHex(trace), spanId: hex(trace * 16 + k + 1, 16), ...(k > 0 ? { parentSpanId: hex(trace * 16 + 1, 16) } : {}),
    name: `step ${k}`, kind: 1, startTimeUnixNano: ns(ms), endTimeUnixNano: ns(ms + 500), status: {},
  }));
  return JSON.stringify({ resourceSpans: [{ resource: { attributes: [{ key: 'service.name', value: { stringValue: 'sliced' } }] }, scopeSpans: [{ scope: { name: 'test' }, spans }] }] });
}

beforeAll(async () => {
  svc = await startTestService({ TRACE_SETTLE_MS: '300' });
  projectId = (await svc.newProject('trace-slices')).id;
  for (const [trace, starts] of TRACES) {
    const res = await fetch(`${svc.url}/v1/traces`, {
      method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${svc.adminKey}`, 'x-lookout-project': projectId }, body: request(trace, starts),
    });
    expect(res.status, await res.clone().text()).toBe(200);
  }
  const ch = svc.service.deps.ch;
  const total = [...TRACES.values()].reduce((n, s) => n + s.length, 0);
  await until(`${total} stored spans`, async () => {
    const rows = await (await ch.client.query({ query: `SELECT count() AS n FROM ${ch.table('spans')} WHERE project_id = {p:String}`, query_params: { p: projectId }, format: 'JSONEachRow' })).json<{ n: string | number }>();
    return Number(rows[0].n) === total;
  });
}, 180_000);

afterAll(async () => {
  await svc?.stop();
});

type Span = { traceId: string; spanId: string; startTimeUnixNano: string };

/** The lines' traces, checked: each trace once, each with exactly its spans, each span once. */
function checkLines(text: string): void {
  const lines = text.split('\n').filter(Boolean);
  const traces = lines.map((line) => (JSON.parse(line).resourceSpans as { scopeSpans: { spans: Span[] }[] }[]).flatMap((r) => r.scopeSpans.flatMap((s) => s.spans)));

  // One line per trace, each trace once.
  const ids = traces.map((spans) => {
    expect(new Set(spans.map((s) => s.traceId)).size).toBe(1);
    return spans[0].traceId;
  });
  expect(new Set(ids).size).toBe(ids.length);
  expect(ids.sort()).toEqual(EXPORTED.map(([trace]) => traceHex(trace)).sort());

  // Each trace with exactly its spans, each once (those after midnight and after the window's end too).
  for (const spans of traces) {
    const trace = EXPORTED.find(([n]) => traceHex(n) === spans[0].traceId)!;
    const want = trace[1].map((ms) => (BigInt(ms) * 1_000_000n).toString()).sort();
    expect(spans.map((s) => s.startTimeUnixNano).sort()).toEqual(want);
    expect(new Set(spans.map((s) => s.spanId)).size).toBe(spans.length);
  }
  const crossing = traces.find((spans) => spans[0].traceId === traceHex(1))!;
  expect(crossing).toHaveLength(4);
  expect(ids).not.toContain(traceHex(3));
}

it('writes every trace that starts in the window once, with each of its spans once', async () => {
  const res = await fetch(`${svc.api}/projects/${projectId}/export/traces?start=${iso(d0)}&end_exclusive=${iso(end)}`, { headers: { authorization: `Bearer ${svc.adminKey}` } });
  expect(res.status).toBe(200);
  checkLines(await res.text());
}, 180_000);

it('writes the same when the window is read in many slices of trace ids', async () => {
  const { ch, compute } = svc.service.deps;
  const scope = { tenantId: svc.service.bootstrap!.tenantId, projectId };
  const window = { start: new Date(d0), endExclusive: new Date(end) };
  // About 20 spans a slice: the window's ~650 spans in some thirty slices.
  const sliceSpans = 20;
  const prefixes = await ch.read<{ prefix: string; rows: number }>(tracePrefixStatement(ch, scope, window), { lane: 'analytics', scope });
  expect(cutTraceIdRanges(prefixes.map((p) => ({ prefix: p.prefix, rows: Number(p.rows) })), sliceSpans).length).toBeGreaterThanOrEqual(10);
  const body = await streamTraceExport({ ch, compute, config: { exportTimeoutSeconds: 60 } }, scope, window, sliceSpans);
  const chunks: Buffer[] = [];
  for await (const chunk of body as AsyncIterable<Buffer>) chunks.push(chunk);
  checkLines(Buffer.concat(chunks).toString('utf8'));
}, 180_000);
