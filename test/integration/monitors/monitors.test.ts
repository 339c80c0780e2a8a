import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../../helpers/service.js';

let svc: TestService;

beforeAll(async () => {
  svc = await startTestService();
});
afterAll(async () => {
  await svc?.stop();
});

const MONITOR_KEYS = ['created_at', 'exploration_status', 'id', 'kind', 'name', 'project_id', 'updated_at'];
const monitorsPath = (projectId: string) => `/projects/${projectId}/monitors`;

describe('monitors', () => {
  it('creates a signal monitor (the default kind) that starts learning and never returns its guidance', async () => {
    const project = await svc.newProject('monitors-signal');
    const res = await svc.call('POST', monitorsPath(project.id), {
      body: { name: ' Refund trouble ', seed_hint: 'refund; order.status=cancelled', expected_behavior: 'refund issued' },
    });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(MONITOR_KEYS);
    expect(res.body).toMatchObject({ project_id: project.id, kind: 'signal', name: 'Refund trouble', exploration_status: 'learning' });
    expect(new Date(res.body.created_at).toISOString()).toBe(res.body.created_at);
    expect(res.body.updated_at).toBe(res.body.created_at);
    const got = await svc.call('GET', `/monitors/${res.body.id}`);
    expect(got.body).toEqual(res.body);
    expect(JSON.stringify(got.body)).not.toMatch(/refund;|issued/);
    const [row] = await svc.service.deps.sql<{ seed_hint: string; expected_behavior: string; signal: unknown }[]>`
      select seed_hint, expected_behavior, signal from monitors where id = ${res.body.id}`;
    expect(row).toEqual({
      seed_hint: 'refund; order.status=cancelled',
      expected_behavior: 'refund issued',
      signal: {
        kind: 'signal',
        seed: [{ type: 'phrase', text: 'refund' }, { type: 'attribute', key: 'order.status', op: 'eq', value: 'cancelled' }],
        expected: [{ type: 'phrase', text: 'refund issued' }],
      },
    });
  });

  it('creates tool monitors from object or string issue criteria', async () => {
    const project = await svc.newProject('monitors-tool');
    const object = await svc.call('POST', monitorsPath(project.id), {
      body: { name: 'Search failures', kind: 'tool', tool_name: 'search', issue_criteria: { error: true, output_patterns: ['No Results'] } },
    });
    expect(object.status).toBe(201);
    expect(object.body).toMatchObject({ kind: 'tool', exploration_status: 'learning' });
    const text = await svc.call('POST', monitorsPath(project.id), {
      body: { name: 'Lookup timeouts', kind: 'tool', tool_name: 'lookup', issue_criteria: 'timed out, "rate limit"', seed_hint: 'slow lookups' },
    });
    expect(text.status).toBe(201);
    const rows = await svc.service.deps.sql<{ name: string; signal: unknown }[]>`
      select name, signal from monitors where project_id = ${project.id} order by created_at`;
    expect(rows.map((r) => r.signal)).toEqual([
      { kind: 'tool', tool_name: 'search', error: true, output_patterns: ['no results'] },
      { kind: 'tool', tool_name: 'lookup', error: true, output_patterns: ['timed out', 'rate limit'] },
    ]);
    const errorsOff = await svc.call('POST', monitorsPath(project.id), {
      body: { name: 'Empty answers', kind: 'tool', tool_name: 'search', issue_criteria: { error: false, output_patterns: ['[]'] } },
    });
    expect(errorsOff.status).toBe(201);
  });

  it('answers the three error bodies: 400 validation_error, 404 not_found, 409 conflict', async () => {
    const project = await svc.newProject('monitors-errors');
    const path = monitorsPath(project.id);
    const cases: [unknown, RegExp][] = [
      [{}, /^name is required$/],
      [{ name: '   ' }, /name: must not be blank/],
      [{ name: 'x', kind: 'metric' }, /kind: must be one of signal, tool/],
      [{ name: 'x', kind: 'tool' }, /tool_name is required for a tool monitor/],
      [{ name: 'x', kind: 'tool', tool_name: 'search' }, /issue_criteria is required for a tool monitor/],
      [{ name: 'x', kind: 'tool', tool_name: '  ', issue_criteria: 'x' }, /tool_name is required/],
      [{ name: 'x', kind: 'tool', tool_name: 'search', issue_criteria: { error: false } }, /issue_criteria: give output_patterns/],
      [{ name: 'x', kind: 'tool', tool_name: 'search', issue_criteria: { errors: true } }, /issue_criteria/],
      [{ name: 'x', kind: 'tool', tool_name: 'search', issue_criteria: 5 }, /issue_criteria/],
      [{ name: 'x', tool_name: 'search' }, /tool_name: only tool monitors/],
      [{ name: 'x', issue_criteria: 'boom' }, /issue_criteria: only tool monitors/],
      [{ name: 'x', seed_hint: 'order.status=' }, /seed_hint: 'order.status=' needs a value/],
      [{ name: 'x', seed_hint: 'x'.repeat(5001) }, /seed_hint/],
      [{ name: 'x', expected_behavior: 3 }, /expected_behavior/],
      [{ name: 'x', threshold: 3 }, /unknown key 'threshold'/],
    ];
    for (const [body, detail] of cases) {
      const res = await svc.call('POST', path, { body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.code).toBe('validation_error');
      expect(res.body.detail).toMatch(detail);
    }
    expect((await svc.call('POST', path, { rawBody: '{"name":' })).body).toEqual({ detail: 'Malformed JSON body', code: 'validation_error' });

    const first = await svc.call('POST', path, { body: { name: 'Checkout' } });
    const taken = await svc.call('POST', path, { body: { name: ' checkout ' } });
    expect(taken.status).toBe(409);
    expect(taken.body).toEqual({ code: 'conflict', detail: "A monitor named 'checkout' already exists in this project" });
    // The same name in another project is fine.
    const other = await svc.newProject('monitors-errors-other');
    expect((await svc.call('POST', monitorsPath(other.id), { body: { name: 'Checkout' } })).status).toBe(201);

    const second = await svc.call('POST', path, { body: { name: 'Payments' } });
    const rename = await svc.call('PATCH', `/monitors/${second.body.id}`, { body: { name: 'CHECKOUT' } });
    expect(rename.status).toBe(409);
    expect(rename.body.code).toBe('conflict');

    const unknown = await svc.call('GET', '/monitors/00000000-0000-4000-8000-000000000000');
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ code: 'not_found', detail: 'Monitor not found' });
    expect((await svc.call('GET', '/monitors/nope')).status).toBe(404);
    expect((await svc.call('POST', monitorsPath('00000000-0000-4000-8000-000000000000'), { body: { name: 'x' } })).status).toBe(404);
    expect((await svc.call('GET', `/monitors/${first.body.id}`)).status).toBe(200);
  });

  it('lists, renames, pauses, resumes and deletes', async () => {
    const project = await svc.newProject('monitors-lifecycle');
    const a = (await svc.call('POST', monitorsPath(project.id), { body: { name: 'A' } })).body;
    const b = (await svc.call('POST', monitorsPath(project.id), { body: { name: 'B', kind: 'tool', tool_name: 't', issue_criteria: { error: true } } })).body;
    const list = await svc.call('GET', monitorsPath(project.id));
    expect(list.status).toBe(200);
    expect(list.body).toEqual({ monitors: [a, b] });

    const renamed = await svc.call('PATCH', `/monitors/${a.id}`, { body: { name: 'A renamed' } });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ id: a.id, name: 'A renamed', exploration_status: 'learning', created_at: a.created_at });
    expect(renamed.body.updated_at >= a.updated_at).toBe(true);

    const paused = await svc.call('PATCH', `/monitors/${a.id}`, { body: { exploration_status: 'paused' } });
    expect(paused.body.exploration_status).toBe('paused');
    // A monitor without a baseline cannot be made active; resuming returns it to learning.
    const early = await svc.call('PATCH', `/monitors/${a.id}`, { body: { exploration_status: 'active' } });
    expect(early.status).toBe(409);
    expect(early.body).toEqual({ code: 'conflict', detail: 'The monitor has not finished learning: it has no baseline yet' });
    const resumed = await svc.call('PATCH', `/monitors/${a.id}`, { body: { paused: false } });
    expect(resumed.body.exploration_status).toBe('learning');
    expect((await svc.call('PATCH', `/monitors/${a.id}`, { body: { paused: true, name: 'A paused' } })).body).toMatchObject({ exploration_status: 'paused', name: 'A paused' });

    for (const [body, detail] of [
      [{}, /Give name, exploration_status or paused/],
      [{ exploration_status: 'done' }, /exploration_status: must be one of learning, active, paused/],
      [{ exploration_status: 'paused', paused: false }, /disagree/],
      [{ name: '' }, /name/],
      [{ kind: 'tool' }, /unknown key 'kind'/],
    ] as [unknown, RegExp][]) {
      const res = await svc.call('PATCH', `/monitors/${a.id}`, { body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.detail).toMatch(detail);
    }

    expect((await svc.call('DELETE', `/monitors/${a.id}`)).status).toBe(204);
    expect((await svc.call('GET', `/monitors/${a.id}`)).status).toBe(404);
    expect((await svc.call('DELETE', `/monitors/${a.id}`)).status).toBe(404);
    expect((await svc.call('GET', monitorsPath(project.id))).body.monitors.map((m: { id: string }) => m.id)).toEqual([b.id]);
  });

  it('isolates tenants and project-limited keys, and enforces scopes', async () => {
    const project = await svc.newProject('monitors-isolated');
    const other = await svc.newProject('monitors-isolated-other');
    const monitor = (await svc.call('POST', monitorsPath(project.id), { body: { name: 'Mine' } })).body;
    const intruder = await svc.newTenant('monitors-intruder');
    const limited = await svc.newKey('admin', { projectId: other.id });
    for (const key of [intruder.adminKey, limited]) {
      for (const [method, path, body] of [
        ['GET', monitorsPath(project.id), undefined],
        ['POST', monitorsPath(project.id), { name: 'x' }],
        ['GET', `/monitors/${monitor.id}`, undefined],
        ['PATCH', `/monitors/${monitor.id}`, { name: 'stolen' }],
        ['DELETE', `/monitors/${monitor.id}`, undefined],
      ] as [string, string, unknown][]) {
        const res = await svc.call(method, path, { key, body });
        expect(res.status, `${method} ${path}`).toBe(404);
        expect(res.body.code).toBe('not_found');
      }
    }
    const ownLimited = await svc.newKey('read', { projectId: project.id });
    expect((await svc.call('GET', `/monitors/${monitor.id}`, { key: ownLimited })).status).toBe(200);
    expect((await svc.call('PATCH', `/monitors/${monitor.id}`, { key: ownLimited, body: { name: 'x' } })).status).toBe(403);
    expect((await svc.call('POST', monitorsPath(project.id), { key: ownLimited, body: { name: 'x' } })).status).toBe(403);
    expect((await svc.call('GET', `/monitors/${monitor.id}`)).body).toEqual(monitor);
  });

  it('lists every route in the OpenAPI document', async () => {
    const paths = (await svc.call('GET', '/openapi.json')).body.paths;
    expect(Object.keys(paths['/projects/{project_id}/monitors']).sort()).toEqual(['get', 'post']);
    expect(Object.keys(paths['/monitors/{monitor_id}']).sort()).toEqual(['delete', 'get', 'patch']);
  });
});
