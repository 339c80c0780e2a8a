import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SYSTEM_KEY, startTestService, type TestService } from '../../helpers/service.js';
import { answerProblem, leakProblem, normalizedAnswer, type Answer } from './probe.js';
import { operationsOf, requestFor, TRACE_CONTEXT_QUERY, type Operation } from './route-table.js';
import { projectMarkers, seedTenant, startCodeHostStandIn, unknownFixture, type Fixture } from './tenant-fixture.js';

/**
 * Tenant and project isolation, scopes and authentication, driven by the route table: every
 * operation of /api/openapi.json is called with tenant A's ids by tenant B, by a key limited to
 * another project of A, by read and ingest keys and with no key.
 * Another tenant's resource is a 404 exactly like an unknown id.
 */
const CODE_HOST_TOKEN = 'sec-code-host-token-isolation';

let svc: TestService;
let codeHost: { url: string; close(): Promise<void> };
let ops: Operation[];
let A: Fixture;
let bKey: string;
let bProjectId: string;
let readKey: string;
let ingestKey: string;
let limitedKey: string;
let revokedKey: string;

async function send(op: Operation, key: string | null, f: Fixture, overrides: Parameters<typeof requestFor>[2] = {}): Promise<{ res: Answer; request: string }> {
  const { path, body } = requestFor(op, f, overrides);
  const res = await svc.call(op.method, path, { key, body });
  return { res, request: `${path} ${JSON.stringify(body ?? '')}` };
}

beforeAll(async () => {
  codeHost = await startCodeHostStandIn(CODE_HOST_TOKEN);
  svc = await startTestService({ CODE_HOST_API_URL: codeHost.url });
  A = await seedTenant(svc, svc.adminKey, 'a', CODE_HOST_TOKEN);
  const b = await svc.newTenant('tenant b');
  bKey = b.adminKey;
  bProjectId = (await svc.newProject('b project', bKey)).id;
  readKey = await svc.newKey('read');
  ingestKey = await svc.newKey('ingest');
  limitedKey = await svc.newKey('admin', { projectId: A.otherProjectId });
  const revoked = await svc.call('POST', '/api-keys', { body: { name: 'to revoke', scope: 'admin' } });
  revokedKey = revoked.body.key;
  expect((await svc.call('DELETE', `/api-keys/${revoked.body.id}`)).status).toBe(204);
  const doc = await svc.call('GET', '/openapi.json', { key: null });
  ops = operationsOf(doc.body);
}, 120_000);

afterAll(async () => {
  await svc?.stop();
  await codeHost?.close();
});

/** Runs every tenant-key operation for a caller that must not reach A's project data. */
async function sweepForeignCaller(key: string, markers: string[]): Promise<string[]> {
  const problems: string[] = [];
  const unknown = unknownFixture();
  for (const op of ops) {
    const { res, request } = await send(op, key, A);
    const label = `${op.key}: `;
    const shape = answerProblem(res);
    if (shape) problems.push(label + shape);
    if (op.case.operator) {
      if (res.status !== 401) problems.push(`${label}operator route answered ${res.status} to a tenant key`);
      continue;
    }
    if (op.case.foreign === 'path' && (res.status !== 404 || res.body?.code !== 'not_found')) {
      problems.push(`${label}expected 404 not_found, got ${res.status} ${JSON.stringify(res.body ?? null).slice(0, 200)}`);
    }
    if (op.case.foreign === 'ref') {
      const other = await send(op, key, unknown);
      const echoed = [...Object.values(A), ...Object.values(unknown)].map(String);
      if (res.status < 400) problems.push(`${label}a reference to A's data succeeded (${res.status})`);
      if (normalizedAnswer(res, echoed) !== normalizedAnswer(other.res, echoed)) {
        problems.push(`${label}answers differently for A's id (${normalizedAnswer(res, echoed)}) and an unknown id (${normalizedAnswer(other.res, echoed)})`);
      }
    }
    const leak = leakProblem(res, markers, request);
    if (leak) problems.push(label + leak);
  }
  // The context bundle names its project in the query.
  const trace = ops.find((o) => o.key === 'GET /traces/{trace_id}')!;
  const { res } = await send(trace, key, A, { query: TRACE_CONTEXT_QUERY(A) });
  if (res.status !== 404) problems.push(`GET /traces/{trace_id}?expand=context: expected 404, got ${res.status}`);
  return problems;
}

async function mcpAnswers(key: string): Promise<{ tool: string; code: unknown; isError: unknown }[]> {
  const client = new Client({ name: 'security-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${svc.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
  try {
    const out = [];
    for (const tool of ['describe_project_analytics', 'get_project_roi']) {
      const result = await client.callTool({ name: tool, arguments: { project_id: A.projectId } });
      out.push({ tool, code: (result.structuredContent as { code?: unknown } | undefined)?.code, isError: result.isError });
    }
    return out;
  } finally {
    await client.close();
  }
}

describe('security: route table', () => {
  it('covers every operation of the OpenAPI document, with every path parameter filled', () => {
    expect(ops.length).toBeGreaterThan(70);
    for (const op of ops) expect(op.path.startsWith('/')).toBe(true);
  });
});

describe('security: isolation', () => {
  it("another tenant's admin key gets 404 for every id of tenant A and never sees A's data", async () => {
    expect(await sweepForeignCaller(bKey, projectMarkers(A))).toEqual([]);
    // B's own project works with B's key: the 404s above are about ownership, not a broken key.
    expect((await svc.call('GET', `/projects/${bProjectId}`, { key: bKey })).status).toBe(200);
  });

  it('a key limited to another project of the same tenant gets 404 for the first project and its resources', async () => {
    expect(await sweepForeignCaller(limitedKey, projectMarkers(A))).toEqual([]);
    expect((await svc.call('GET', `/projects/${A.otherProjectId}`, { key: limitedKey })).status).toBe(200);
  });

  it("MCP tools answer not_found for another tenant's project and for a project outside the key", async () => {
    for (const key of [bKey, limitedKey]) {
      for (const answer of await mcpAnswers(key)) expect(answer, `${answer.tool}`).toMatchObject({ isError: true, code: 'not_found' });
    }
  });
});

describe('security: scopes and authentication', () => {
  it('a read key gets 403 forbidden on every operation that changes something', async () => {
    const problems: string[] = [];
    for (const op of ops.filter((o) => o.method !== 'GET')) {
      const { res } = await send(op, readKey, A);
      const shape = answerProblem(res);
      if (shape) problems.push(`${op.key}: ${shape}`);
      const expected = op.case.operator ? 401 : op.case.readKeyMayCall ? 200 : 403;
      if (res.status !== expected) problems.push(`${op.key}: expected ${expected}, got ${res.status}`);
      if (expected === 403 && res.body?.code !== 'forbidden') problems.push(`${op.key}: code ${res.body?.code}`);
    }
    expect(problems).toEqual([]);
  });

  it('an ingest key gets 403 forbidden on every /api operation', async () => {
    const problems: string[] = [];
    for (const op of ops) {
      const { res } = await send(op, ingestKey, A);
      const expected = op.case.operator ? 401 : 403;
      if (res.status !== expected) problems.push(`${op.key}: expected ${expected}, got ${res.status}`);
      const shape = answerProblem(res);
      if (shape) problems.push(`${op.key}: ${shape}`);
    }
    expect(problems).toEqual([]);
  });

  it('no key, a malformed header, an unknown key or a revoked key gets 401 unauthorized everywhere', async () => {
    const problems: string[] = [];
    const variants: [string, Record<string, string>][] = [
      ['no header', {}],
      ['empty bearer', { authorization: 'Bearer ' }],
      ['basic scheme', { authorization: `Basic ${Buffer.from(`x:${svc.adminKey}`).toString('base64')}` }],
      ['unknown key', { authorization: 'Bearer lk_this_key_does_not_exist' }],
      ['revoked key', { authorization: `Bearer ${revokedKey}` }],
      ['key in a query-style header', { 'x-api-key': svc.adminKey }],
    ];
    for (const op of ops) {
      for (const [name, headers] of variants) {
        const { path, body } = requestFor(op, A);
        const res = await svc.call(op.method, path, { key: null, body, headers });
        if (res.status !== 401 || res.body?.code !== 'unauthorized') problems.push(`${op.key} (${name}): ${res.status} ${JSON.stringify(res.body ?? null).slice(0, 120)}`);
      }
    }
    expect(problems).toEqual([]);
  });
});

describe('security: the owner still reaches everything', () => {
  it("leaves tenant A's data untouched, and A's own admin key reaches every operation", async () => {
    // Nothing above changed A's records.
    const project = await svc.call('GET', `/projects/${A.projectId}`);
    expect(project.body.name).toBe(`${A.marker} project`);
    const issue = await svc.call('GET', `/issues/${A.issueId}`);
    expect(issue.body).toMatchObject({ status: 'open', description: 'd', tags: [{ id: A.tagId }] });
    expect((await svc.call('GET', `/monitors/${A.monitorId}`)).body.exploration_status).toBe('learning');
    expect((await svc.call('GET', `/metrics/${A.metricId}`)).body.total_events).toBe(1);
    expect((await svc.call('GET', `/issues/${A.issueId}/tracker-ticket`)).body.link.ticket.state_id).toBe('todo');
    expect((await svc.call('GET', `/projects/${A.projectId}/code-host/connection`)).body.connection.status).toBe('connected');
    const keys = await svc.call('GET', '/api-keys');
    expect(keys.body.api_keys.find((k: { id: string }) => k.id === A.keyId).revoked_at).toBeNull();

    // The same requests with A's key are found (so the 404s above were about ownership).
    const problems: string[] = [];
    const ordered = [...ops].sort((x, y) => (x.case.late ?? 0) - (y.case.late ?? 0));
    for (const op of ordered) {
      const { res } = await send(op, op.case.operator ? SYSTEM_KEY : svc.adminKey, A);
      const shape = answerProblem(res);
      if (shape) problems.push(`${op.key}: ${shape}`);
      if ([401, 403, 404].includes(res.status)) problems.push(`${op.key}: the owner got ${res.status} ${JSON.stringify(res.body ?? null).slice(0, 200)}`);
    }
    expect(problems).toEqual([]);
  });
});
