import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SYSTEM_KEY, startTestService, type TestService } from '../../helpers/service.js';
import { answerProblem, inParallel } from './probe.js';
import { operationsOf, requestFor, type Operation } from './route-table.js';
import { seedTenant, startCodeHostStandIn, type Fixture } from './tenant-fixture.js';

/**
 * Hostile input on every operation: malformed and mistyped bodies (always a 4xx {detail, code},
 * never a 500 or a stack trace, and nothing written), and SQL-injection probes through every path
 * id, query parameter and body string (a 4xx or a normal answer, and every table still there).
 */
const CODE_HOST_TOKEN = 'sec-code-host-token-bad-input';

let svc: TestService;
let codeHost: { url: string; close(): Promise<void> };
let ops: Operation[];
let doc: any;
let A: Fixture;

type Schema = Record<string, any>;

function resolve(schema: Schema | undefined): Schema {
  if (schema?.$ref) return doc.components.schemas[String(schema.$ref).split('/').pop()!];
  return schema ?? {};
}

function bodySchema(op: Operation): Schema {
  return resolve(doc.paths[op.path][op.method.toLowerCase()].requestBody?.content?.['application/json']?.schema);
}

/** The JSON types a property accepts (from type, enum or oneOf). */
function acceptedTypes(prop: Schema): Set<string> {
  const typeOf = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v === 'number' ? 'number' : typeof v);
  if (prop.type) return new Set((Array.isArray(prop.type) ? prop.type : [prop.type]).map((t: string) => (t === 'integer' ? 'number' : t)));
  if (prop.enum) return new Set(prop.enum.map(typeOf));
  if (prop.oneOf) return new Set(prop.oneOf.flatMap((s: Schema) => [...acceptedTypes(s)]));
  return new Set();
}

const SAMPLES: Record<string, unknown> = { string: 'text', number: 12345, boolean: true, object: { a: 1 }, array: ['x'], null: null };

function nested(depth: number): string {
  return `${'['.repeat(depth)}${']'.repeat(depth)}`;
}

interface Attempt {
  name: string;
  body?: unknown;
  rawBody?: string;
  headers?: Record<string, string>;
}

/** Bodies that are wrong in every way a client can get them wrong: each must be refused. */
function invalidBodies(op: Operation): Attempt[] {
  const valid = (op.case.body?.(A) ?? {}) as Record<string, unknown>;
  const schema = bodySchema(op);
  const props = (schema.properties ?? {}) as Record<string, Schema>;
  const attempts: Attempt[] = [
    { name: 'null body', rawBody: 'null' },
    { name: 'empty array', rawBody: '[]' },
    { name: 'array of the valid body', body: [valid] },
    { name: 'string body', rawBody: '"text"' },
    { name: 'number body', rawBody: '42' },
    { name: 'malformed JSON', rawBody: '{"name": ' },
    { name: 'valid JSON sent as text/plain', rawBody: JSON.stringify(valid), headers: { 'content-type': 'text/plain' } },
    { name: 'extra key', body: { ...valid, sec_unexpected_key: 1 } },
    { name: 'deeply nested arrays', rawBody: nested(100_000) },
    { name: 'over 1 MB', body: { ...valid, [Object.keys(props)[0]]: 'x'.repeat(1_100_000) } },
    { name: 'NUL in a key', body: { ...valid, 'a\u0000b': 1 } },
  ];
  // An empty body is an empty object: refused only where the schema requires a key.
  if ((schema.required ?? []).length > 0) attempts.push({ name: 'no body', rawBody: '' });
  for (const [name, prop] of Object.entries(props)) {
    const accepted = acceptedTypes(prop);
    for (const [type, sample] of Object.entries(SAMPLES)) {
      if (!accepted.has(type)) attempts.push({ name: `${name} as ${type}`, body: { ...valid, [name]: sample } });
    }
    if (accepted.has('number') || accepted.has('boolean')) attempts.push({ name: `${name} as numeric text`, body: { ...valid, [name]: accepted.has('number') ? '5' : 'true' } });
    attempts.push({ name: `${name} deeply nested`, body: { ...valid, [name]: JSON.parse(nested(2_000)) } });
  }
  return attempts;
}

/** Odd but well-typed strings: any answer but a 5xx is fine (they may be stored). */
const ODD_STRINGS: [string, string][] = [
  ['NUL', 'a\u0000b'],
  ['only NUL', '\u0000'],
  ['unicode', 'ünïcödé 🙂 \u202e \u2028 中文'],
  ['lone surrogate', 'x\ud800y'],
  ['200 KB', 'z'.repeat(200_000)],
  ['control characters', '\u0001\u0007\u001b[31m'],
];

const SQL_PROBES = ["'", '"', '\\', "'; drop table projects; --", '{p0:String}', '\u0000', "' OR '1'='1", '$1', '`'];

function stringProps(op: Operation): string[] {
  const props = (bodySchema(op).properties ?? {}) as Record<string, Schema>;
  return Object.entries(props).filter(([, p]) => acceptedTypes(p).has('string')).map(([n]) => n);
}

async function counts(): Promise<Record<string, number>> {
  const sql = svc.service.deps.sql;
  const tables = await sql<{ table_name: string }[]>`select table_name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE' order by 1`;
  const out: Record<string, number> = {};
  for (const { table_name } of tables) {
    const [row] = await sql<{ n: number }[]>`select count(*)::int as n from ${sql(table_name)}`;
    out[table_name] = row.n;
  }
  return out;
}

/**
 * Row counts once the fixture's background work is over. The seeded trace is listed as soon as its
 * summary row is written, but its hooks (issue extraction, monitor observations) and the outbox relay
 * and webhook fan-out run after that; counting while they run made "writes nothing" flaky (outbox
 * 2 → 4, monitor_observations 0 → 1). Quiet means: nothing left to settle and two readings alike.
 */
async function quietCounts(): Promise<Record<string, number>> {
  let previous = await counts();
  for (let i = 0; i < 100; i++) {
    await new Promise((resolve) => setTimeout(resolve, 300));
    const current = await counts();
    if ((current.settle_queue ?? 0) === 0 && JSON.stringify(current) === JSON.stringify(previous)) return current;
    previous = current;
  }
  throw new Error(`background work never went quiet: ${JSON.stringify(previous)}`);
}

function keyFor(op: Operation): string {
  return op.case.operator ? SYSTEM_KEY : svc.adminKey;
}

beforeAll(async () => {
  codeHost = await startCodeHostStandIn(CODE_HOST_TOKEN);
  svc = await startTestService({ CODE_HOST_API_URL: codeHost.url });
  A = await seedTenant(svc, svc.adminKey, 'fuzz', CODE_HOST_TOKEN);
  doc = (await svc.call('GET', '/openapi.json', { key: null })).body;
  ops = operationsOf(doc);
}, 120_000);

afterAll(async () => {
  await svc?.stop();
  await codeHost?.close();
});

describe('security: bad input', () => {
  it('refuses every malformed or mistyped body with a 4xx {detail, code} and writes nothing', async () => {
    const before = await quietCounts();
    const problems: string[] = [];
    const tasks: (() => Promise<void>)[] = [];
    for (const op of ops.filter((o) => o.hasBody)) {
      const { path } = requestFor(op, A);
      for (const attempt of invalidBodies(op)) {
        tasks.push(async () => {
          const res = await svc.call(op.method, path, { key: keyFor(op), body: attempt.body, rawBody: attempt.rawBody, headers: attempt.headers });
          const label = `${op.key} [${attempt.name}]: `;
          const problem = answerProblem(res);
          if (problem) problems.push(label + problem);
          else if (res.status < 400) problems.push(`${label}accepted with ${res.status}`);
        });
      }
    }
    await inParallel(tasks);
    expect(problems).toEqual([]);
    expect(tasks.length).toBeGreaterThan(300);
    expect(await counts()).toEqual(before);
  });

  it('answers odd but well-typed strings (NUL, unicode, control characters, 200 KB) without a 5xx', async () => {
    const problems: string[] = [];
    const tasks: (() => Promise<void>)[] = [];
    for (const op of ops.filter((o) => o.hasBody)) {
      const { path } = requestFor(op, A);
      for (const prop of stringProps(op)) {
        for (const [name, value] of ODD_STRINGS) {
          tasks.push(async () => {
            const valid = (op.case.body?.(A) ?? {}) as Record<string, unknown>;
            const res = await svc.call(op.method, path, { key: keyFor(op), body: { ...valid, [prop]: value } });
            const problem = answerProblem(res);
            if (problem) problems.push(`${op.key} [${prop} ${name}]: ${problem}`);
          });
        }
      }
    }
    await inParallel(tasks);
    expect(problems).toEqual([]);
  });
});

describe('security: SQL injection probes', () => {
  it('answers probes in every path id, query parameter and body string with a 4xx or a normal answer, and every table survives', async () => {
    // Which binding path this run exercises (vitest projects "default" and "server-params").
    expect(svc.service.deps.ch.binding).toBe(process.env.CLICKHOUSE_PARAM_BINDING === 'server' ? 'server' : 'literal');
    const problems: string[] = [];
    const tasks: (() => Promise<void>)[] = [];
    const probe = (label: string, method: string, path: string, key: string, body: unknown) =>
      tasks.push(async () => {
        const problem = answerProblem(await svc.call(method, path, { key, body }));
        if (problem) problems.push(`${label}: ${problem}`);
      });
    for (const op of ops) {
      const valid = requestFor(op, A);
      const key = keyFor(op);
      for (const value of SQL_PROBES) {
        const shown = JSON.stringify(value);
        for (const param of Object.keys(op.case.params)) {
          const { path, body } = requestFor(op, A, { pathValues: { [param]: value } });
          probe(`${op.key} path ${param}=${shown}`, op.method, path, key, body);
        }
        for (const { name } of op.queryParams) {
          const { path, body } = requestFor(op, A, { query: { ...(op.case.query?.(A) ?? {}), [name]: value } });
          probe(`${op.key} query ${name}=${shown}`, op.method, path, key, body);
        }
        for (const prop of op.hasBody ? stringProps(op) : []) {
          probe(`${op.key} body ${prop}=${shown}`, op.method, valid.path, key, { ...(valid.body as Record<string, unknown>), [prop]: value });
        }
      }
    }
    // The analytics query takes field names, aliases and filter values deeper in its body.
    const query = ops.find((o) => o.key === 'POST /projects/{project_id}/analytics/query')!;
    const base = query.case.body!(A) as Record<string, any>;
    for (const value of SQL_PROBES) {
      const variants: Record<string, unknown> = {
        'filter value': { ...base, filters: [{ field: 'agent_name', op: 'eq', value }] },
        'in value': { ...base, filters: [{ field: 'agent_name', op: 'in', value: [value, 'x'] }] },
        'filter field': { ...base, filters: [{ field: value, op: 'eq', value: 'x' }] },
        'group field': { ...base, group_by: [{ field: value, as: 'g' }] },
        alias: { ...base, measures: [{ as: value, agg: 'count' }] },
        'measure field': { ...base, measures: [{ as: 'm', agg: 'sum', field: value }] },
        'order by': { ...base, order_by: [{ measure: value, direction: 'asc' }] },
        event: { ...base, from: value },
        'join on': { ...base, join: { from: 'tool.called', on: value, measures: [{ as: 'j', agg: 'count' }] } },
      };
      for (const [name, body] of Object.entries(variants)) {
        probe(`analytics query ${name}=${JSON.stringify(value)}`, 'POST', `/projects/${A.projectId}/analytics/query`, svc.adminKey, body);
      }
    }
    await inParallel(tasks);
    expect(problems).toEqual([]);
    expect(tasks.length).toBeGreaterThan(1000);

    // Every table is still there, and so is the data.
    const sql = svc.service.deps.sql;
    for (const table of ['tenants', 'users', 'projects', 'api_keys', 'issues', 'issue_tags', 'monitors', 'metrics', 'artifact_versions', 'local_tickets', 'code_host_connections']) {
      const [row] = await sql<{ present: string | null }[]>`select to_regclass(${`public.${table}`})::text as present`;
      expect(row.present, table).toBe(table);
    }
    const ch = svc.service.deps.ch;
    for (const table of ['spans', 'traces', 'event_trace_processed', 'event_generation_completed', 'event_tool_called', 'event_span_errored', 'event_issue']) {
      const result = await ch.client.query({ query: `EXISTS TABLE ${ch.table(table)}`, format: 'JSONEachRow' });
      expect(Object.values((await result.json<Record<string, unknown>>())[0])[0], table).toBe(1);
    }
    expect((await svc.call('GET', `/projects/${A.projectId}`)).status).toBe(200);
    expect((await svc.call('GET', `/projects/${A.projectId}/traces`)).body.traces.length).toBe(1);
    // Over a thousand requests, many of them analytics statements that now run concurrently in the
    // analytics lane: 30 s alone here, past 60 s with the whole suite on two loaded cores.
  }, 180_000);
});
