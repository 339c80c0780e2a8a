import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { decodeJsonExport } from '../../../src/ingest/otlp/otlp-decode-json.js';
import { lookoutTraceId } from '../../../src/spans/trace-id.js';
import { startTestService, type TestService } from '../../helpers/service.js';
import { postOtlp, waitFor } from './otlp-client.js';

/**
 * The `spans` row's JSON columns (attributes, events, resource) are written into the insert body as
 * JSON values, not as escaped text (event-rows.ts SpanRow), and ClickHouse keeps the raw text of
 * each: what a query reads back must be exactly JSON.stringify of the decoded values, for text that
 * needs escaping, non-ASCII, nested values and numbers. The settler reads the same spans from its
 * memory (this process's lines) or back from ClickHouse; both must see the same attributes.
 */

const tricky =
  'quote " backslash \\ slash / newline \n tab \t nul \u0000 é 工具 🔧 {"json":[1,2]} ] } , ' +
  'line sep \u2028 para sep \u2029 lone surrogate \ud800 del \u007f c1 \u0085 escaped-looking \\u0041';

/** What a UTF-8 store can hold: every lone surrogate of a string is U+FFFD (the writer's jsonLine). */
const wellFormedText = (text: string) => text.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd');
const wellFormed = (value: unknown): unknown =>
  JSON.parse(JSON.stringify(value), (_key, v: unknown) => (typeof v === 'string' ? wellFormedText(v) : v));

function body(traceId: string, rootId: string, childId: string): string {
  const now = BigInt(Date.now()) * 1_000_000n;
  const attr = (key: string, value: unknown) => ({ key, value });
  return JSON.stringify({
    resourceSpans: [
      {
        resource: { attributes: [attr('service.name', { stringValue: 'json-columns' }), attr('resource.note', { stringValue: tricky })] },
        scopeSpans: [
          {
            scope: { name: 'test', version: '1' },
            spans: [
              {
                traceId,
                spanId: rootId,
                name: 'invoke_agent',
                kind: 1,
                startTimeUnixNano: String(now),
                endTimeUnixNano: String(now + 5_000_000n),
                attributes: [
                  attr('gen_ai.operation.name', { stringValue: 'invoke_agent' }),
                  attr('gen_ai.agent.name', { stringValue: 'json-agent' }),
                  attr('lookout.agent_input', { stringValue: tricky }),
                  attr('big', { intValue: '9007199254740993' }),
                  attr('ratio', { doubleValue: 0.1 }),
                  attr('flag', { boolValue: true }),
                  attr('list', { arrayValue: { values: [{ stringValue: tricky }, { intValue: '3' }, { arrayValue: { values: [] } }] } }),
                  attr('map', { kvlistValue: { values: [attr('inner', { stringValue: '}]"' }), attr('empty', { kvlistValue: { values: [] } })] } }),
                ],
                events: [
                  { timeUnixNano: String(now + 1000n), name: 'exception', attributes: [attr('exception.message', { stringValue: tricky })] },
                ],
                status: { code: 2, message: 'failed' },
              },
              {
                traceId,
                spanId: childId,
                parentSpanId: rootId,
                name: 'no attributes \udc00',
                kind: 1,
                startTimeUnixNano: String(now + 1_000_000n),
                endTimeUnixNano: String(now + 2_000_000n),
              },
            ],
          },
        ],
      },
    ],
  });
}

async function check(svc: TestService, projectId: string) {
  const otelTraceId = randomBytes(16).toString('hex');
  const [rootId, childId] = [randomBytes(8).toString('hex'), randomBytes(8).toString('hex')];
  const text = body(otelTraceId, rootId, childId);
  const res = await postOtlp(svc.url, svc.adminKey, text, { contentType: 'application/json', headers: { 'x-lookout-project': projectId } });
  expect(res.status).toBe(200);
  const decoded = decodeJsonExport(text).resourceSpans[0];
  const sent = new Map(decoded.scopes[0].spans.map((s) => [s.spanId, s]));

  const { ch } = svc.service.deps;
  const traceId = lookoutTraceId(projectId, otelTraceId);
  const stored = await (
    await ch.client.query({
      query: `SELECT span_id, name, attributes, events, resource FROM ${ch.table('spans')} WHERE trace_id = {t:String} ORDER BY span_id`,
      query_params: { t: traceId },
      format: 'JSONEachRow',
    })
  ).json<{ span_id: string; name: string; attributes: string; events: string; resource: string }>();
  expect(stored).toHaveLength(2);
  for (const row of stored) {
    const span = sent.get(row.span_id)!;
    expect(row.attributes).toBe(JSON.stringify(wellFormed(span.attributes)));
    expect(row.events).toBe(JSON.stringify(wellFormed(span.events)));
    expect(row.resource).toBe(JSON.stringify(wellFormed(decoded.resource)));
  }
  expect(stored.find((r) => r.span_id === childId)).toMatchObject({ name: 'no attributes \ufffd', attributes: '{}', events: '[]' });

  // Settled from the attributes: the agent's input and name, and the failure's exception message.
  const trace = await waitFor(async () => {
    const rows = await (
      await ch.client.query({
        query: `SELECT agent_name, agent_input FROM ${ch.table('traces')} FINAL WHERE trace_id = {t:String} AND preview = 0`,
        query_params: { t: traceId },
        format: 'JSONEachRow',
      })
    ).json<{ agent_name: string; agent_input: string | null }>();
    return rows[0];
  });
  expect(trace).toEqual({ agent_name: 'json-agent', agent_input: wellFormedText(tricky) });
}

describe('stored JSON columns', () => {
  let svc: TestService;
  let project: { id: string };
  beforeAll(async () => {
    svc = await startTestService({ TRACE_SETTLE_MS: '200' });
    project = await svc.newProject('json columns');
  });
  afterAll(async () => {
    await svc?.stop();
  });

  it('stores attributes, events and resource as the exact JSON text of the decoded values, and settles from them', async () => {
    await check(svc, project.id);
  });
});

describe('stored JSON columns, settled from a read-back', () => {
  let svc: TestService;
  let project: { id: string };
  beforeAll(async () => {
    // No span rows held in memory: every trace is read back from ClickHouse at settling.
    svc = await startTestService({ TRACE_SETTLE_MS: '200', SETTLE_CACHE_MAX_BYTES: '0' });
    project = await svc.newProject('json columns read back');
  });
  afterAll(async () => {
    await svc?.stop();
  });

  it('settles the same values from the stored text', async () => {
    await check(svc, project.id);
  });
});
