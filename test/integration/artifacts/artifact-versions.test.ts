import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../../helpers/service.js';
import { artifactIterationsByDay, countArtifactVersions } from '../../../src/workspace/artifacts/artifact-store.js';

let svc: TestService;

beforeAll(async () => {
  svc = await startTestService();
});
afterAll(async () => {
  await svc?.stop();
});

const IDENTITY_KEYS = ['agent_name', 'artifact_version_id', 'created_at', 'updated_at', 'version'];
const versionsPath = (projectId: string) => `/projects/${projectId}/artifacts/versions`;

describe('agent understanding versions', () => {
  it('records the first version with both files and answers identity only', async () => {
    const project = await svc.newProject('artifacts-first');
    const res = await svc.call('POST', versionsPath(project.id), { body: { agent_name: 'support', understanding: '# U1', expectations: '# E1' } });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(IDENTITY_KEYS);
    expect(res.body).toMatchObject({ version: 1, agent_name: 'support' });
    expect(res.body.artifact_version_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(new Date(res.body.created_at).toISOString()).toBe(res.body.created_at);
    expect(res.body.updated_at).toBe(res.body.created_at);

    const read = await svc.call('GET', `${versionsPath(project.id)}/${res.body.artifact_version_id}`);
    expect(read.status).toBe(200);
    expect(read.body).toEqual({ ...res.body, understanding: '# U1', expectations: '# E1' });
  });

  it('refuses a first version without both files, then carries an omitted file forward', async () => {
    const project = await svc.newProject('artifacts-carry');
    for (const body of [{ agent_name: 'a', understanding: 'u' }, { agent_name: 'a', expectations: 'e' }, { agent_name: 'a' }]) {
      const res = await svc.call('POST', versionsPath(project.id), { body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.code).toBe('validation_error');
      expect(res.body.detail).toMatch(/first version of agent 'a' needs both files/);
    }
    expect((await svc.call('GET', versionsPath(project.id))).body).toEqual({ versions: [] });

    await svc.call('POST', versionsPath(project.id), { body: { agent_name: 'a', understanding: 'u1', expectations: 'e1' } });
    const v2 = await svc.call('POST', versionsPath(project.id), { body: { agent_name: 'a', understanding: 'u2' } });
    expect(v2.body.version).toBe(2);
    const v3 = await svc.call('POST', versionsPath(project.id), { body: { agent_name: 'a', expectations: 'e3' } });
    expect(v3.body.version).toBe(3);
    const read2 = await svc.call('GET', `${versionsPath(project.id)}/${v2.body.artifact_version_id}`);
    expect(read2.body).toMatchObject({ version: 2, understanding: 'u2', expectations: 'e1' });
    const read3 = await svc.call('GET', `${versionsPath(project.id)}/${v3.body.artifact_version_id}`);
    expect(read3.body).toMatchObject({ version: 3, understanding: 'u2', expectations: 'e3' });
  });

  it('answers 409 version_conflict when based_on_version is not the latest', async () => {
    const project = await svc.newProject('artifacts-conflict');
    const path = versionsPath(project.id);
    const stale = await svc.call('POST', path, { body: { agent_name: 'x', understanding: 'u', expectations: 'e', based_on_version: 1 } });
    expect(stale.status).toBe(409);
    expect(stale.body).toEqual({ code: 'version_conflict', detail: "based_on_version 1 is not the latest version of agent 'x' (latest: 0)" });
    expect((await svc.call('POST', path, { body: { agent_name: 'x', understanding: 'u', expectations: 'e', based_on_version: 0 } })).body.version).toBe(1);
    expect((await svc.call('POST', path, { body: { agent_name: 'x', understanding: 'u2', based_on_version: 1 } })).body.version).toBe(2);
    const conflict = await svc.call('POST', path, { body: { agent_name: 'x', understanding: 'u3', based_on_version: 1 } });
    expect(conflict.status).toBe(409);
    expect(conflict.body.code).toBe('version_conflict');
    // null skips the check.
    expect((await svc.call('POST', path, { body: { agent_name: 'x', understanding: 'u3', based_on_version: null } })).body.version).toBe(3);
    const list = await svc.call('GET', `${path}?agent_name=x`);
    expect(list.body.versions.map((v: { version: number }) => v.version)).toEqual([3, 2, 1]);
  });

  it('numbers versions per agent and lists by agent name, newest first', async () => {
    const project = await svc.newProject('artifacts-list');
    const path = versionsPath(project.id);
    for (const agent of ['beta', 'alpha', 'beta']) {
      await svc.call('POST', path, { body: { agent_name: agent, understanding: 'u', expectations: 'e' } });
    }
    const all = await svc.call('GET', path);
    expect(all.status).toBe(200);
    expect(all.body.versions.map((v: { agent_name: string; version: number }) => `${v.agent_name}:${v.version}`)).toEqual(['alpha:1', 'beta:2', 'beta:1']);
    for (const v of all.body.versions) expect(Object.keys(v).sort()).toEqual(IDENTITY_KEYS);
    const beta = await svc.call('GET', `${path}?agent_name=beta`);
    expect(beta.body.versions).toHaveLength(2);
    expect((await svc.call('GET', `${path}?agent_name=nobody`)).body.versions).toEqual([]);
    expect((await svc.call('GET', `${path}?color=red`)).status).toBe(400);
    expect(await countArtifactVersions(svc.service.deps.sql, (await tenantOf(project.id)), project.id)).toBe(3);
    const today = new Date().toISOString().slice(0, 10);
    const byDay = await artifactIterationsByDay(svc.service.deps.sql, await tenantOf(project.id), project.id, new Date(Date.now() - 86_400_000), new Date(Date.now() + 86_400_000));
    expect(byDay).toEqual([{ date: today, value: 3 }]);
  });

  it('gives concurrent writes for one agent consecutive versions with no gap or duplicate', async () => {
    const project = await svc.newProject('artifacts-concurrent');
    const path = versionsPath(project.id);
    await svc.call('POST', path, { body: { agent_name: 'busy', understanding: 'u0', expectations: 'e0' } });
    const writes = await Promise.all(
      Array.from({ length: 24 }, (_, i) => svc.call('POST', path, { body: { agent_name: 'busy', understanding: `u${i + 1}` } })),
    );
    expect(writes.map((w) => w.status)).toEqual(Array(24).fill(201));
    const numbers = writes.map((w) => w.body.version).sort((a, b) => a - b);
    expect(numbers).toEqual(Array.from({ length: 24 }, (_, i) => i + 2));
    const listed = (await svc.call('GET', `${path}?agent_name=busy`)).body.versions.map((v: { version: number }) => v.version);
    expect(listed).toEqual(Array.from({ length: 25 }, (_, i) => 25 - i));
    // Each write carried the latest expectations forward.
    const latest = (await svc.call('GET', `${path}?agent_name=busy`)).body.versions[0];
    expect((await svc.call('GET', `${path}/${latest.artifact_version_id}`)).body.expectations).toBe('e0');

    // Concurrent writers that all claim the same base: exactly one wins, the rest conflict.
    const racing = await Promise.all(
      Array.from({ length: 6 }, () => svc.call('POST', path, { body: { agent_name: 'busy', understanding: 'race', based_on_version: 25 } })),
    );
    expect(racing.filter((r) => r.status === 201)).toHaveLength(1);
    expect(racing.filter((r) => r.status === 409 && r.body.code === 'version_conflict')).toHaveLength(5);
  });

  it('is append-only in the store too', async () => {
    const project = await svc.newProject('artifacts-append-only');
    const v = await svc.call('POST', versionsPath(project.id), { body: { agent_name: 'a', understanding: 'u', expectations: 'e' } });
    await expect(svc.service.deps.sql`update artifact_versions set understanding = 'changed' where id = ${v.body.artifact_version_id}`).rejects.toThrow(/append-only/);
  });

  it('validates input field by field', async () => {
    const project = await svc.newProject('artifacts-bad');
    const cases: [unknown, RegExp][] = [
      [{}, /agent_name is required/],
      [{ agent_name: '' }, /agent_name/],
      [{ agent_name: '   ', understanding: 'u', expectations: 'e' }, /agent_name: must not be blank/],
      [{ agent_name: 'a', understanding: 1, expectations: 'e' }, /understanding: must be string/],
      [{ agent_name: 'a', understanding: 'u', expectations: 'e', based_on_version: -1 }, /based_on_version/],
      [{ agent_name: 'a', understanding: 'u', expectations: 'e', based_on_version: 1.5 }, /based_on_version/],
      [{ agent_name: 'a', understanding: 'u', expectations: 'e', files: {} }, /unknown key 'files'/],
    ];
    for (const [body, detail] of cases) {
      const res = await svc.call('POST', versionsPath(project.id), { body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.code).toBe('validation_error');
      expect(res.body.detail).toMatch(detail);
    }
    expect((await svc.call('GET', `${versionsPath(project.id)}/not-a-uuid`)).status).toBe(404);
    expect((await svc.call('GET', `${versionsPath(project.id)}/00000000-0000-4000-8000-000000000000`)).body).toEqual({ code: 'not_found', detail: 'Version not found' });
  });

  it('isolates tenants and project-limited keys', async () => {
    const project = await svc.newProject('artifacts-isolated');
    const other = await svc.newProject('artifacts-other');
    const v = await svc.call('POST', versionsPath(project.id), { body: { agent_name: 'a', understanding: 'u', expectations: 'e' } });
    const intruder = await svc.newTenant('artifacts-intruder');
    for (const [method, path, body] of [
      ['POST', versionsPath(project.id), { agent_name: 'a', understanding: 'u' }],
      ['GET', versionsPath(project.id), undefined],
      ['GET', `${versionsPath(project.id)}/${v.body.artifact_version_id}`, undefined],
    ] as [string, string, unknown][]) {
      const res = await svc.call(method, path, { key: intruder.adminKey, body });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.body.code).toBe('not_found');
    }
    // A version id read through another project of the same tenant is not found.
    expect((await svc.call('GET', `${versionsPath(other.id)}/${v.body.artifact_version_id}`)).status).toBe(404);
    const limited = await svc.newKey('admin', { projectId: other.id });
    expect((await svc.call('GET', versionsPath(project.id), { key: limited })).status).toBe(404);
    const read = await svc.newKey('read');
    expect((await svc.call('GET', versionsPath(project.id), { key: read })).status).toBe(200);
    expect((await svc.call('POST', versionsPath(project.id), { key: read, body: { agent_name: 'a', understanding: 'u' } })).status).toBe(403);
  });

  it('lists every route in the OpenAPI document', async () => {
    const doc = (await svc.call('GET', '/openapi.json')).body;
    expect(doc.paths['/projects/{project_id}/artifacts/versions'].post.requestBody).toBeDefined();
    expect(doc.paths['/projects/{project_id}/artifacts/versions'].get).toBeDefined();
    expect(doc.paths['/projects/{project_id}/artifacts/versions/{version_id}'].get).toBeDefined();
  });
});

async function tenantOf(projectId: string): Promise<string> {
  const [row] = await svc.service.deps.sql<{ tenant_id: string }[]>`select tenant_id from projects where id = ${projectId}`;
  return row.tenant_id;
}
