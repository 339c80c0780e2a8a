import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IngestService } from '../../../src/ingest/ingest-service.js';
import { decodeExportResponse } from '../../../src/ingest/otlp/otlp-response.js';
import { otlpSchema } from '../../../src/ingest/otlp/otlp-schema.js';
import { lookoutTraceId } from '../../../src/spans/trace-id.js';
import { projectRoot } from '../../../src/app/project-root.js';
import { startTestService, type TestService } from '../../helpers/service.js';
import { postOtlp } from './otlp-client.js';

/**
 * Hostile input through the real endpoint: bad input is a 4xx (or a rejected span), never a
 * 5xx or a reset; the memory budget charges what a body inflates to; nothing acknowledged is
 * dropped silently. Each regression test is named after the bug it pins.
 */

const MiB = 1024 * 1024;
let svc: TestService;
let project: { id: string };

beforeAll(async () => {
  svc = await startTestService({ OTLP_MAX_BYTES: String(2 * MiB), INGEST_MAX_INFLIGHT_BYTES: String(8 * MiB), INGEST_MAX_FUTURE_SKEW_MS: '600000' });
  project = await svc.newProject('hostile input');
});
afterAll(async () => {
  await svc?.stop();
});

const headers = () => ({ 'x-lookout-project': project.id });
const ingest = () => svc.service.deps.services.ingest as IngestService;
const nowNs = (plusMs = 0) => (BigInt(Date.now() + plusMs) * 1_000_000n).toString();

async function storedSpanIds(otelTraceId: string): Promise<string[]> {
  const { ch } = svc.service.deps;
  const res = await ch.client.query({
    query: `SELECT span_id FROM ${ch.table('spans')} WHERE trace_id = {t:String} ORDER BY span_id`,
    query_params: { t: lookoutTraceId(project.id, otelTraceId) },
    format: 'JSONEachRow',
  });
  return (await res.json<{ span_id: string }>()).map((r) => r.span_id);
}

function jsonExport(spans: unknown[]): string {
  return JSON.stringify({ resourceSpans: [{ resource: { attributes: [{ key: 'service.name', value: { stringValue: 'hostile' } }] }, scopeSpans: [{ spans }] }] });
}

function jsonSpan(traceId: string, spanId: string, extra: Record<string, unknown> = {}) {
  return { traceId, spanId, name: 'op', startTimeUnixNano: nowNs(), endTimeUnixNano: nowNs(5), ...extra };
}

const hex = (n: number) => Array.from({ length: n }, () => Math.floor(Math.random() * 16).toString(16)).join('');

interface RawAnswer {
  status: number | null;
  body: string;
  error: string | null;
}

/**
 * A POST through node:http, written as the OpenTelemetry HTTP exporter writes it: the whole body
 * handed to the socket at once (`req.end(body)`; without Content-Length, one chunk then end).
 */
function rawPost(options: { headers: Record<string, string>; body: Buffer; agent?: http.Agent; path?: string }): Promise<RawAnswer> {
  const url = new URL(options.path ?? '/v1/traces', svc.url);
  return new Promise((resolve) => {
    const answer: RawAnswer = { status: null, body: '', error: null };
    // Done once the response has ended and the request has closed: an error after the response
    // (a reset while the body was still being written) is what the exporter would report.
    let pending = 2;
    const done = () => --pending === 0 && resolve(answer);
    const req = http.request(url, { method: 'POST', headers: { authorization: `Bearer ${svc.adminKey}`, ...options.headers }, agent: options.agent }, (res) => {
      answer.status = res.statusCode ?? null;
      res.setEncoding('utf8');
      res.on('data', (c: string) => (answer.body += c));
      res.on('end', done);
      res.on('error', (e) => (answer.error ??= String(e)));
    });
    req.on('error', (e) => {
      answer.error ??= `${(e as NodeJS.ErrnoException).code ?? ''} ${e.message}`;
      if (answer.status === null) pending--; // no response will come
    });
    req.on('close', done);
    if (options.headers['content-length']) {
      req.end(options.body);
    } else {
      req.write(options.body);
      req.end();
    }
  });
}

describe('nothing acknowledged is silently dropped', () => {
  const example = fs.readFileSync(path.join(projectRoot, 'test', 'fixtures', 'otlp-spec-example-trace.json'), 'utf8');

  it('regression: the OTLP specification example body (2018) was answered 200 {} and never stored — now rejected through partial_success naming the window', async () => {
    const res = await postOtlp(svc.url, svc.adminKey, example, { contentType: 'application/json', headers: headers() });
    expect(res.status).toBe(200);
    const answer = JSON.parse(res.body.toString());
    expect(answer.partialSuccess.rejectedSpans).toBe('1');
    expect(answer.partialSuccess.errorMessage).toMatch(
      /^rejected 1 of 1 spans: span eee19b7ec3c1b174: starts at 2018-12-13T14:51:00\.000Z, before the 90-day retention window \(spans must start after \d{4}-\d\d-\d\dT[\d:]+Z\)$/,
    );
    expect(await storedSpanIds('5b8efff798038103d269b633813fc60c')).toEqual([]);
  });

  it('stores the same body with current timestamps and its uppercase hex ids', async () => {
    const traceId = hex(32).toUpperCase();
    const current = example
      .replace('5B8EFFF798038103D269B633813FC60C', traceId)
      .replace('1544712660000000000', nowNs())
      .replace('1544712661000000000', nowNs(1000));
    const res = await postOtlp(svc.url, svc.adminKey, current, { contentType: 'application/json', headers: headers() });
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body.toString())).toEqual({});
    expect(await storedSpanIds(traceId.toLowerCase())).toEqual(['eee19b7ec3c1b174']);
  });

  it('rejects spans past INGEST_MAX_FUTURE_SKEW_MS and keeps the rest of the request, in protobuf too', async () => {
    const traceId = hex(32);
    const type = otlpSchema().ExportTraceServiceRequest;
    const span = (spanId: string, startNs: string) => ({
      traceId: Buffer.from(traceId, 'hex'),
      spanId: Buffer.from(spanId, 'hex'),
      name: 'op',
      startTimeUnixNano: startNs,
      endTimeUnixNano: startNs,
    });
    const body = type
      .encode(type.fromObject({ resourceSpans: [{ scopeSpans: [{ spans: [span('1111111111111111', nowNs()), span('2222222222222222', nowNs(3_600_000))] }] }] }))
      .finish();
    const res = await postOtlp(svc.url, svc.adminKey, body, { headers: headers() });
    expect(res.status).toBe(200);
    expect(decodeExportResponse(res.body)).toEqual({
      rejectedSpans: 1,
      errorMessage: expect.stringMatching(/^rejected 1 of 2 spans: span 2222222222222222: starts at .*, more than 600000 ms in the future \(INGEST_MAX_FUTURE_SKEW_MS/),
    });
    expect(await storedSpanIds(traceId)).toEqual(['1111111111111111']);
  });
});

describe('bad input is a 4xx, always', () => {
  it('regression: OTLP/JSON with attributes [null] answered 500 (TypeError) — now that span is rejected and the rest stored', async () => {
    const traceId = hex(32);
    const body = jsonExport([
      jsonSpan(traceId, '1111111111111111', { attributes: [null] }),
      jsonSpan(traceId, '2222222222222222', { attributes: [{ key: 'n', value: { intValue: 'ten' } }] }),
      jsonSpan(traceId, '3333333333333333', { attributes: [{ key: 'ok', value: null }] }),
    ]);
    const res = await postOtlp(svc.url, svc.adminKey, body, { contentType: 'application/json', headers: headers() });
    expect(res.status).toBe(200);
    const answer = JSON.parse(res.body.toString()).partialSuccess;
    expect(answer.rejectedSpans).toBe('2');
    expect(answer.errorMessage).toBe(
      'rejected 2 of 3 spans: span 1111111111111111: attributes[0] must be a KeyValue object, got null; span 2222222222222222: attribute "n": intValue must be an integer or a decimal string',
    );
    expect(await storedSpanIds(traceId)).toEqual(['3333333333333333']);
  });

  it('regression: an arrayValue nested 10,000 deep answered 500 (stack overflow) — now the span is rejected (JSON) or the body is a 400 (protobuf)', async () => {
    const traceId = hex(32);
    const deep = `${'{"arrayValue":{"values":['.repeat(10_000)}{"stringValue":"x"}${']}}'.repeat(10_000)}`;
    const body = jsonExport([jsonSpan(traceId, '1111111111111111', { attributes: [{ key: 'deep', value: 'DEEP' }] }), jsonSpan(traceId, '2222222222222222')]).replace('"DEEP"', deep);
    const res = await postOtlp(svc.url, svc.adminKey, body, { contentType: 'application/json', headers: headers() });
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body.toString()).partialSuccess).toEqual({
      rejectedSpans: '1',
      errorMessage: 'rejected 1 of 2 spans: span 1111111111111111: attribute "deep": arrayValue/kvlistValue nested deeper than 32 levels',
    });
    expect(await storedSpanIds(traceId)).toEqual(['2222222222222222']);

    // Protobuf: 10,000 levels of AnyValue → ArrayValue, written byte by byte.
    const field = (n: number, payload: Buffer) => {
      const varint = (v: number) => {
        const out: number[] = [];
        for (; v > 0x7f; v >>>= 7) out.push((v & 0x7f) | 0x80);
        out.push(v);
        return Buffer.from(out);
      };
      return Buffer.concat([varint((n << 3) | 2), varint(payload.length), payload]);
    };
    let value = field(1, Buffer.from('x'));
    for (let i = 0; i < 10_000; i++) value = field(5, field(1, value));
    const span = Buffer.concat([field(1, Buffer.from(hex(32), 'hex')), field(2, Buffer.from('1111111111111111', 'hex')), field(9, Buffer.concat([field(1, Buffer.from('deep')), field(2, value)]))]);
    const proto = await postOtlp(svc.url, svc.adminKey, field(1, field(2, field(2, span))), { headers: headers() });
    expect(proto.status).toBe(400);
    const status = otlpSchema().Status;
    expect((status.toObject(status.decode(proto.body)) as { message: string }).message).toMatch(/maximum nesting depth exceeded/);
  });

  it('regression: a body over OTLP_MAX_BYTES sometimes reached the exporter as a connection reset — now it reads a 413, and the connection stays usable', async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const oversized = Buffer.alloc(24 * MiB, 0x20);
      const variants: [string, Record<string, string>, Buffer][] = [
        ['declared length', { 'content-type': 'application/json', 'content-length': String(oversized.length) }, oversized],
        ['chunked', { 'content-type': 'application/json' }, oversized],
        ['gzip, inflating past the limit', { 'content-type': 'application/x-protobuf', 'content-encoding': 'gzip' }, gzipSync(oversized)],
      ];
      for (let round = 0; round < 3; round++) {
        for (const [name, requestHeaders, body] of variants) {
          const answer = await rawPost({ headers: { ...headers(), ...requestHeaders }, body, agent });
          expect({ name, status: answer.status, error: answer.error }).toEqual({ name, status: 413, error: null });
        }
      }
      // The same keep-alive connection then carries a good request.
      const traceId = hex(32);
      const ok = await rawPost({ headers: { ...headers(), 'content-type': 'application/json' }, body: Buffer.from(jsonExport([jsonSpan(traceId, '1111111111111111')])), agent });
      expect(ok).toEqual({ status: 200, body: '{}', error: null });
    } finally {
      agent.destroy();
    }
    expect(ingest().writer.stats.inflightBytes).toBe(0);
  });
});
