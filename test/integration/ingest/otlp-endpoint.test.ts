import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { decodeExportResponse } from '../../../src/ingest/otlp/otlp-response.js';
import { otlpSchema } from '../../../src/ingest/otlp/otlp-schema.js';
import { lookoutTraceId } from '../../../src/spans/trace-id.js';
import { startTestService, type TestService } from '../../helpers/service.js';
import { runGenAiSupportAgent } from '../../unit/ingest/fixtures/gen-ai-agent-run.js';
import { jsonBody, postOtlp, protobufBody, waitFor } from './otlp-client.js';

let svc: TestService;
let project: { id: string; name: string };

beforeAll(async () => {
  svc = await startTestService({ OTLP_MAX_BYTES: String(256 * 1024) });
  project = await svc.newProject('otlp endpoint');
});
afterAll(async () => {
  await svc?.stop();
});

function agentRun(resource: Record<string, string> = {}): { spans: ReadableSpan[]; otelTraceId: string } {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'support-svc', 'service.version': '3.1.0', ...resource }),
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  const otelTraceId = runGenAiSupportAgent(provider.getTracer('endpoint-test'));
  return { spans: exporter.getFinishedSpans(), otelTraceId };
}

async function spanCount(traceId: string): Promise<number> {
  const res = await svc.service.deps.ch.client.query({
    query: `SELECT count() AS n FROM ${svc.service.deps.ch.table('spans')} WHERE trace_id = {t:String}`,
    query_params: { t: traceId },
    format: 'JSONEachRow',
  });
  return Number((await res.json<{ n: string }>())[0].n);
}

async function eventCounts(traceId: string) {
  const { ch } = svc.service.deps;
  const count = async (table: string) => {
    const res = await ch.client.query({
      query: `SELECT count() AS n FROM ${ch.table(table)} FINAL WHERE trace_id = {t:String}`,
      query_params: { t: traceId },
      format: 'JSONEachRow',
    });
    return Number((await res.json<{ n: string }>())[0].n);
  };
  return {
    generations: await count('event_generation_completed'),
    tools: await count('event_tool_called'),
    errors: await count('event_span_errored'),
    processed: await count('event_trace_processed'),
  };
}

describe('POST /v1/traces', () => {
  it('stores a protobuf export and answers an empty protobuf ExportTraceServiceResponse', async () => {
    const run = agentRun();
    const res = await postOtlp(svc.url, svc.adminKey, protobufBody(run.spans), { headers: { 'x-lookout-project': project.id } });
    expect(res.status).toBe(200);
    expect(res.contentType).toBe('application/x-protobuf');
    expect(res.body.length).toBe(0);
    // Durable on 200: the spans are readable at once.
    expect(await spanCount(lookoutTraceId(project.id, run.otelTraceId))).toBe(5);
  });

  it('stores spans under the project id in lower case, whatever case the header or resource gives it', async () => {
    const byHeader = agentRun();
    const upper = project.id.toUpperCase();
    expect((await postOtlp(svc.url, svc.adminKey, protobufBody(byHeader.spans), { headers: { 'x-lookout-project': upper } })).status).toBe(200);
    const byResource = agentRun({ 'lookout.project_id': upper });
    expect((await postOtlp(svc.url, svc.adminKey, protobufBody(byResource.spans))).status).toBe(200);
    for (const run of [byHeader, byResource]) {
      // Found under the project's own id, the one every read uses.
      expect(await spanCount(lookoutTraceId(project.id, run.otelTraceId))).toBe(5);
    }
    const res = await svc.service.deps.ch.client.query({
      query: `SELECT DISTINCT project_id FROM ${svc.service.deps.ch.table('spans')} WHERE project_id = {upper:String}`,
      query_params: { upper },
      format: 'JSONEachRow',
    });
    expect(await res.json()).toEqual([]);
  });

  it('answers JSON requests in JSON, and takes gzip', async () => {
    const run = agentRun();
    const res = await postOtlp(svc.url, svc.adminKey, jsonBody(run.spans), {
      contentType: 'application/json',
      gzip: true,
      headers: { 'x-lookout-project': project.id },
    });
    expect(res.status).toBe(200);
    expect(res.contentType).toMatch(/^application\/json/);
    expect(JSON.parse(res.body.toString())).toEqual({});
    expect(await spanCount(lookoutTraceId(project.id, run.otelTraceId))).toBe(5);
  });

  it('keeps the valid spans and reports the rejected ones as partial success', async () => {
    const run = agentRun();
    const request = JSON.parse(jsonBody(run.spans));
    const spans = request.resourceSpans[0].scopeSpans[0].spans;
    spans[0].spanId = 'xyz';
    spans[1].endTimeUnixNano = '1';
    const json = await postOtlp(svc.url, svc.adminKey, JSON.stringify(request), { contentType: 'application/json', headers: { 'x-lookout-project': project.id } });
    expect(json.status).toBe(200);
    const answer = JSON.parse(json.body.toString());
    expect(answer.partialSuccess.rejectedSpans).toBe('2');
    expect(answer.partialSuccess.errorMessage).toContain('rejected 2 of 5 spans');
    expect(answer.partialSuccess.errorMessage).toContain('invalid span_id "xyz"');
    expect(answer.partialSuccess.errorMessage).toContain('end_time_unix_nano is before start_time_unix_nano');
    expect(await spanCount(lookoutTraceId(project.id, run.otelTraceId))).toBe(3);

    const bad = agentRun();
    const proto = otlpSchema().ExportTraceServiceRequest;
    const message = proto.decode(protobufBody(bad.spans)) as unknown as { resourceSpans: { scopeSpans: { spans: { traceId: Uint8Array }[] }[] }[] };
    message.resourceSpans[0].scopeSpans[0].spans[0].traceId = new Uint8Array(3);
    const res = await postOtlp(svc.url, svc.adminKey, proto.encode(message).finish(), { headers: { 'x-lookout-project': project.id } });
    expect(res.status).toBe(200);
    expect(decodeExportResponse(res.body)).toEqual({ rejectedSpans: 1, errorMessage: expect.stringContaining('invalid trace_id') });
  });

  it('never double counts a re-sent batch', async () => {
    const run = agentRun();
    const body = protobufBody(run.spans);
    const traceId = lookoutTraceId(project.id, run.otelTraceId);
    expect((await postOtlp(svc.url, svc.adminKey, body, { headers: { 'x-lookout-project': project.id } })).status).toBe(200);
    await waitFor(async () => ((await eventCounts(traceId)).processed === 1 ? true : undefined), 10_000, 'trace processed');
    const before = await eventCounts(traceId);
    const [again, concurrently] = await Promise.all([
      postOtlp(svc.url, svc.adminKey, body, { headers: { 'x-lookout-project': project.id } }),
      postOtlp(svc.url, svc.adminKey, body, { headers: { 'x-lookout-project': project.id } }),
    ]);
    expect([again.status, concurrently.status]).toEqual([200, 200]);
    await svc.service.deps.ch.client.command({ query: `OPTIMIZE TABLE ${svc.service.deps.ch.table('spans')} FINAL` });
    expect(await spanCount(traceId)).toBe(5);
    expect(await eventCounts(traceId)).toEqual(before);
    expect(before).toEqual({ generations: 2, tools: 2, errors: 1, processed: 1 });
    const detail = await svc.call('GET', `/traces/${traceId}`);
    expect(detail.body.stats).toMatchObject({ span_count: 5, total_tokens: 2100 });
  });

  it('answers 413 over the body limit (compressed or not) and 415 for other media types', async () => {
    const huge = JSON.stringify({ resourceSpans: [], padding: 'x'.repeat(300 * 1024) });
    const plain = await postOtlp(svc.url, svc.adminKey, huge, { contentType: 'application/json' });
    expect(plain.status).toBe(413);
    expect(JSON.parse(plain.body.toString())).toMatchObject({ code: 'payload_too_large' });
    const bomb = await postOtlp(svc.url, svc.adminKey, huge, { contentType: 'application/json', gzip: true });
    expect(bomb.status).toBe(413);
    const text = await postOtlp(svc.url, svc.adminKey, 'hello', { contentType: 'text/plain' });
    expect(text.status).toBe(415);
    expect(JSON.parse(text.body.toString()).detail).toContain('application/x-protobuf or application/json');
    const deflate = await postOtlp(svc.url, svc.adminKey, '{}', { contentType: 'application/json', headers: { 'content-encoding': 'br' } });
    expect(deflate.status).toBe(415);
  });

  it('answers 400 for undecodable bodies, in the request encoding', async () => {
    const proto = await postOtlp(svc.url, svc.adminKey, Buffer.from([0x0a, 0xff, 0xff, 0xff, 0x0f]), { headers: { 'x-lookout-project': project.id } });
    expect(proto.status).toBe(400);
    expect(proto.contentType).toBe('application/x-protobuf');
    const status = otlpSchema().Status;
    expect((status.toObject(status.decode(proto.body)) as { message: string }).message).toMatch(/Invalid protobuf/);
    const json = await postOtlp(svc.url, svc.adminKey, '{"resourceSpans":', { contentType: 'application/json' });
    expect(json.status).toBe(400);
    expect(JSON.parse(json.body.toString())).toMatchObject({ code: 'validation_error', detail: expect.stringContaining('Invalid JSON') });
    const gzip = await postOtlp(svc.url, svc.adminKey, 'not gzip', { contentType: 'application/json', headers: { 'content-encoding': 'gzip' } });
    expect(gzip.status).toBe(400);
  });

  it('authenticates: 401 without or with a bad key, 403 for a read key, 200 for an ingest key', async () => {
    const run = agentRun();
    const body = protobufBody(run.spans);
    const headers = { 'x-lookout-project': project.id };
    expect((await postOtlp(svc.url, null, body, { headers })).status).toBe(401);
    const bad = await postOtlp(svc.url, 'lk_not_a_key', jsonBody(run.spans), { contentType: 'application/json', headers });
    expect(bad.status).toBe(401);
    expect(JSON.parse(bad.body.toString())).toMatchObject({ code: 'unauthorized' });
    expect((await postOtlp(svc.url, await svc.newKey('read'), body, { headers })).status).toBe(403);
    expect((await postOtlp(svc.url, await svc.newKey('ingest'), body, { headers })).status).toBe(200);
  });

  it('chooses the project: limited key, else header, else resource attribute; none is 400, foreign is 404', async () => {
    const other = await svc.newProject('second');
    const limited = await svc.newKey('ingest', { projectId: other.id });
    const viaKey = agentRun();
    expect((await postOtlp(svc.url, limited, protobufBody(viaKey.spans))).status).toBe(200);
    expect(await spanCount(lookoutTraceId(other.id, viaKey.otelTraceId))).toBe(5);
    // A limited key cannot be pointed elsewhere.
    expect((await postOtlp(svc.url, limited, protobufBody(agentRun().spans), { headers: { 'x-lookout-project': project.id } })).status).toBe(404);

    const viaResource = agentRun({ 'lookout.project_id': other.id });
    expect((await postOtlp(svc.url, svc.adminKey, protobufBody(viaResource.spans))).status).toBe(200);
    expect(await spanCount(lookoutTraceId(other.id, viaResource.otelTraceId))).toBe(5);

    const none = await postOtlp(svc.url, svc.adminKey, jsonBody(agentRun().spans), { contentType: 'application/json' });
    expect(none.status).toBe(400);
    expect(JSON.parse(none.body.toString()).detail).toContain('x-lookout-project');

    const tenant = await svc.newTenant('otlp-other');
    const foreign = await postOtlp(svc.url, tenant.adminKey, protobufBody(agentRun().spans), { headers: { 'x-lookout-project': project.id } });
    expect(foreign.status).toBe(404);
    expect((await postOtlp(svc.url, svc.adminKey, protobufBody(agentRun().spans), { headers: { 'x-lookout-project': 'nope' } })).status).toBe(404);
  });

  it('says plainly that metrics are not accepted', async () => {
    const profiles = await postOtlp(svc.url, svc.adminKey, '{}', { contentType: 'application/json', path: '/v1/profiles' });
    expect(profiles.status).toBe(404);
    expect(JSON.parse(profiles.body.toString()).detail).toMatch(/traces and logs only.*profiles are not supported/);
    const metrics = await postOtlp(svc.url, svc.adminKey, '', { path: '/v1/metrics' });
    expect(metrics.status).toBe(404);
    expect(metrics.contentType).toBe('application/x-protobuf');
  });
});
