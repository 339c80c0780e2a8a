/**
 * What settling costs per trace on an empty store and on a filled one (npm run bench:settle-cost):
 * the counts the engine keeps itself (system.events: rows and marks its reads selected, rows merged,
 * its threads' CPU), so a busy machine changes the wall times but not these.
 *
 *   npm run bench:settle-cost -- --prefill 3000000 --traces 600 [--read-back] [--split]
 *
 * 1. A service in this process on fresh embedded stores (TRACE_SETTLE_MS=500). With --read-back the
 *    settle cache holds nothing, so every trace is read back from ClickHouse (what a backlog past
 *    SETTLE_CACHE_MAX_BYTES, or spans from another process, costs).
 * 2. --prefill N: N spans of 30-span traces of the same project, written an hour ago, put straight
 *    into `spans` (INSERT … SELECT from numbers(), shaped like ingested rows: ~300 B of attributes),
 *    with their `traces` and `trace_content` rows; the prefill's merges are waited for.
 * 3. --traces T traces of 30 spans in 20 requests, 500 ms apart; then until the settle queue is empty.
 *    With --split each trace's spans go in two requests (its last 15 with the next request's traces,
 *    as OTLP/JSON), so the second flush of every trace finds it known and runs the duplicate check.
 *    Prints per trace settled: the process's CPU (service, compute pool and engine threads alike) and
 *    the engine's counters over that span of time.
 */
import os from 'node:os';
import { startTestService, removeDir } from '../../test/helpers/service.js';
import { tempDataDir } from '../../test/helpers/temp-dir.js';
import { shapedBatch } from '../../test/helpers/synthetic-batch.js';
import { queueDepth } from '../../src/ingest/settle/settle-queue.js';
import { REGISTRY_COMPLETE_STATE } from '../../src/ingest/settle/stored-traces.js';
import { numberArg } from '../service-process.js';

const prefill = numberArg('prefill', 0);
const traces = numberArg('traces', 600);
const readBack = process.argv.includes('--read-back');
const split = process.argv.includes('--split');
const REQUESTS = 20;
const SPANS_PER_TRACE = 30;

const EVENTS = [
  'SelectedParts', 'SelectedMarks', 'SelectedRows', 'SelectedBytes', 'InsertedRows', 'Merge', 'MergedRows', 'MergedUncompressedBytes',
  'UserTimeMicroseconds', 'SystemTimeMicroseconds', 'SelectQueryTimeMicroseconds', 'InsertQueryTimeMicroseconds',
];

const dataDir = tempDataDir();
const svc = await startTestService({ TRACE_SETTLE_MS: '500', ...(readBack ? { SETTLE_CACHE_MAX_BYTES: '1' } : {}) }, dataDir);
const { ch, sql } = svc.service.deps;
const project = await svc.newProject('settle-cost');
const [{ tenant_id: tenant }] = await sql<{ tenant_id: string }[]>`select tenant_id::text from projects where id = ${project.id}`;

async function engineEvents(): Promise<Record<string, number>> {
  const result = await ch.client.query({ query: `SELECT event, value FROM system.events WHERE event IN {names:Array(String)}`, query_params: { names: EVENTS }, format: 'JSONEachRow' });
  return Object.fromEntries((await result.json<{ event: string; value: string }>()).map((r) => [r.event, Number(r.value)]));
}

async function insertSelect(query: string): Promise<void> {
  await ch.client.command({ query, query_params: { t: tenant, p: project.id }, clickhouse_settings: { max_execution_time: 3600 } });
}

// The registry's backfill marks it complete on the empty store; new traces are then "created" (not checked in ClickHouse).
for (let i = 0; i < 600; i++) {
  const [r] = await sql<{ n: number }[]>`select count(*)::int as n from shared_state where name = ${REGISTRY_COMPLETE_STATE}`;
  if (r.n > 0) break;
  await new Promise((resolve) => setTimeout(resolve, 500));
}

if (prefill > 0) {
  const started = Date.now();
  const traceId = `toString(reinterpretAsUUID(MD5(concat('prefill', toString(intDiv(number, ${SPANS_PER_TRACE}))))))`;
  const at = `now64(3) - toIntervalHour(1) - toIntervalMillisecond(number)`;
  for (let offset = 0; offset < prefill; offset += 1_000_000) {
    const from = `numbers(${offset}, ${Math.min(1_000_000, prefill - offset)})`;
    await insertSelect(`INSERT INTO ${ch.table('spans')} (tenant_id, project_id, trace_id, otel_trace_id, span_id, name, kind, start_time_ns, end_time_ns,
        duration_ms, status_code, service_name, span_class, model, agent_name, attributes, events, resource, timestamp, ingested_at)
      SELECT {t:String}, {p:String}, ${traceId}, hex(MD5(toString(intDiv(number, ${SPANS_PER_TRACE})))), lower(hex(cityHash64(number))),
        concat('llm call ', toString(number % 7)), 'INTERNAL', toUInt64(toUnixTimestamp64Nano(${at})), toUInt64(toUnixTimestamp64Nano(${at})) + 5000000,
        5, 'OK', 'bench-agent', 'llm', 'gpt-4o', 'agent',
        concat('{"gen_ai.request.model":"gpt-4o","gen_ai.usage.input_tokens":', toString(number % 1000), ',"gen_ai.prompt":"', repeat('lorem ipsum ', 20), toString(number), '"}'),
        '[]', '{"service.name":"bench-agent"}', ${at}, ${at}
      FROM ${from}`);
    await insertSelect(`INSERT INTO ${ch.table('trace_content')} (tenant_id, project_id, trace_id, field, timestamp, text, text_norm)
      SELECT {t:String}, {p:String}, ${traceId}, 'agent_input', ${at}, concat('Please book flight ', toString(number)), concat('please book flight ', toString(number))
      FROM ${from} WHERE number % ${SPANS_PER_TRACE} = 0`);
    await insertSelect(`INSERT INTO ${ch.table('traces')} (tenant_id, project_id, trace_id, otel_trace_id, timestamp, agent_name, span_count)
      SELECT {t:String}, {p:String}, ${traceId}, hex(MD5(toString(intDiv(number, ${SPANS_PER_TRACE})))), ${at}, 'agent', ${SPANS_PER_TRACE}
      FROM ${from} WHERE number % ${SPANS_PER_TRACE} = 0`);
  }
  for (let i = 0; i < 600; i++) {
    const result = await ch.client.query({ query: `SELECT count() AS n FROM system.merges`, format: 'JSONEachRow' });
    if (Number((await result.json<{ n: string }>())[0].n) === 0) break;
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  console.log(`prefilled ${prefill} spans in ${((Date.now() - started) / 1000).toFixed(0)} s`);
}

const before = await engineEvents();
const cpuBefore = process.cpuUsage();
const perRequest = Math.ceil(traces / REQUESTS);
async function post(body: Uint8Array<ArrayBuffer>, contentType: string): Promise<void> {
  const res = await fetch(`${svc.url}/v1/traces`, {
    method: 'POST',
    headers: { 'content-type': contentType, authorization: `Bearer ${svc.adminKey}`, 'x-lookout-project': project.id },
    body,
  });
  if (res.status !== 200) throw new Error(`ingest answered ${res.status}: ${await res.text()}`);
}
type JsonSpan = { traceId: string };
const jsonBody = (spans: JsonSpan[], template: { resourceSpans: { scopeSpans: { spans: JsonSpan[] }[] }[] }) => {
  template.resourceSpans[0].scopeSpans[0].spans = spans;
  return new TextEncoder().encode(JSON.stringify(template));
};
// --split: the second halves of the previous request's traces, sent with the next request.
let carried: JsonSpan[] = [];
let template: Parameters<typeof jsonBody>[1] | null = null;
for (let i = 0; i < REQUESTS; i++) {
  const batch = shapedBatch(Array.from({ length: perRequest }, () => ({ spans: SPANS_PER_TRACE })));
  if (split) {
    template = JSON.parse(batch.json.toString()) as Parameters<typeof jsonBody>[1];
    const seen = new Map<string, number>();
    const first: JsonSpan[] = [];
    const second: JsonSpan[] = [];
    for (const span of template.resourceSpans[0].scopeSpans[0].spans) {
      const n = seen.get(span.traceId) ?? 0;
      seen.set(span.traceId, n + 1);
      (n < SPANS_PER_TRACE / 2 ? first : second).push(span);
    }
    await post(jsonBody([...carried, ...first], template), 'application/json');
    carried = second;
  } else {
    await post(new Uint8Array(batch.protobuf), 'application/x-protobuf');
  }
  await new Promise((resolve) => setTimeout(resolve, 500));
}
if (template && carried.length > 0) await post(jsonBody(carried, template), 'application/json');
while ((await queueDepth(sql)) > 0) await new Promise((resolve) => setTimeout(resolve, 200));
const cpu = process.cpuUsage(cpuBefore);
const after = await engineEvents();
const settled = perRequest * REQUESTS;
const per = (name: string) => ((after[name] ?? 0) - (before[name] ?? 0)) / settled;
console.log(`prefill ${prefill} spans, ${readBack ? 'every trace read back' : 'settle cache on'}${split ? ', each trace in two requests' : ''}, ${settled} traces settled; load average ${os.loadavg().map((x) => x.toFixed(1)).join(' ')}`);
console.log(`per trace settled: process CPU ${((cpu.user + cpu.system) / 1000 / settled).toFixed(2)} ms`);
for (const name of EVENTS) console.log(`  ${name.padEnd(30)} ${per(name).toFixed(1)}`);
await svc.stop();
removeDir(dataDir);
