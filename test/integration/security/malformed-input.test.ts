import crypto from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { otlpSchema } from '../../../src/ingest/otlp/otlp-schema.js';
import { startTestService, type TestService } from '../../helpers/service.js';
import { answerProblem, inParallel, type Answer } from './probe.js';
import { operationsOf, requestFor, type Operation } from './route-table.js';
import { unknownFixture } from './tenant-fixture.js';

/**
 * Malformed encodings on every route: percent-encoding that does not decode, in
 * every path parameter of every operation and on the root routes, is a 400 `validation_error`, never
 * the 500 Express's URIError gave; and OTLP bodies mutated at every node of the export tree (nulls,
 * wrong types, hostile nesting) or byte by byte are answered 200 with partial success or 400 —
 * never a 5xx — and every span acknowledged without rejection is stored.
 */

let svc: TestService;
let ops: Operation[];
let projectId: string;

beforeAll(async () => {
  svc = await startTestService();
  ops = operationsOf((await svc.call('GET', '/openapi.json', { key: null })).body);
  projectId = (await svc.newProject('malformed input')).id;
}, 120_000);

afterAll(async () => {
  await svc?.stop();
});

async function fetchAnswer(url: string, init: RequestInit = {}): Promise<Answer> {
  const res = await fetch(url, init);
  const text = await res.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON: keep the text
  }
  return { status: res.status, body, headers: res.headers };
}

/** Sequences decodeURIComponent refuses: invalid bytes, truncated escapes, overlong forms, a lone surrogate. */
const MALFORMED_ESCAPES = ['%FF%FE', '%', '%E0%A4%A', '%C0%AF', 'a%zz', '%ED%A0%80', '%F4%90%80%80', '%%41'];

describe('security: malformed percent-encoding', () => {
  it('regression: GET /api/projects/%FF%FE answered 500 internal_error (Express URIError) — now 400 validation_error', async () => {
    const res = await svc.call('GET', '/projects/%FF%FE');
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ detail: 'Malformed percent-encoding in the request path', code: 'validation_error' });
  });

  it('answers 400 validation_error for malformed percent-encoding in every path parameter of every operation', async () => {
    const problems: string[] = [];
    const tasks: (() => Promise<void>)[] = [];
    const f = unknownFixture();
    for (const op of ops) {
      for (const param of Object.keys(op.case.params)) {
        for (const raw of MALFORMED_ESCAPES) {
          tasks.push(async () => {
            // The escape goes into the path as is (requestFor would re-encode it); the other parameters stay well formed.
            const { path, body } = requestFor(op, f, { pathValues: { [param]: '__MALFORMED__' } });
            const res = await svc.call(op.method, path.replace(encodeURIComponent('__MALFORMED__'), raw), { body });
            const label = `${op.key} ${param}=${raw}: `;
            const problem = answerProblem(res);
            if (problem) problems.push(label + problem);
            else if (res.status !== 400 || res.body.code !== 'validation_error') problems.push(`${label}${res.status} ${JSON.stringify(res.body)}`);
          });
        }
      }
    }
    await inParallel(tasks);
    expect(problems).toEqual([]);
    expect(tasks.length).toBeGreaterThan(400);
  });

  it('answers malformed percent-encoding in query strings and on the root routes without a 5xx', async () => {
    const problems: string[] = [];
    const tasks: (() => Promise<void>)[] = [];
    for (const op of ops) {
      for (const { name } of op.queryParams) {
        for (const raw of MALFORMED_ESCAPES) {
          tasks.push(async () => {
            const { path, body } = requestFor(op, unknownFixture());
            const res = await svc.call(op.method, `${path}${path.includes('?') ? '&' : '?'}${name}=${raw}&${raw}=1`, { body });
            const problem = answerProblem(res);
            if (problem) problems.push(`${op.key} query ${name}=${raw}: ${problem}`);
          });
        }
      }
    }
    const auth = { authorization: `Bearer ${svc.adminKey}` };
    for (const raw of MALFORMED_ESCAPES) {
      for (const [method, path, accept] of [
        ['GET', `/${raw}`, '*/*'],
        ['GET', `/assets/${raw}`, '*/*'],
        ['GET', `/api/${raw}`, '*/*'],
        ['POST', `/v1/traces/${raw}`, '*/*'],
        ['POST', `/v1/${raw}`, '*/*'],
        ['POST', `/mcp/${raw}`, '*/*'],
        ['GET', `/healthz?${raw}`, '*/*'],
      ] as const) {
        tasks.push(async () => {
          const res = await fetchAnswer(`${svc.url}${path}`, { method, headers: { ...auth, accept } });
          const problem = answerProblem(res);
          if (problem) problems.push(`${method} ${path}: ${problem}`);
        });
      }
    }
    await inParallel(tasks);
    expect(problems).toEqual([]);
  });
});

/** A deterministic PRNG (mulberry32), so a failing mutation can be replayed. */
function prng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const hex = (bytes: number) => crypto.randomBytes(bytes).toString('hex');
const nowNs = (plusMs = 0) => (BigInt(Date.now() + plusMs) * 1_000_000n).toString();

/** One span with every kind of value OTLP has, under fresh ids. */
function validExport(): Record<string, any> {
  const traceId = hex(16);
  return {
    resourceSpans: [
      {
        resource: { attributes: [{ key: 'service.name', value: { stringValue: 'fuzz' } }] },
        scopeSpans: [
          {
            scope: { name: 'fuzz', version: '1.0.0' },
            spans: [
              {
                traceId,
                spanId: hex(8),
                parentSpanId: '',
                name: 'chat gpt-4o',
                kind: 3,
                startTimeUnixNano: nowNs(),
                endTimeUnixNano: nowNs(20),
                attributes: [
                  { key: 'gen_ai.request.model', value: { stringValue: 'gpt-4o' } },
                  { key: 'gen_ai.usage.input_tokens', value: { intValue: '12' } },
                  { key: 'temperature', value: { doubleValue: 0.5 } },
                  { key: 'stream', value: { boolValue: true } },
                  { key: 'list', value: { arrayValue: { values: [{ stringValue: 'a' }, { intValue: 2 }] } } },
                  { key: 'map', value: { kvlistValue: { values: [{ key: 'k', value: { stringValue: 'v' } }] } } },
                  { key: 'raw', value: { bytesValue: 'AAEC' } },
                ],
                events: [{ timeUnixNano: nowNs(5), name: 'gen_ai.choice', attributes: [{ key: 'index', value: { intValue: 0 } }] }],
                links: [{ traceId: hex(16), spanId: hex(8), attributes: [] }],
                status: { code: 2, message: 'boom' },
              },
            ],
          },
        ],
      },
    ],
  };
}

/** Every path from the root to a node of a JSON tree. */
function paths(node: unknown, at: (string | number)[] = []): (string | number)[][] {
  const out = [at];
  if (Array.isArray(node)) node.forEach((v, i) => out.push(...paths(v, [...at, i])));
  else if (node && typeof node === 'object') for (const [k, v] of Object.entries(node)) out.push(...paths(v, [...at, k]));
  return out;
}

function replaced(root: Record<string, any>, path: (string | number)[], value: unknown): Record<string, any> {
  const copy = structuredClone(root);
  let node: any = copy;
  for (const step of path.slice(0, -1)) node = node[step];
  node[path[path.length - 1]] = value;
  return copy;
}

const DEEP = '"__deep__"';
const deepValue = `${'{"arrayValue":{"values":['.repeat(5000)}{"stringValue":"x"}${']}}'.repeat(5000)}`;
const REPLACEMENTS: [string, unknown][] = [
  ['null', null],
  ['negative', -1],
  ['fraction', 1.5],
  ['text', 'x'],
  ['list of null', [null]],
  ['object with toString', { toString: 1, valueOf: 2 }],
  ['deep nesting', '__deep__'],
];

/** How many span entries a (possibly mutated) export carries: what the answer accounts for. */
function spansSent(request: Record<string, any>): number {
  const list = (v: unknown) => (Array.isArray(v) ? v : []);
  return list(request.resourceSpans).reduce((n: number, rs: any) => n + list(rs?.scopeSpans).reduce((m: number, ss: any) => m + list(ss?.spans).length, 0), 0);
}

async function storedSpans(): Promise<number> {
  const { ch } = svc.service.deps;
  const res = await ch.client.query({
    query: `SELECT count() AS n FROM ${ch.table('spans')} WHERE project_id = {p:String}`,
    query_params: { p: projectId },
    format: 'JSONEachRow',
  });
  return Number((await res.json<{ n: string }>())[0].n);
}

describe('security: OTLP fuzz', () => {
  it('answers an export mutated at every node (null, wrong types, hostile nesting) with 200 + partial success or 400, and stores every span it does not reject', async () => {
    const base = validExport();
    const problems: string[] = [];
    const tasks: (() => Promise<void>)[] = [];
    let acknowledged = 0;
    const before = await storedSpans();
    for (const path of paths(base).filter((p) => p.length > 0)) {
      for (const [name, value] of REPLACEMENTS) {
        tasks.push(async () => {
          // Fresh ids per request, so no two accepted spans collapse into one.
          const mutated = replaced(validExport(), path, value);
          const text = JSON.stringify(mutated).replace(DEEP, deepValue);
          // gzip for the replacements that matter to inflating (the rest would only double the run time).
          for (const gzip of name === 'null' || name === 'deep nesting' ? [false, true] : [false]) {
            const body = gzip ? gzipSync(text) : text;
            const res = await fetchAnswer(`${svc.url}/v1/traces`, {
              method: 'POST',
              headers: { authorization: `Bearer ${svc.adminKey}`, 'content-type': 'application/json', 'x-lookout-project': projectId, ...(gzip ? { 'content-encoding': 'gzip' } : {}) },
              body: new Uint8Array(Buffer.from(body)),
            });
            const label = `${path.join('.')} = ${name}${gzip ? ' (gzip)' : ''}: `;
            const problem = answerProblem(res);
            if (problem) problems.push(label + problem);
            else if (res.status !== 200 && res.status !== 400) problems.push(`${label}status ${res.status} ${JSON.stringify(res.body)}`);
            // The gzip copy repeats the same span: a duplicate, stored once, so only the first copy counts.
            else if (res.status === 200 && !gzip) acknowledged += spansSent(mutated) - Number(res.body?.partialSuccess?.rejectedSpans ?? 0);
          }
        });
      }
    }
    await inParallel(tasks);
    expect(problems).toEqual([]);
    expect(tasks.length).toBeGreaterThan(500);
    // Nothing acknowledged is silently dropped: every span answered without rejection is in ClickHouse.
    expect(acknowledged).toBeGreaterThan(100);
    expect((await storedSpans()) - before).toBe(acknowledged);
  }, 300_000);

  it('answers protobuf bodies with flipped, cut and inserted bytes with 200 or 400, never a 5xx', async () => {
    const type = otlpSchema().ExportTraceServiceRequest;
    const random = prng(13);
    const problems: string[] = [];
    const tasks: (() => Promise<void>)[] = [];
    for (let i = 0; i < 200; i++) {
      const json = validExport();
      const span = json.resourceSpans[0].scopeSpans[0].spans[0];
      const message = type.fromObject({
        ...json,
        resourceSpans: [{ ...json.resourceSpans[0], scopeSpans: [{ ...json.resourceSpans[0].scopeSpans[0], spans: [{ ...span, traceId: Buffer.from(span.traceId, 'hex'), spanId: Buffer.from(span.spanId, 'hex'), links: [] }] }] }],
      });
      const bytes = Buffer.from(type.encode(message).finish());
      const mutated = Buffer.from(bytes);
      const mutations = 1 + Math.floor(random() * 4);
      let body: Buffer = mutated;
      for (let m = 0; m < mutations; m++) {
        const at = Math.floor(random() * body.length);
        const kind = random();
        if (kind < 0.6) body[at] = Math.floor(random() * 256);
        else if (kind < 0.8) body = body.subarray(0, at);
        else body = Buffer.concat([body.subarray(0, at), Buffer.from([Math.floor(random() * 256), 0xff, 0xff, 0xff, 0x0f]), body.subarray(at)]);
      }
      const seedCase = i;
      tasks.push(async () => {
        const res = await fetch(`${svc.url}/v1/traces`, {
          method: 'POST',
          headers: { authorization: `Bearer ${svc.adminKey}`, 'content-type': 'application/x-protobuf', 'x-lookout-project': projectId },
          body: new Uint8Array(body),
        });
        await res.arrayBuffer();
        if (res.status !== 200 && res.status !== 400) problems.push(`case ${seedCase} (${body.toString('hex').slice(0, 120)}…): status ${res.status}`);
      });
    }
    await inParallel(tasks);
    expect(problems).toEqual([]);
  });
});
