import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { ValidateFunction } from 'ajv';
import { compileBodySchema } from '../../../src/platform/http/validation.js';
import { lookoutTraceId } from '../../../src/spans/trace-id.js';
import { startTestService, type TestService } from '../../helpers/service.js';
import { runGenAiSupportAgent } from '../../unit/ingest/fixtures/gen-ai-agent-run.js';
import { postOtlp, protobufBody, waitFor } from '../ingest/otlp-client.js';

// The traces API's answers, seeded by a real agent run, checked against the schemas the OpenAPI
// document declares for them: the document is what the dashboard's types and clients rely on, so
// it must describe every form the routes answer (default, paged, without attributes, context
// bundle) and the list.

let svc: TestService;
let projectId: string;
let traceId: string;
let doc: { paths: Record<string, Record<string, { responses: Record<string, { content: Record<string, { schema: Record<string, unknown> }> }> }>>; components: { schemas: Record<string, Record<string, unknown>> } };

function validator(path: string): ValidateFunction {
  const schema = doc.paths[path].get.responses['200'].content['application/json'].schema;
  return compileBodySchema(schema, doc.components.schemas);
}

function expectValid(validate: ValidateFunction, body: unknown, what: string) {
  expect(validate(body), `${what}: ${JSON.stringify(validate.errors)}`).toBe(true);
}

beforeAll(async () => {
  svc = await startTestService();
  projectId = (await svc.newProject('trace answers')).id;
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'answers-svc', 'service.version': '1.0.0' }),
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  const otelTraceId = runGenAiSupportAgent(provider.getTracer('trace-answers'));
  traceId = lookoutTraceId(projectId, otelTraceId);
  const sent = await postOtlp(svc.url, svc.adminKey, protobufBody(exporter.getFinishedSpans()), { headers: { 'x-lookout-project': projectId } });
  expect(sent.status).toBe(200);
  await waitFor(async () => {
    const res = await svc.call('GET', `/projects/${projectId}/traces`);
    return res.body.traces?.find((t: { id: string }) => t.id === traceId);
  }, 15_000, 'the trace listed');
  doc = (await svc.call('GET', '/openapi.json')).body;
});
afterAll(async () => {
  await svc?.stop();
});

describe('the traces API answers as its OpenAPI document says', () => {
  it('GET /traces/{trace_id}: every detail form and the context bundle', async () => {
    const validate = validator('/traces/{trace_id}');
    const forms = [
      '',
      '?span_limit=2',
      '?include_attributes=false&include_events=false',
      `?expand=context&project_id=${projectId}`,
      `?expand=context&project_id=${projectId}&spans_limit=2&spans_offset=1`,
    ];
    for (const form of forms) {
      const res = await svc.call('GET', `/traces/${traceId}${form}`);
      expect(res.status, form).toBe(200);
      expectValid(validate, res.body, form || 'default form');
    }
    // The paged default form carries the paging fields the schema declares optional.
    const paged = await svc.call('GET', `/traces/${traceId}?span_limit=2`);
    expect(paged.body).toMatchObject({ spans_total: 5, next_span_cursor: expect.any(String) });
  });

  it('a schema of the document refuses an answer missing a required field (the check can fail)', async () => {
    const validate = validator('/traces/{trace_id}');
    const { stats: _stats, ...withoutStats } = (await svc.call('GET', `/traces/${traceId}`)).body;
    expect(validate(withoutStats)).toBe(false);
  });

  it('GET /projects/{project_id}/traces and GET /traces/agent-names', async () => {
    expectValid(validator('/projects/{project_id}/traces'), (await svc.call('GET', `/projects/${projectId}/traces`)).body, 'trace list');
    expectValid(validator('/traces/agent-names'), (await svc.call('GET', '/traces/agent-names')).body, 'agent names');
  });
});
