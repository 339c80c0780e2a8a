import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BOOTSTRAP_KEY, SYSTEM_KEY, removeDir, spawnService, startTestService, type TestService } from '../../helpers/service.js';
import { tempDataDir } from '../../helpers/temp-dir.js';
import { startLinearStandIn, type LinearStandIn } from '../issues-tracker/linear-stand-in.js';
import { operationsOf, requestFor, TRACE_CONTEXT_QUERY } from './route-table.js';
import { seedTenant, startCodeHostStandIn, type Fixture } from './tenant-fixture.js';

/**
 * Secrets: API keys are stored only as SHA-256 hashes and shown
 * once; the Linear key and the code-host token are stored sealed and never returned; no response
 * carries key_hash or a stored secret; the request log redacts Authorization.
 */
const CODE_HOST_TOKEN = `ghp_sec_${crypto.randomBytes(12).toString('hex')}`;
const LINEAR_KEY = `lin_api_sec_${crypto.randomBytes(12).toString('hex')}`;
const sha256 = (text: string) => crypto.createHash('sha256').update(text).digest('hex');

let svc: TestService;
let codeHost: { url: string; close(): Promise<void> };
let linear: LinearStandIn;
let A: Fixture;
/** Every answer the run received, with the request that produced it. */
const answers: { request: string; text: string }[] = [];
/** Every API key value minted during the run (each may appear only in the answer that created it). */
const keys = new Set<string>([BOOTSTRAP_KEY]);
/** Every webhook signing secret shown during the run (each may appear only in the create or rotate answer that made it). */
const webhookSecrets = new Set<string>();

beforeAll(async () => {
  codeHost = await startCodeHostStandIn(CODE_HOST_TOKEN);
  linear = await startLinearStandIn(LINEAR_KEY);
  svc = await startTestService({ CODE_HOST_API_URL: codeHost.url, LINEAR_API_URL: linear.url });
  const call = svc.call.bind(svc);
  svc.call = async (method, path, options) => {
    const res = await call(method, path, options);
    const text = typeof res.body === 'string' ? res.body : JSON.stringify(res.body ?? null);
    answers.push({ request: `${method} ${path}`, text });
    for (const match of text.matchAll(/lk_[A-Za-z0-9_-]{20,}/g)) keys.add(match[0]);
    for (const match of text.matchAll(/whsec_[A-Za-z0-9_-]{20,}/g)) webhookSecrets.add(match[0]);
    return res;
  };
  A = await seedTenant(svc, svc.adminKey, 'secrets', CODE_HOST_TOKEN);
  const tracker = await svc.call('PUT', '/integrations/ticket-tracker', { body: { provider: 'linear', api_key: LINEAR_KEY, team_id: 'team-eng' } });
  expect(tracker.status).toBe(200);
  // Through svc.call (recorded), not the helper's newKey/newTenant (which bypass the recording).
  expect((await svc.call('POST', '/tenants', { key: SYSTEM_KEY, body: { name: 'secrets other' } })).status).toBe(201);
  const readKey = (await svc.call('POST', '/api-keys', { body: { name: 'reader', scope: 'read' } })).body.key as string;
  // A second webhook, rotated: three secrets in all with the fixture's.
  const hook = await svc.call('POST', `/projects/${A.projectId}/webhooks`, { body: { url: 'https://hooks.secrets.invalid/in', events: ['*'] } });
  expect(hook.status).toBe(201);
  expect((await svc.call('POST', `/webhooks/${hook.body.id}/rotate-secret`)).status).toBe(200);
  expect((await svc.call('POST', `/webhooks/${hook.body.id}/test`)).status).toBe(200);
  await svc.call('POST', '/api-keys', { body: { name: 'limited admin', scope: 'admin', project_id: A.projectId } });
  // Read every GET of the API, with an admin and a read key.
  const ops = operationsOf((await svc.call('GET', '/openapi.json', { key: null })).body);
  for (const key of [svc.adminKey, readKey]) {
    for (const op of ops.filter((o) => o.method === 'GET')) {
      const { path } = requestFor(op, A);
      await svc.call('GET', path, { key });
    }
    const trace = ops.find((o) => o.key === 'GET /traces/{trace_id}')!;
    await svc.call('GET', requestFor(trace, A, { query: TRACE_CONTEXT_QUERY(A) }).path, { key });
  }
}, 120_000);

afterAll(async () => {
  await svc?.stop();
  await codeHost?.close();
  await linear?.close();
});

describe('security: secrets', () => {
  it('never returns key_hash, a stored tracker or code-host secret, or an API key outside its creation answer', () => {
    expect(answers.length).toBeGreaterThan(60);
    expect(keys.size).toBeGreaterThan(4);
    expect(webhookSecrets.size).toBe(3);
    const hashes = [...keys].map(sha256);
    const problems: string[] = [];
    for (const { request, text } of answers) {
      for (const banned of ['key_hash', 'api_key_encrypted', 'token_sealed', 'secret_sealed', LINEAR_KEY, CODE_HOST_TOKEN, ...hashes]) {
        if (text.includes(banned)) problems.push(`${request} returns ${banned.slice(0, 16)}…`);
      }
      const shown = [...keys].filter((k) => text.includes(k));
      const creation = request === 'POST /api-keys' || request === 'POST /tenants';
      if (shown.length > 0 && !(creation && shown.length === 1)) problems.push(`${request} returns an API key`);
      const secrets = [...webhookSecrets].filter((k) => text.includes(k));
      const secretAnswer = /^POST \/projects\/[^/]+\/webhooks$|^POST \/webhooks\/[^/]+\/rotate-secret$/.test(request);
      if (secrets.length > 0 && !(secretAnswer && secrets.length === 1)) problems.push(`${request} returns a webhook secret`);
    }
    expect(problems).toEqual([]);
    // The tracker settings say a key is configured, without it.
    const settings = answers.filter((a) => a.request === 'GET /integrations/ticket-tracker').map((a) => JSON.parse(a.text));
    expect(settings.at(-1)).toMatchObject({ provider: 'linear', api_key_configured: true });
  });

  it('stores API keys only as SHA-256 hashes, and no table holds a plaintext key or secret', async () => {
    const sql = svc.service.deps.sql;
    const rows = await sql<{ key_hash: string }[]>`select key_hash from api_keys`;
    const stored = new Set(rows.map((r) => r.key_hash));
    for (const key of keys) expect(stored.has(sha256(key)), `hash of ${key.slice(0, 7)}`).toBe(true);
    expect(rows.every((r) => /^[0-9a-f]{64}$/.test(r.key_hash))).toBe(true);

    const tables = await sql<{ table_name: string }[]>`select table_name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE'`;
    const problems: string[] = [];
    for (const { table_name } of tables) {
      const dump = await sql<{ row: string }[]>`select row_to_json(t)::text as row from ${sql(table_name)} t`;
      const text = dump.map((d) => d.row).join('\n');
      for (const secret of [LINEAR_KEY, CODE_HOST_TOKEN, ...keys, ...webhookSecrets]) if (text.includes(secret)) problems.push(`${table_name} holds ${secret.slice(0, 10)}…`);
    }
    expect(problems).toEqual([]);
  });

  it('redacts Authorization (and other credential headers) from the request log', async () => {
    const dataDir = tempDataDir();
    const child = await spawnService(dataDir, { LOG_LEVEL: 'info' });
    const wrongKey = `lk_wrong_${crypto.randomBytes(16).toString('hex')}`;
    let created: string;
    try {
      const headers = { authorization: `Bearer ${BOOTSTRAP_KEY}`, 'content-type': 'application/json' };
      expect((await fetch(`${child.url}/api/projects`, { headers })).status).toBe(200);
      const key = await fetch(`${child.url}/api/api-keys`, { method: 'POST', headers, body: JSON.stringify({ name: 'logged?', scope: 'ingest' }) });
      created = ((await key.json()) as { key: string }).key;
      expect((await fetch(`${child.url}/api/projects`, { headers: { authorization: `Bearer ${wrongKey}` } })).status).toBe(401);
      await fetch(`${child.url}/api/projects`, { headers: { 'x-api-key': wrongKey, cookie: `session=${wrongKey}` } });
      await fetch(`${child.url}/v1/traces`, { method: 'POST', headers: { authorization: `Bearer ${created}`, 'content-type': 'application/json' }, body: '{"resourceSpans":[]}' });
      await fetch(`${child.url}/api/tenants`, { method: 'POST', headers: { authorization: `Bearer ${SYSTEM_KEY}`, 'content-type': 'application/json' }, body: '{"name":"logged"}' });
      await fetch(`${child.url}/mcp`, { method: 'POST', headers: { authorization: `Bearer ${created}`, 'content-type': 'application/json' }, body: '{}' });
    } finally {
      await child.stop();
      removeDir(dataDir);
    }
    const output = child.output();
    expect(output).toContain('[redacted]');
    for (const secret of [BOOTSTRAP_KEY, SYSTEM_KEY, wrongKey, created]) expect(output.includes(secret), `${secret.slice(0, 10)}… in the log`).toBe(false);
    expect(output).not.toMatch(/lk_[A-Za-z0-9_-]{20,}/);
  }, 120_000);
});
