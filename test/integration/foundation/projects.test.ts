import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../../helpers/service.js';

let svc: TestService;

beforeAll(async () => {
  svc = await startTestService();
});
afterAll(async () => {
  await svc?.stop();
});

const PROJECT_KEYS = ['created_at', 'description', 'id', 'mcp_activated_at', 'name', 'sort_order', 'updated_at'];

describe('projects', () => {
  it('creates, reads, updates and deletes a project with every field present', async () => {
    const created = await svc.call('POST', '/projects', { body: { name: '  Support agent ', description: 'answers tickets' } });
    expect(created.status).toBe(201);
    expect(Object.keys(created.body).sort()).toEqual(PROJECT_KEYS);
    expect(created.body).toMatchObject({ name: 'Support agent', description: 'answers tickets', mcp_activated_at: null });
    expect(new Date(created.body.created_at).toISOString()).toBe(created.body.created_at);

    const got = await svc.call('GET', `/projects/${created.body.id}`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(created.body);

    const patched = await svc.call('PATCH', `/projects/${created.body.id}`, { body: { name: 'Renamed' } });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ id: created.body.id, name: 'Renamed', description: 'answers tickets' });
    const cleared = await svc.call('PATCH', `/projects/${created.body.id}`, { body: { name: 'Renamed', description: null } });
    expect(cleared.body.description).toBeNull();

    const list = await svc.call('GET', '/projects');
    expect(list.body.projects.map((p: { id: string }) => p.id)).toContain(created.body.id);

    // The workspace records go at once; what the project stored goes by the deletion job it answers.
    const deleted = await svc.call('DELETE', `/projects/${created.body.id}`);
    expect(deleted.status).toBe(202);
    expect(deleted.body).toMatchObject({ project_id: created.body.id, kind: 'project' });
    expect((await svc.call('GET', `/projects/${created.body.id}`)).status).toBe(404);
    expect((await svc.call('DELETE', `/projects/${created.body.id}`)).status).toBe(404);
  });

  it('answers 400 with {detail, code} for every invalid body', async () => {
    const cases: [unknown, RegExp][] = [
      [{ name: 'x', extra: 1 }, /unknown key 'extra'/],
      [{}, /name is required/],
      [{ name: '   ' }, /name: must not be blank/],
      [{ name: 5 }, /name: must be string/],
      [{ name: 'x', description: 3 }, /description/],
      [[1, 2], /body/],
    ];
    for (const [body, detail] of cases) {
      const res = await svc.call('POST', '/projects', { body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.code).toBe('validation_error');
      expect(res.body.detail).toMatch(detail);
    }
    const malformed = await svc.call('POST', '/projects', { rawBody: '{"name": ' });
    expect(malformed.status).toBe(400);
    expect(malformed.body).toEqual({ detail: 'Malformed JSON body', code: 'validation_error' });
    const project = await svc.newProject('patch target');
    expect((await svc.call('PATCH', `/projects/${project.id}`, { body: { description: 'no name' } })).status).toBe(400);
    expect((await svc.call('PATCH', `/projects/${project.id}`, { body: { name: 'x', sort_order: 1 } })).status).toBe(400);
  });

  it('reorders: listed ids first, others keep their relative order; both spellings accepted', async () => {
    const other = await svc.newTenant('reorder-tenant');
    const ids: string[] = [];
    for (const name of ['a', 'b', 'c', 'd']) ids.push((await svc.newProject(name, other.adminKey)).id);
    const res = await svc.call('POST', '/projects/reorder', { key: other.adminKey, body: { ordered_ids: [ids[2], ids[0]] } });
    expect(res.status).toBe(204);
    expect(res.body).toBeUndefined();
    const list = await svc.call('GET', '/projects', { key: other.adminKey });
    expect(list.body.projects.map((p: { name: string }) => p.name)).toEqual(['c', 'a', 'b', 'd']);
    expect(list.body.projects.map((p: { sort_order: number }) => p.sort_order)).toEqual([0, 1, 2, 3]);

    expect((await svc.call('POST', '/projects/reorder', { key: other.adminKey, body: { orderedIds: [ids[3]] } })).status).toBe(204);
    const again = await svc.call('GET', '/projects', { key: other.adminKey });
    expect(again.body.projects.map((p: { name: string }) => p.name)).toEqual(['d', 'c', 'a', 'b']);
  });

  it('rejects reorders with unknown, foreign or duplicate ids and leaves the order unchanged', async () => {
    const mine = await svc.newProject('mine');
    const other = await svc.newTenant('foreign-tenant');
    const foreign = await svc.newProject('theirs', other.adminKey);
    const before = (await svc.call('GET', '/projects')).body.projects.map((p: { id: string }) => p.id);
    const cases: unknown[] = [
      { ordered_ids: [mine.id, mine.id] },
      { ordered_ids: [foreign.id] },
      { ordered_ids: ['00000000-0000-4000-8000-000000000000'] },
      { ordered_ids: ['not-a-uuid'] },
      { ordered_ids: [1] },
      { ordered_ids: [mine.id], extra: true },
      {},
    ];
    for (const body of cases) {
      const res = await svc.call('POST', '/projects/reorder', { body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.code).toBe('validation_error');
    }
    const after = (await svc.call('GET', '/projects')).body.projects.map((p: { id: string }) => p.id);
    expect(after).toEqual(before);
  });

  it('isolates tenants: another tenant gets 404 on every project route', async () => {
    const project = await svc.newProject('isolated');
    const other = await svc.newTenant('intruder');
    const key = other.adminKey;
    const routes: [string, string, unknown?][] = [
      ['GET', `/projects/${project.id}`],
      ['PATCH', `/projects/${project.id}`, { name: 'x' }],
      ['DELETE', `/projects/${project.id}`],
      ['GET', `/projects/${project.id}/instrumentation-diagnostics`],
      ['PUT', `/projects/${project.id}/instrumentation-diagnostics`, { enabled: true }],
    ];
    for (const [method, path, body] of routes) {
      const res = await svc.call(method, path, { key, body });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.body.code).toBe('not_found');
    }
    const list = await svc.call('GET', '/projects', { key });
    expect(list.body.projects.map((p: { id: string }) => p.id)).not.toContain(project.id);
    expect((await svc.call('GET', `/projects/${project.id}`)).status).toBe(200);
  });

  it('limits a project-limited key to its project', async () => {
    const p1 = await svc.newProject('limited-1');
    const p2 = await svc.newProject('limited-2');
    const key = await svc.newKey('read', { projectId: p1.id });
    const list = await svc.call('GET', '/projects', { key });
    expect(list.body.projects.map((p: { id: string }) => p.id)).toEqual([p1.id]);
    expect((await svc.call('GET', `/projects/${p1.id}`, { key })).status).toBe(200);
    expect((await svc.call('GET', `/projects/${p2.id}`, { key })).status).toBe(404);
  });

  it('enforces scopes: read keys cannot write, ingest keys cannot read', async () => {
    const project = await svc.newProject('scoped');
    const read = await svc.newKey('read');
    const ingest = await svc.newKey('ingest');
    for (const [method, path, body] of [
      ['POST', '/projects', { name: 'x' }],
      ['PATCH', `/projects/${project.id}`, { name: 'x' }],
      ['DELETE', `/projects/${project.id}`, undefined],
      ['POST', '/projects/reorder', { ordered_ids: [] }],
    ] as [string, string, unknown][]) {
      const res = await svc.call(method, path, { key: read, body });
      expect(res.status, `${method} ${path}`).toBe(403);
      expect(res.body.code).toBe('forbidden');
    }
    expect((await svc.call('GET', '/projects', { key: read })).status).toBe(200);
    expect((await svc.call('GET', '/projects', { key: ingest })).status).toBe(403);
  });

  it('answers 401 for missing, unknown and revoked keys', async () => {
    expect((await svc.call('GET', '/projects', { key: null })).body).toMatchObject({ code: 'unauthorized' });
    expect((await svc.call('GET', '/projects', { key: null })).status).toBe(401);
    expect((await svc.call('GET', '/projects', { key: 'lk_nope' })).status).toBe(401);
    const created = await svc.call('POST', '/api-keys', { body: { name: 'temp', scope: 'read' } });
    expect(created.status).toBe(201);
    expect(Object.keys(created.body).sort()).toEqual(['created_at', 'id', 'key', 'name', 'project_id', 'scope', 'user_id']);
    expect((await svc.call('GET', '/projects', { key: created.body.key })).status).toBe(200);
    expect((await svc.call('DELETE', `/api-keys/${created.body.id}`)).status).toBe(204);
    expect((await svc.call('GET', '/projects', { key: created.body.key })).status).toBe(401);
    expect((await svc.call('DELETE', `/api-keys/${created.body.id}`)).status).toBe(404);
  });

  it('stores keys hashed and never lists secrets; records last use', async () => {
    const created = await svc.call('POST', '/api-keys', { body: { name: 'listed', scope: 'read' } });
    await svc.call('GET', '/projects', { key: created.body.key });
    const rows = await svc.service.deps.sql`select key_hash from api_keys where id = ${created.body.id}`;
    expect(rows[0].key_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(rows[0].key_hash).not.toContain(created.body.key);
    const list = await svc.call('GET', '/api-keys');
    const listed = list.body.api_keys.find((k: { id: string }) => k.id === created.body.id);
    expect(listed.key).toBeUndefined();
    expect(listed.last_used_at).not.toBeNull();
    expect(JSON.stringify(list.body)).not.toContain(created.body.key);
  });

  it('manages users and validates key creation', async () => {
    const user = await svc.call('POST', '/users', { body: { name: 'Ada', email: 'ada@example.com' } });
    expect(user.status).toBe(201);
    expect(Object.keys(user.body).sort()).toEqual(['created_at', 'email', 'id', 'name']);
    expect((await svc.call('GET', '/users')).body.users.map((u: { id: string }) => u.id)).toContain(user.body.id);
    const key = await svc.call('POST', '/api-keys', { body: { name: 'ada', scope: 'admin', user_id: user.body.id } });
    expect(key.body.user_id).toBe(user.body.id);
    expect((await svc.call('POST', '/api-keys', { body: { name: 'x', scope: 'owner' } })).status).toBe(400);
    expect((await svc.call('POST', '/api-keys', { body: { name: 'x', scope: 'read', project_id: '00000000-0000-4000-8000-000000000000' } })).status).toBe(400);
    expect((await svc.call('POST', '/users', { body: { name: 'x', email: 'not an email' } })).status).toBe(400);
  });

  it('guards the operator route with the system key', async () => {
    expect((await svc.call('POST', '/tenants', { body: { name: 'x' } })).status).toBe(401);
    expect((await svc.call('POST', '/tenants', { key: 'lk_system_test_key', body: { name: 'x', extra: 1 } })).status).toBe(400);
    // A name is 1 to 200 characters; a 900 KB one is refused with the field named, and nothing is created.
    for (const name of ['', 'n'.repeat(201), 'n'.repeat(900_000)]) {
      const refused = await svc.call('POST', '/tenants', { key: 'lk_system_test_key', body: { name } });
      expect(refused.status).toBe(400);
      expect(refused.body).toMatchObject({ code: 'validation_error', detail: expect.stringContaining('name') });
    }
    const created = await svc.call('POST', '/tenants', { key: 'lk_system_test_key', body: { name: 'acme' } });
    expect(created.status).toBe(201);
    expect(created.body.tenant.name).toBe('acme');
    expect(created.body.admin_key).toMatch(/^lk_/);
    expect((await svc.call('GET', '/projects', { key: created.body.admin_key })).body).toEqual({ projects: [] });
  });

  it('sets instrumentation diagnostics', async () => {
    const project = await svc.newProject('diag');
    expect((await svc.call('GET', `/projects/${project.id}/instrumentation-diagnostics`)).body).toEqual({ enabled: false, chat_connected: false });
    expect((await svc.call('PUT', `/projects/${project.id}/instrumentation-diagnostics`, { body: { enabled: true } })).body).toEqual({ enabled: true, chat_connected: false });
    expect((await svc.call('PUT', `/projects/${project.id}/instrumentation-diagnostics`, { body: { enabled: 'yes' } })).status).toBe(400);
  });

  it('answers unknown routes with 404 not_found, serves the OpenAPI document and health', async () => {
    const res = await svc.call('GET', '/nothing-here');
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('not_found');
    const doc = await svc.call('GET', '/openapi.json');
    expect(doc.body.openapi).toBe('3.1.0');
    expect(doc.body.paths['/projects/{project_id}'].patch).toBeDefined();
    expect((await fetch(`${svc.url}/healthz`)).status).toBe(200);
    const ready = await fetch(`${svc.url}/readyz`);
    expect(await ready.json()).toEqual({ status: 'ready', postgres: true, clickhouse: true, disk: true });
  });
});
