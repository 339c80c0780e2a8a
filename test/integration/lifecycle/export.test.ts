import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allEvents } from '../../../src/analytics/catalog.js';
import { exportColumns } from '../../../src/analytics/query/event-export.js';
import { agentRunRequest, type RunSpec } from '../../helpers/otlp-json.js';
import { startTestService, type TestService } from '../../helpers/service.js';
import { settled, until } from './deletion-harness.js';

/**
 * The exports against the real engines (docs/data-lifecycle.md "Getting your data out"): an event's
 * rows in each format agree with the query language's answer over the same rows (Parquet read back
 * by the engine), the OTLP lines re-ingested into a fresh project give the same traces and
 * analytics, another tenant or project never sees them, bad input is a 400, and a reader that goes
 * away frees its analytics slot.
 */
let svc: TestService;
let projectId: string;
let otherProjectId: string;
let readKey: string;
const HOUR = 3_600_000;
const base = new Date(Math.floor(Date.now() / HOUR) * HOUR - 6 * HOUR);
const at = (minutes: number) => new Date(base.getTime() + minutes * 60_000);
const iso = (date: Date) => date.toISOString().replace('.000Z', 'Z');
const window = { start: iso(base), end_exclusive: iso(new Date(base.getTime() + 2 * HOUR)) };

const RUNS: RunSpec[] = [
  // Runs from minute 1 to past minute 2: its second call starts in the window [2, 4) it did not start in.
  { start: at(1), agent: 'support', generations: [{ model: 'gpt-4o', input: 1200, output: 300, ms: 90_000 }, { model: 'gpt-4o-mini', input: 400, output: 90 }], tools: [{ name: 'lookup_order' }] },
  { start: at(5), agent: 'support', generations: [{ model: 'gpt-4o', input: 800, output: 200 }], tools: [{ name: 'refund', error: true }], failed: true },
  { start: at(30), agent: 'billing', generations: [{ model: 'claude-sonnet-4', input: 2000, output: 500 }], tools: [{ name: 'lookup_invoice' }, { name: 'lookup_order' }] },
  { start: at(61), agent: 'billing', generations: [{ model: 'gpt-4o-mini', input: 300, output: 40 }] },
];

/** A trace with what OTLP can carry beyond the test runs: events, every value type, two scopes and two resources. */
function richTrace(): { body: string; traceId: string } {
  const traceId = 'ab'.repeat(16);
  const ns = (minutes: number) => (BigInt(at(minutes).getTime()) * 1_000_000n + 123n).toString();
  const kv = (key: string, value: Record<string, unknown>) => ({ key, value });
  const root = {
    traceId, spanId: '1111111111111111', name: 'invoke_agent planner', kind: 2, startTimeUnixNano: ns(90), endTimeUnixNano: ns(91),
    attributes: [
      kv('gen_ai.operation.name', { stringValue: 'invoke_agent' }), kv('gen_ai.agent.name', { stringValue: 'planner' }),
      kv('retries', { intValue: '3' }), kv('temperature', { doubleValue: 0.25 }), kv('cached', { boolValue: true }),
      kv('tags', { arrayValue: { values: [{ stringValue: 'a' }, { intValue: '2' }] } }),
      kv('request', { kvlistValue: { values: [kv('id', { stringValue: 'r-1' }), kv('nested', { kvlistValue: { values: [kv('depth', { intValue: '2' })] } })] } }),
    ],
    events: [{ timeUnixNano: ns(90), name: 'plan.started', attributes: [kv('steps', { intValue: '4' })] }],
    status: { code: 2, message: 'planner gave up' },
  };
  const child = {
    traceId, spanId: '2222222222222222', parentSpanId: '1111111111111111', name: 'chat gpt-4o', kind: 3, startTimeUnixNano: ns(90), endTimeUnixNano: ns(90.5),
    attributes: [kv('gen_ai.operation.name', { stringValue: 'chat' }), kv('gen_ai.request.model', { stringValue: 'gpt-4o' }), kv('gen_ai.usage.input_tokens', { intValue: '100' }), kv('gen_ai.usage.output_tokens', { intValue: '20' })],
    status: {},
  };
  const tool = {
    traceId, spanId: '3333333333333333', parentSpanId: '1111111111111111', name: 'execute_tool search', kind: 1, startTimeUnixNano: ns(90.6), endTimeUnixNano: ns(90.7),
    attributes: [kv('gen_ai.operation.name', { stringValue: 'execute_tool' }), kv('gen_ai.tool.name', { stringValue: 'search' })],
    status: { code: 1 },
  };
  const body = {
    resourceSpans: [
      { resource: { attributes: [kv('service.name', { stringValue: 'planner-svc' })] }, scopeSpans: [{ scope: { name: 'agents', version: '1.2.3' }, spans: [root] }, { scope: { name: 'openai' }, spans: [child] }] },
      { resource: { attributes: [kv('service.name', { stringValue: 'tools-svc' })] }, scopeSpans: [{ scope: { name: 'tools' }, spans: [tool] }] },
    ],
  };
  return { body: JSON.stringify(body), traceId };
}

async function post(project: string, body: string): Promise<void> {
  const res = await fetch(`${svc.url}/v1/traces`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${svc.adminKey}`, 'x-lookout-project': project }, body });
  expect(res.status, await res.clone().text()).toBe(200);
}

async function download(apiPath: string, key = svc.adminKey): Promise<{ status: number; headers: Headers; bytes: Buffer }> {
  const res = await fetch(`${svc.api}${apiPath}`, { headers: { authorization: `Bearer ${key}` } });
  return { status: res.status, headers: res.headers, bytes: Buffer.from(await res.arrayBuffer()) };
}

const exportPath = (project: string, query: Record<string, string>) => `/projects/${project}/export?${new URLSearchParams(query)}`;
const ndjson = (bytes: Buffer) => bytes.toString('utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);

/** RFC 4180 text as ClickHouse's CSVWithNames writes it: quoted text ("" inside), bare numbers, an empty cell for null. */
function csvRows(text: string): Record<string, unknown>[] {
  const records: (string | number | null)[][] = [];
  let row: (string | number | null)[] = [];
  let i = 0;
  while (i < text.length) {
    if (text[i] === '"') {
      let value = '';
      i++;
      for (;;) {
        if (text[i] === '"' && text[i + 1] === '"') {
          value += '"';
          i += 2;
        } else if (text[i] === '"') {
          i++;
          break;
        } else value += text[i++];
      }
      row.push(value);
    } else {
      let end = i;
      while (end < text.length && text[end] !== ',' && text[end] !== '\n') end++;
      const cell = text.slice(i, end);
      row.push(cell === '' ? null : Number(cell));
      i = end;
    }
    if (text[i] === ',') i++;
    else if (text[i] === '\n') {
      records.push(row);
      row = [];
      i++;
    }
  }
  const [header, ...body] = records;
  return body.map((cells) => Object.fromEntries(header.map((name, k) => [String(name), cells[k]])));
}

/** Rows in a stable order, so two reads of the same rows compare equal. */
const sorted = (rows: Record<string, unknown>[]) => [...rows].sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1));

beforeAll(async () => {
  svc = await startTestService({ TRACE_SETTLE_MS: '300' });
  projectId = (await svc.newProject('exported')).id;
  otherProjectId = (await svc.newProject('neighbour')).id;
  readKey = await svc.newKey('read');
  for (const run of RUNS) await post(projectId, agentRunRequest(run).body);
  await post(projectId, richTrace().body);
  await post(otherProjectId, agentRunRequest({ start: at(10), agent: 'neighbour', generations: [{ model: 'gpt-4o', input: 5, output: 5 }] }).body);
  await settled(svc, projectId, RUNS.length + 1);
  await settled(svc, otherProjectId, 1);
}, 180_000);

afterAll(async () => {
  await svc?.stop();
});

describe('GET /projects/{project_id}/export', () => {
  it('streams every catalog field of generation.completed, one row per call, as the query language counts them', async () => {
    const got = await download(exportPath(projectId, { from: 'generation.completed', ...window }), readKey);
    expect(got.status).toBe(200);
    expect(got.headers.get('content-type')).toBe('application/x-ndjson; charset=utf-8');
    expect(got.headers.get('content-disposition')).toMatch(/^attachment; filename="lookout-generation-completed-\d{8}T\d{6}Z-\d{8}T\d{6}Z\.ndjson"$/);
    const rows = ndjson(got.bytes);
    const event = allEvents().find((e) => e.name === 'generation.completed')!;
    for (const row of rows) expect(Object.keys(row)).toEqual(exportColumns(event));
    expect(rows).toHaveLength(RUNS.flatMap((r) => r.generations).length + 1);

    const query = await svc.call('POST', `/projects/${projectId}/analytics/query`, {
      body: {
        from: 'generation.completed', ...window,
        group_by: [{ field: 'trace_id' }, { field: 'span_id' }, { field: 'model' }],
        measures: [{ as: 'n', agg: 'count' }, { as: 'input_tokens', agg: 'sum', field: 'input_tokens' }, { as: 'output_tokens', agg: 'sum', field: 'output_tokens' }, { as: 'duration_ms', agg: 'sum', field: 'duration_ms' }, { as: 'error', agg: 'sum', field: 'error' }],
      },
    });
    expect(query.status).toBe(200);
    expect(query.body.rows.every((r: { n: number }) => r.n === 1)).toBe(true);
    const fromQuery = query.body.rows.map(({ n: _n, ...r }: Record<string, unknown>) => r);
    const fromExport = rows.map((r) => ({ trace_id: r.trace_id, span_id: r.span_id, model: r.model, input_tokens: r.input_tokens, output_tokens: r.output_tokens, duration_ms: r.duration_ms, error: r.error }));
    expect(sorted(fromExport)).toEqual(sorted(fromQuery));
    for (const row of rows) {
      expect(row.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      expect(Date.parse(String(row.timestamp))).toBeGreaterThanOrEqual(Date.parse(window.start));
    }
  });

  it('answers trace.processed with the figures the query language sums per agent', async () => {
    const rows = ndjson((await download(exportPath(projectId, { from: 'trace.processed', ...window }))).bytes);
    expect(rows).toHaveLength(RUNS.length + 1);
    const query = await svc.call('POST', `/projects/${projectId}/analytics/query`, {
      body: { from: 'trace.processed', ...window, group_by: [{ field: 'agent_name' }], measures: [{ as: 'runs', agg: 'count' }, { as: 'tokens', agg: 'sum', field: 'total_tokens' }, { as: 'errors', agg: 'sum', field: 'error_count' }] },
    });
    const perAgent = new Map<string, { runs: number; tokens: number; errors: number }>();
    for (const r of rows) {
      const a = perAgent.get(String(r.agent_name)) ?? { runs: 0, tokens: 0, errors: 0 };
      perAgent.set(String(r.agent_name), { runs: a.runs + 1, tokens: a.tokens + Number(r.total_tokens), errors: a.errors + Number(r.error_count) });
    }
    expect(sorted([...perAgent].map(([agent_name, v]) => ({ agent_name, ...v })))).toEqual(sorted(query.body.rows));
  });

  it('writes the same rows as CSV and as Parquet (read back by the engine)', async () => {
    const params = { from: 'tool.called', ...window };
    const json = ndjson((await download(exportPath(projectId, params))).bytes);
    expect(json.length).toBeGreaterThan(0);

    const csv = await download(exportPath(projectId, { ...params, format: 'csv' }));
    expect(csv.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(csv.bytes.toString('utf8').split('\n')[0]).toBe(exportColumns(allEvents().find((e) => e.name === 'tool.called')!).map((c) => `"${c}"`).join(','));
    expect(sorted(csvRows(csv.bytes.toString('utf8')))).toEqual(sorted(json));

    const parquet = await download(exportPath(projectId, { ...params, format: 'parquet' }));
    expect(parquet.headers.get('content-type')).toBe('application/vnd.apache.parquet');
    expect(parquet.headers.get('content-disposition')).toMatch(/\.parquet"$/);
    expect(parquet.bytes.subarray(0, 4).toString('latin1')).toBe('PAR1');
    const file = path.join(svc.dataDir, 'tool-called.parquet');
    fs.writeFileSync(file, parquet.bytes);
    const read = await svc.service.deps.ch.client.query({
      query: `SELECT * REPLACE (formatDateTime(timestamp, '%Y-%m-%dT%H:%i:%S.%fZ', 'UTC') AS timestamp) FROM file({file:String}, Parquet)`,
      query_params: { file },
      format: 'JSONEachRow',
      clickhouse_settings: { output_format_json_quote_64bit_integers: 0 },
    });
    const back = (await read.json<Record<string, unknown>>()).map((r) => ({ ...r, timestamp: String(r.timestamp).replace(/(\.\d{3})\d*Z$/, '$1Z') }));
    expect(sorted(back)).toEqual(sorted(json));
  });

  it('exports an empty window as an empty body (NDJSON) or the header line alone (CSV)', async () => {
    const empty = { start: '2026-01-01T00:00:00Z', end_exclusive: '2026-01-02T00:00:00Z' };
    const json = await download(exportPath(projectId, { from: 'span.errored', ...empty }));
    expect(json.status).toBe(200);
    expect(json.bytes.length).toBe(0);
    const csv = await download(exportPath(projectId, { from: 'span.errored', ...empty, format: 'csv' }));
    expect(csv.status).toBe(200);
    expect(csv.bytes.toString('utf8').trim().split('\n')).toHaveLength(1);
  });

  it('never shows another project of the tenant, and answers 404 to another tenant and to a key limited to another project', async () => {
    const mine = ndjson((await download(exportPath(projectId, { from: 'generation.completed', ...window }))).bytes);
    const theirs = ndjson((await download(exportPath(otherProjectId, { from: 'generation.completed', ...window }))).bytes);
    expect(theirs).toHaveLength(1);
    const mineIds = new Set(mine.map((r) => r.trace_id));
    expect(theirs.some((r) => mineIds.has(r.trace_id))).toBe(false);

    const stranger = await svc.newTenant('stranger');
    const strangersOwn = await svc.newProject('theirs', stranger.adminKey);
    for (const p of [exportPath(projectId, { from: 'generation.completed', ...window }), `/projects/${projectId}/export/traces?${new URLSearchParams(window)}`]) {
      const res = await download(p, stranger.adminKey);
      expect(res.status).toBe(404);
      expect(JSON.parse(res.bytes.toString('utf8'))).toEqual({ detail: 'Project not found', code: 'not_found' });
    }
    const limited = await svc.newKey('read', { projectId: otherProjectId });
    expect((await download(exportPath(projectId, { from: 'generation.completed', ...window }), limited)).status).toBe(404);
    // The stranger's own (empty) project answers them, and holds nothing of ours.
    const own = await download(exportPath(strangersOwn.id, { from: 'generation.completed', ...window }), stranger.adminKey);
    expect(own.status).toBe(200);
    expect(own.bytes.length).toBe(0);
  });

  it('answers bad input with 400 {detail, code} before any byte of a file, and an ingest key with 403', async () => {
    const bad: [Record<string, string>, RegExp][] = [
      [{ ...window }, /^from: required; events are trace\.processed/],
      [{ from: 'no.such.event', ...window }, /^from: unknown event no\.such\.event; events are /],
      [{ from: 'tool.called', ...window, format: 'xml' }, /format/],
      [{ from: 'tool.called', start: window.start }, /^end_exclusive: /],
      [{ from: 'tool.called', start: '2026-01-01T00:00:00.500Z', end_exclusive: '2026-01-02T00:00:00Z' }, /^start and endExclusive must be second-aligned UTC$/],
      [{ from: 'tool.called', start: '2026-01-01T00:00:00Z', end_exclusive: '2026-04-02T00:00:00Z' }, /^Window exceeds 90 days$/],
      [{ from: 'tool.called', start: '2026-01-02T00:00:00Z', end_exclusive: '2026-01-01T00:00:00Z' }, /^end_exclusive: must be after start$/],
    ];
    for (const [query, detail] of bad) {
      const res = await download(exportPath(projectId, query));
      expect(res.status, JSON.stringify(query)).toBe(400);
      expect(res.headers.get('content-disposition')).toBeNull();
      const body = JSON.parse(res.bytes.toString('utf8'));
      expect(body.code).toBe('validation_error');
      expect(body.detail).toMatch(detail);
    }
    const traces = await download(`/projects/${projectId}/export/traces?start=${window.start}&end_exclusive=2027-12-01T00:00:00Z`);
    expect(traces.status).toBe(400);
    expect(JSON.parse(traces.bytes.toString('utf8')).detail).toBe('Window exceeds 90 days');
    const ingestKey = await svc.newKey('ingest');
    expect((await download(exportPath(projectId, { from: 'tool.called', ...window }), ingestKey)).status).toBe(403);
  });

  it('frees its analytics slot when the reader goes away mid-stream', async () => {
    const ch = svc.service.deps.ch;
    // Far more bytes than sockets and streams buffer (~100 MB of rows), seeded inside the engine, so
    // the reader goes away while the answer is still being produced. Only its first chunk is read,
    // so the volume costs the insert alone; one row per millisecond from `base`.
    const seeded = 400_000;
    await ch.client.command({
      query: `INSERT INTO ${ch.table('event_tool_called')} (tenant_id, project_id, timestamp, actor, surface, user_id, api_key_id, tool, agent_name, trace_id, span_id, duration_ms, output_tokens, error)
              SELECT {tenant:String}, {project:String}, fromUnixTimestamp64Milli(toInt64({base:Int64} + number), 'UTC'), 'api_key', 'api', '', '', 'bulk', 'bulk',
                     generateUUIDv4(number), cityHash64(number), 1, 1, 0
              FROM numbers({rows:UInt64})`,
      query_params: { tenant: svc.service.bootstrap!.tenantId, project: otherProjectId, base: base.getTime(), rows: seeded },
    });
    const controller = new AbortController();
    const res = await fetch(`${svc.api}${exportPath(otherProjectId, { from: 'tool.called', ...window })}`, { headers: { authorization: `Bearer ${svc.adminKey}` }, signal: controller.signal });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    const first = await reader.read();
    expect(first.done).toBe(false);
    controller.abort();
    await reader.read().catch(() => undefined);
    await until('the export to give its slot back', async () => ch.gates.analytics.load.running === 0);
    // And the lane serves the next export in full: the first 150 seconds of the seeded rows, which
    // the engine answers in several blocks (at most 65,409 rows each) — on the embedded engine each
    // its own chunk with its own CSV header line, of which only the first may reach the file.
    const part = { start: window.start, end_exclusive: iso(new Date(base.getTime() + 150_000)) };
    const rows = 150_000;
    const full = await download(exportPath(otherProjectId, { from: 'tool.called', ...part, format: 'csv' }));
    expect(full.status).toBe(200);
    expect(full.bytes.toString('utf8').trim().split('\n')).toHaveLength(1 + rows);
    // Many blocks' worth of rows (two Parquet row groups of at most 100,000) make one Parquet file that the engine reads back whole.
    const parquet = await download(exportPath(otherProjectId, { from: 'tool.called', ...part, format: 'parquet' }));
    const file = path.join(svc.dataDir, 'bulk.parquet');
    fs.writeFileSync(file, parquet.bytes);
    const read = await ch.client.query({ query: 'SELECT count() AS n, uniqExact(span_id) AS spans FROM file({file:String}, Parquet)', query_params: { file }, format: 'JSONEachRow' });
    expect(await read.json()).toEqual([{ n: rows, spans: rows }]);
  }, 180_000);
});

describe('GET /projects/{project_id}/export/traces', () => {
  it('replays into a fresh project as the same traces, spans and analytics', async () => {
    const got = await download(`/projects/${projectId}/export/traces?${new URLSearchParams(window)}`, readKey);
    expect(got.status).toBe(200);
    expect(got.headers.get('content-type')).toBe('application/x-ndjson; charset=utf-8');
    expect(got.headers.get('content-disposition')).toMatch(/^attachment; filename="lookout-traces-.*\.otlp\.ndjson"$/);
    const lines = got.bytes.toString('utf8').split('\n').filter(Boolean);
    expect(lines).toHaveLength(RUNS.length + 1);

    const fresh = (await svc.newProject('replayed')).id;
    for (const line of lines) await post(fresh, line);
    await settled(svc, fresh, lines.length);

    const list = async (p: string) =>
      sorted((await svc.call('GET', `/projects/${p}/traces?limit=100`)).body.traces.map((t: Record<string, unknown>) => {
        const { id: _id, project_id: _p, ...rest } = t;
        return rest;
      }));
    expect(await list(fresh)).toEqual(await list(projectId));

    const analytics = async (p: string, body: Record<string, unknown>) => sorted((await svc.call('POST', `/projects/${p}/analytics/query`, { body: { ...body, ...window } })).body.rows);
    const questions = [
      { from: 'trace.processed', group_by: [{ field: 'agent_name' }], measures: [{ as: 'runs', agg: 'count' }, { as: 'tokens', agg: 'sum', field: 'total_tokens' }, { agg: 'trace_cost' }] },
      { from: 'generation.completed', group_by: [{ field: 'model' }], measures: [{ as: 'calls', agg: 'count' }, { as: 'input', agg: 'sum', field: 'input_tokens' }, { as: 'output', agg: 'sum', field: 'output_tokens' }, { agg: 'generation_cost' }] },
      { from: 'tool.called', group_by: [{ field: 'tool' }, { field: 'agent_name' }], measures: [{ as: 'calls', agg: 'count' }, { as: 'errors', agg: 'sum', field: 'error' }] },
    ];
    for (const q of questions) expect(await analytics(fresh, q), q.from).toEqual(await analytics(projectId, q));

    // Span by span, attributes and events with their types, of the trace that carries every kind of value.
    const otelId = richTrace().traceId;
    const spansOf = async (p: string) => {
      const id = (await svc.call('GET', `/projects/${p}/traces?limit=100`)).body.traces.find((t: { otel_trace_id: string }) => t.otel_trace_id === otelId).id;
      const detail = (await svc.call('GET', `/traces/${id}`)).body;
      // `id` is the project's own id of the span; everything else must survive the trip.
      return sorted(detail.spans.map((s: Record<string, unknown>) => ({ ...s, id: undefined })));
    };
    const replayed = await spansOf(fresh);
    expect(replayed).toEqual(await spansOf(projectId));
    const root = replayed.find((s) => s.otel_span_id === '1111111111111111') as Record<string, any>;
    expect(root.attributes).toMatchObject({ retries: 3, temperature: 0.25, cached: true, tags: ['a', 2], request: { id: 'r-1', nested: { depth: 2 } } });
    expect(root.events).toEqual([expect.objectContaining({ name: 'plan.started', attributes: { steps: 4 } })]);
    expect(root.status_description).toBe('planner gave up');
  });

  it('keeps a trace out of a window it started before, with all its spans in the window it started in', async () => {
    const spans = (line: string) => (JSON.parse(line).resourceSpans as { scopeSpans: { spans: { startTimeUnixNano: string }[] }[] }[]).flatMap((r) => r.scopeSpans.flatMap((s) => s.spans));
    const linesOf = async (fromMinute: number, toMinute: number) =>
      (await download(`/projects/${projectId}/export/traces?start=${iso(at(fromMinute))}&end_exclusive=${iso(at(toMinute))}`)).bytes.toString('utf8').split('\n').filter(Boolean);
    // The first run started at minute 1 and has a span starting after minute 2.
    const started = await linesOf(1, 2);
    expect(started).toHaveLength(1);
    const first = spans(started[0]);
    expect(first).toHaveLength(1 + RUNS[0].generations.length + RUNS[0].tools!.length);
    expect(first.some((s) => BigInt(s.startTimeUnixNano) >= BigInt(at(2).getTime()) * 1_000_000n)).toBe(true);
    expect(await linesOf(2, 4)).toHaveLength(0);
  });
});
