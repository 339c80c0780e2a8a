import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../../helpers/service.js';

/**
 * A local stand-in for the code host's REST API (GitHub's shape). `mode` switches it into failure
 * answers so the health check's error codes can be seen.
 */
const standIn = { mode: 'ok' as 'ok' | 'down', requests: [] as { path: string; auth: string }[] };
let codeHost: http.Server;
let svc: TestService;

function json(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

beforeAll(async () => {
  codeHost = http.createServer((req, res) => {
    standIn.requests.push({ path: req.url ?? '', auth: req.headers.authorization ?? '' });
    if (standIn.mode === 'down') return json(res, 503, { message: 'maintenance' });
    const token = (req.headers.authorization ?? '').replace(/^Bearer /, '');
    if (token !== 'good-token') return json(res, 401, { message: 'Bad credentials' });
    if (req.url === '/user') return json(res, 200, { login: 'octo', html_url: 'https://code.example/octo' });
    const repo = /^\/repos\/([^/]+)\/([^/]+)$/.exec(req.url ?? '');
    if (repo && repo[1].toLowerCase() === 'octo' && repo[2].toLowerCase() === 'app') {
      return json(res, 200, { name: 'app', owner: { login: 'octo' }, html_url: 'https://code.example/octo/app' });
    }
    return json(res, 404, { message: 'Not Found' });
  });
  await new Promise<void>((resolve) => codeHost.listen(0, '127.0.0.1', () => resolve()));
  const port = (codeHost.address() as AddressInfo).port;
  svc = await startTestService({ CODE_HOST_API_URL: `http://127.0.0.1:${port}` });
});
afterAll(async () => {
  await svc?.stop();
  await new Promise<void>((resolve) => codeHost.close(() => resolve()));
});

const base = (projectId: string) => `/projects/${projectId}/code-host`;

const NEVER_CONNECTED = (projectId: string) => ({
  project_id: projectId,
  feature_enabled: false,
  connection: {
    status: 'not_connected', account_login: null, account_html_url: null, last_error_code: null, last_error_at: null,
    connected_at: null, disconnected_at: null,
  },
  binding: { present: false, status: 'none', repository_owner: null, repository_name: null, commit_url_base: null, unbound: false },
});

describe('code-host connection', () => {
  it('reports every field of a project that never connected', async () => {
    const project = await svc.newProject('ch-empty');
    const res = await svc.call('GET', `${base(project.id)}/connection`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual(NEVER_CONNECTED(project.id));
  });

  it('connects with a token checked against the code host, and never returns or stores it in clear', async () => {
    standIn.mode = 'ok';
    const project = await svc.newProject('ch-connect');
    const res = await svc.call('PUT', `${base(project.id)}/connection`, { body: { token: 'good-token' } });
    expect(res.status).toBe(200);
    expect(res.body.connection).toMatchObject({ status: 'connected', account_login: 'octo', account_html_url: 'https://code.example/octo', last_error_code: null, last_error_at: null, disconnected_at: null });
    expect(new Date(res.body.connection.connected_at).toISOString()).toBe(res.body.connection.connected_at);
    expect(JSON.stringify(res.body)).not.toContain('good-token');
    expect(standIn.requests.at(-1)).toEqual({ path: '/user', auth: 'Bearer good-token' });
    const [row] = await svc.service.deps.sql<{ token_sealed: string }[]>`select token_sealed from code_host_connections where project_id = ${project.id}`;
    expect(row.token_sealed).toMatch(/^v1\./);
    expect(row.token_sealed).not.toContain('good-token');
    expect((await svc.call('GET', `${base(project.id)}/connection`)).body).toEqual(res.body);
  });

  it('keeps a refused token as an error connection with last_error_code and last_error_at', async () => {
    standIn.mode = 'ok';
    const project = await svc.newProject('ch-refused');
    const res = await svc.call('PUT', `${base(project.id)}/connection`, { body: { token: 'wrong' } });
    expect(res.status).toBe(200);
    expect(res.body.connection).toMatchObject({ status: 'error', account_login: null, last_error_code: 'unauthorized' });
    expect(Date.now() - new Date(res.body.connection.last_error_at).getTime()).toBeLessThan(60_000);
    // Reconnecting with a good token recovers; the last error stays on record.
    const fixed = await svc.call('PUT', `${base(project.id)}/connection`, { body: { token: 'good-token' } });
    expect(fixed.body.connection).toMatchObject({ status: 'connected', account_login: 'octo', last_error_code: 'unauthorized', last_error_at: res.body.connection.last_error_at });
  });

  it('binds a repository, derives commit_url_base, and unbinds keeping the identity', async () => {
    standIn.mode = 'ok';
    const project = await svc.newProject('ch-bind');
    const early = await svc.call('PUT', `${base(project.id)}/binding`, { body: { repository_owner: 'octo', repository_name: 'app' } });
    expect(early.status).toBe(409);
    expect(early.body).toEqual({ code: 'conflict', detail: 'Connect the code host before binding a repository' });

    await svc.call('PUT', `${base(project.id)}/connection`, { body: { token: 'good-token' } });
    const bound = await svc.call('PUT', `${base(project.id)}/binding`, { body: { repository_owner: 'OCTO', repository_name: 'App' } });
    expect(bound.status).toBe(200);
    expect(bound.body.binding).toEqual({
      present: true, status: 'active', repository_owner: 'octo', repository_name: 'app', commit_url_base: 'https://code.example/octo/app/commit', unbound: false,
    });
    expect(standIn.requests.at(-1)?.path).toBe('/repos/OCTO/App');

    const unbound = await svc.call('DELETE', `${base(project.id)}/binding`);
    expect(unbound.status).toBe(200);
    expect(unbound.body.binding).toEqual({
      present: true, status: 'unbound', repository_owner: 'octo', repository_name: 'app', commit_url_base: 'https://code.example/octo/app/commit', unbound: true,
    });
    // Unbinding again changes nothing.
    expect((await svc.call('DELETE', `${base(project.id)}/binding`)).body).toEqual(unbound.body);
    // The shorthand spelling binds again.
    const again = await svc.call('PUT', `${base(project.id)}/binding`, { body: { repository: 'octo/app' } });
    expect(again.body.binding).toMatchObject({ status: 'active', unbound: false });
  });

  it('records a repository the code host does not know as a binding error', async () => {
    standIn.mode = 'ok';
    const project = await svc.newProject('ch-missing-repo');
    await svc.call('PUT', `${base(project.id)}/connection`, { body: { token: 'good-token' } });
    const res = await svc.call('PUT', `${base(project.id)}/binding`, { body: { repository_owner: 'octo', repository_name: 'ghost' } });
    expect(res.status).toBe(200);
    expect(res.body.binding).toEqual({
      present: true, status: 'error', repository_owner: 'octo', repository_name: 'ghost', commit_url_base: 'https://code.example/octo/ghost/commit', unbound: false,
    });
    expect(res.body.connection).toMatchObject({ status: 'connected', last_error_code: 'repository_not_found' });
  });

  it('health check: an outage sets error with its code and time; recovery restores connected', async () => {
    standIn.mode = 'ok';
    const project = await svc.newProject('ch-health');
    await svc.call('PUT', `${base(project.id)}/connection`, { body: { token: 'good-token' } });
    await svc.call('PUT', `${base(project.id)}/binding`, { body: { repository_owner: 'octo', repository_name: 'app' } });
    standIn.mode = 'down';
    const down = await svc.call('POST', `${base(project.id)}/connection/check`);
    expect(down.status).toBe(200);
    expect(down.body.connection).toMatchObject({ status: 'error', last_error_code: 'server_error', account_login: 'octo' });
    expect(down.body.connection.last_error_at).not.toBeNull();
    expect(down.body.binding).toMatchObject({ status: 'active', repository_owner: 'octo' });
    standIn.mode = 'ok';
    const up = await svc.call('POST', `${base(project.id)}/connection/check`);
    expect(up.body.connection).toMatchObject({ status: 'connected', last_error_code: 'server_error', last_error_at: down.body.connection.last_error_at });
    expect(up.body.binding.status).toBe('active');

    const never = await svc.newProject('ch-health-none');
    expect((await svc.call('POST', `${base(never.id)}/connection/check`)).status).toBe(409);
  });

  it('disables and re-enables the feature without losing the stored history', async () => {
    standIn.mode = 'ok';
    const project = await svc.newProject('ch-feature');
    await svc.call('PUT', `${base(project.id)}/connection`, { body: { token: 'good-token' } });
    const bound = await svc.call('PUT', `${base(project.id)}/binding`, { body: { repository_owner: 'octo', repository_name: 'app' } });
    const on = await svc.call('PUT', `${base(project.id)}/feature`, { body: { enabled: true } });
    expect(on.body).toEqual({ ...bound.body, feature_enabled: true });
    const off = await svc.call('PUT', `${base(project.id)}/feature`, { body: { enabled: false } });
    expect(off.body).toEqual({ ...bound.body, feature_enabled: false });
    expect((await svc.call('GET', `${base(project.id)}/connection`)).body).toEqual(off.body);
    // A project that never connected can switch the feature on first.
    const fresh = await svc.newProject('ch-feature-fresh');
    expect((await svc.call('PUT', `${base(fresh.id)}/feature`, { body: { enabled: true } })).body).toEqual({ ...NEVER_CONNECTED(fresh.id), feature_enabled: true });
  });

  it('disconnects: the token goes, account and binding history stay', async () => {
    standIn.mode = 'ok';
    const project = await svc.newProject('ch-disconnect');
    await svc.call('PUT', `${base(project.id)}/connection`, { body: { token: 'good-token' } });
    await svc.call('PUT', `${base(project.id)}/binding`, { body: { repository_owner: 'octo', repository_name: 'app' } });
    const res = await svc.call('DELETE', `${base(project.id)}/connection`);
    expect(res.status).toBe(200);
    expect(res.body.connection).toMatchObject({ status: 'disconnected', account_login: 'octo' });
    expect(res.body.connection.disconnected_at).not.toBeNull();
    expect(res.body.binding).toMatchObject({ present: true, repository_owner: 'octo', repository_name: 'app' });
    const [row] = await svc.service.deps.sql<{ token_sealed: string | null }[]>`select token_sealed from code_host_connections where project_id = ${project.id}`;
    expect(row.token_sealed).toBeNull();
    expect((await svc.call('PUT', `${base(project.id)}/binding`, { body: { repository_owner: 'octo', repository_name: 'app' } })).status).toBe(409);
    expect((await svc.call('DELETE', `${base(project.id)}/connection`)).body).toEqual(res.body);
    const back = await svc.call('PUT', `${base(project.id)}/connection`, { body: { token: 'good-token' } });
    expect(back.body.connection.status).toBe('connected');
    expect(back.body.binding.status).toBe('active');
  });

  it('rejects bad input with validation_error naming the field', async () => {
    const project = await svc.newProject('ch-bad');
    const cases: [string, string, unknown, RegExp][] = [
      ['PUT', 'connection', {}, /token is required/],
      ['PUT', 'connection', { token: '' }, /token/],
      ['PUT', 'connection', { token: '   ' }, /token: must not be blank/],
      ['PUT', 'connection', { token: 'x', login: 'y' }, /unknown key 'login'/],
      ['PUT', 'binding', {}, /repository_owner is required/],
      ['PUT', 'binding', { repository_owner: 'octo' }, /repository_name is required/],
      ['PUT', 'binding', { repository_owner: 'oc to', repository_name: 'app' }, /repository_owner/],
      ['PUT', 'binding', { repository: 'just-a-name' }, /repository: must be 'owner\/name'/],
      ['PUT', 'binding', { repository: 'a/b', repository_owner: 'a' }, /either/],
      ['PUT', 'feature', { enabled: 'yes' }, /enabled: must be boolean/],
      ['PUT', 'feature', {}, /enabled is required/],
    ];
    for (const [method, path, body, detail] of cases) {
      const res = await svc.call(method, `${base(project.id)}/${path}`, { body });
      expect(res.status, `${path} ${JSON.stringify(body)}`).toBe(400);
      expect(res.body.code).toBe('validation_error');
      expect(res.body.detail).toMatch(detail);
    }
  });

  it('isolates tenants and enforces scopes', async () => {
    const project = await svc.newProject('ch-isolated');
    const intruder = await svc.newTenant('ch-intruder');
    const routes: [string, string, unknown?][] = [
      ['GET', 'connection'], ['PUT', 'connection', { token: 'good-token' }], ['DELETE', 'connection'], ['POST', 'connection/check'],
      ['PUT', 'binding', { repository: 'octo/app' }], ['DELETE', 'binding'], ['PUT', 'feature', { enabled: true }],
    ];
    for (const [method, path, body] of routes) {
      const res = await svc.call(method, `${base(project.id)}/${path}`, { key: intruder.adminKey, body });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.body.code).toBe('not_found');
    }
    const read = await svc.newKey('read');
    expect((await svc.call('GET', `${base(project.id)}/connection`, { key: read })).status).toBe(200);
    for (const [method, path, body] of routes.filter(([m]) => m !== 'GET')) {
      expect((await svc.call(method, `${base(project.id)}/${path}`, { key: read, body })).status, `${method} ${path}`).toBe(403);
    }
    expect((await svc.call('GET', `${base(project.id)}/connection`)).body).toEqual(NEVER_CONNECTED(project.id));
  });

  it('lists every route in the OpenAPI document', async () => {
    const paths = (await svc.call('GET', '/openapi.json')).body.paths;
    const p = '/projects/{project_id}/code-host';
    expect(Object.keys(paths[`${p}/connection`]).sort()).toEqual(['delete', 'get', 'put']);
    expect(Object.keys(paths[`${p}/binding`]).sort()).toEqual(['delete', 'put']);
    expect(paths[`${p}/feature`].put).toBeDefined();
    expect(paths[`${p}/connection/check`].post).toBeDefined();
  });
});
