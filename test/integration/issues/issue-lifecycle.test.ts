import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../../helpers/service.js';
import { newIssue, settledIssueEvents, userWithKey } from './issue-test-helpers.js';

let svc: TestService;
let projectId: string;
let alice: { userId: string; key: string; keyId: string };

beforeAll(async () => {
  svc = await startTestService();
  projectId = (await svc.newProject('issues')).id;
  alice = await userWithKey(svc, 'alice');
});
afterAll(async () => {
  await svc?.stop();
});

const ISSUE_KEYS = ['assignee_user_id', 'created_at', 'description', 'fingerprint', 'first_seen_at', 'flagged', 'id', 'last_seen_at',
  'occurrence_count', 'occurrences_deleted_at', 'project_id', 'status', 'tags', 'title', 'updated_at'];

describe('issue records', () => {
  it('creates and reads an issue with every field, recording issue.created with the request actor', async () => {
    const created = await svc.call('POST', `/projects/${projectId}/issues`, { key: alice.key, body: { title: '  Refund tool times out ', description: 'seen by support' } });
    expect(created.status).toBe(201);
    expect(Object.keys(created.body).sort()).toEqual(ISSUE_KEYS);
    expect(created.body).toMatchObject({
      project_id: projectId, title: 'Refund tool times out', description: 'seen by support', status: 'open', assignee_user_id: null,
      fingerprint: null, flagged: false, first_seen_at: null, last_seen_at: null, occurrence_count: 0, tags: [],
    });
    const got = await svc.call('GET', `/issues/${created.body.id}`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(created.body);

    const events = await settledIssueEvents(svc, [created.body.id]);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      name: 'issue.created', actor: 'user', surface: 'api', user_id: alice.userId, api_key_id: alice.keyId, project_id: projectId,
    });
  });

  it('walks every transition, records exactly one event per change and none for repeats', async () => {
    const issue = await newIssue(svc, projectId, {}, alice.key);
    const id = issue.id;
    const step = async (path: string, expected: number) => {
      const res = await svc.call('PATCH', `/issues/${id}/${path}`, { key: alice.key });
      expect(res.status, `${path}: ${JSON.stringify(res.body)}`).toBe(expected);
      return res.body;
    };
    expect(await step('start-review', 200)).toEqual({ project_id: projectId, status: 'in_progress', assignee_user_id: alice.userId });
    expect(await step('start-review', 200)).toEqual({ project_id: projectId, status: 'in_progress', assignee_user_id: alice.userId });
    expect((await step('resolve', 200)).status).toBe('resolved');
    expect((await step('resolve', 200)).status).toBe('resolved');
    expect(await step('start-review', 409)).toEqual({ detail: expect.stringMatching(/resolved/), code: 'issue_terminal_conflict' });
    expect((await step('dismiss', 409)).code).toBe('issue_terminal_conflict');
    const reopened = await step('reopen', 200);
    expect(reopened).toMatchObject({ status: 'open', assignee_user_id: alice.userId });
    expect((await step('reopen', 200)).status).toBe('open');
    expect((await step('dismiss', 200)).status).toBe('dismissed');
    expect((await step('start-review', 409)).code).toBe('issue_terminal_conflict');
    expect((await step('resolve', 409)).code).toBe('issue_terminal_conflict');
    expect((await step('reopen', 200)).status).toBe('open');
    expect((await step('flag', 200)).flagged).toBe(true);
    expect((await step('flag', 200)).flagged).toBe(true);
    expect((await step('unflag', 200)).flagged).toBe(false);
    expect((await step('unflag', 200)).flagged).toBe(false);
    const chat = await svc.call('POST', `/issues/${id}/chat`, { key: alice.key, body: { message: 'looking into it' } });
    expect(chat.status).toBe(201);
    expect(chat.body).toMatchObject({ issue_id: id, user_id: alice.userId, api_key_id: alice.keyId, message: 'looking into it' });
    const messages = await svc.call('GET', `/issues/${id}/chat`);
    expect(messages.body.messages.map((m: { message: string }) => m.message)).toEqual(['looking into it']);

    const events = await settledIssueEvents(svc, [id]);
    expect(events.map((e) => e.name).sort()).toEqual([
      'issue.chat_sent', 'issue.created', 'issue.dismissed', 'issue.flagged', 'issue.reopened', 'issue.reopened',
      'issue.resolved', 'issue.review_started', 'issue.unflagged',
    ]);
    for (const e of events) expect(e).toMatchObject({ actor: 'user', surface: 'api', user_id: alice.userId, api_key_id: alice.keyId });
    expect(new Set(events.map((e) => e.event_id)).size).toBe(events.length);
  });

  it('start-review keeps an existing assignee and answers 404 for unknown issues', async () => {
    const bob = await userWithKey(svc, 'bob');
    const issue = await newIssue(svc, projectId, { assignee_user_id: bob.userId });
    const res = await svc.call('PATCH', `/issues/${issue.id}/start-review`, { key: alice.key });
    expect(res.body).toEqual({ project_id: projectId, status: 'in_progress', assignee_user_id: bob.userId });
    expect((await svc.call('PATCH', '/issues/00000000-0000-4000-8000-000000000000/start-review')).status).toBe(404);
    expect((await svc.call('PATCH', '/issues/not-a-uuid/start-review')).body).toMatchObject({ code: 'not_found' });
  });

  it('patches title, description, assignee and flagged; flagged records its event', async () => {
    const issue = await newIssue(svc, projectId);
    const patched = await svc.call('PATCH', `/issues/${issue.id}`, { key: alice.key, body: { title: 'Renamed', description: null, assignee_user_id: alice.userId, flagged: true } });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ title: 'Renamed', description: null, assignee_user_id: alice.userId, flagged: true, status: 'open' });
    const unassigned = await svc.call('PATCH', `/issues/${issue.id}`, { body: { assignee_user_id: null } });
    expect(unassigned.body).toMatchObject({ assignee_user_id: null, title: 'Renamed', flagged: true });
    const events = await settledIssueEvents(svc, [issue.id]);
    expect(events.map((e) => e.name).sort()).toEqual(['issue.created', 'issue.flagged']);
  });

  it('answers 400 validation_error for every bad body', async () => {
    const issue = await newIssue(svc, projectId);
    const cases: [string, string, unknown, RegExp][] = [
      ['POST', `/projects/${projectId}/issues`, {}, /title is required/],
      ['POST', `/projects/${projectId}/issues`, { title: '   ' }, /title: must not be blank/],
      ['POST', `/projects/${projectId}/issues`, { title: 'x', status: 'resolved' }, /unknown key 'status'/],
      ['POST', `/projects/${projectId}/issues`, { title: 5 }, /title/],
      ['POST', `/projects/${projectId}/issues`, { title: 'x', assignee_user_id: 'bob' }, /assignee_user_id/],
      ['POST', `/projects/${projectId}/issues`, { title: 'x', assignee_user_id: '00000000-0000-4000-8000-000000000000' }, /unknown user/],
      ['POST', `/projects/${projectId}/issues`, { title: 'x', flagged: 'yes' }, /flagged/],
      ['PATCH', `/issues/${issue.id}`, {}, /body/],
      ['PATCH', `/issues/${issue.id}`, { status: 'resolved' }, /unknown key 'status'/],
      ['PATCH', `/issues/${issue.id}`, { title: '' }, /title/],
      ['PATCH', `/issues/${issue.id}`, { description: 7 }, /description/],
      ['POST', `/issues/${issue.id}/chat`, {}, /message is required/],
      ['POST', `/issues/${issue.id}/chat`, { message: '  ' }, /must not be blank/],
      ['POST', `/issues/${issue.id}/chat`, { message: 'hi', to: 'x' }, /unknown key 'to'/],
      ['POST', '/issues/tags', { project_id: projectId, name: 'x' }, /color is required/],
      ['POST', '/issues/tags', { project_id: projectId, name: 'x', color: 'not a colour!' }, /color/],
      ['POST', '/issues/tags', { project_id: projectId, name: ' ', color: 'red' }, /name: must not be blank/],
      ['POST', '/issues/tags', { project_id: projectId, name: 'x', color: 'red', extra: 1 }, /unknown key 'extra'/],
    ];
    for (const [method, path, body, detail] of cases) {
      const res = await svc.call(method, path, { body });
      expect(res.status, `${method} ${path} ${JSON.stringify(body)}: ${JSON.stringify(res.body)}`).toBe(400);
      expect(res.body.code).toBe('validation_error');
      expect(res.body.detail).toMatch(detail);
    }
    const malformed = await svc.call('POST', `/projects/${projectId}/issues`, { rawBody: '{"title":' });
    expect(malformed.body).toEqual({ detail: 'Malformed JSON body', code: 'validation_error' });
  });
});

describe('issue list', () => {
  it('filters by status, tag, assignee and flagged, and pages with a cursor', async () => {
    const project = (await svc.newProject('list')).id;
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await newIssue(svc, project, { title: `issue ${i}` })).id);
    await svc.call('PATCH', `/issues/${ids[0]}/resolve`);
    await svc.call('PATCH', `/issues/${ids[1]}/start-review`, { key: alice.key });
    await svc.call('PATCH', `/issues/${ids[2]}/flag`);
    const tag = await svc.call('POST', '/issues/tags', { body: { project_id: project, name: 'billing', color: '#ff0000' } });
    await svc.call('PUT', `/issues/${ids[3]}/tags/${tag.body.id}`);

    const list = async (query: string) => {
      const res = await svc.call('GET', `/projects/${project}/issues${query}`);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body;
    };
    const all = await list('');
    expect(all.issues.map((i: { id: string }) => i.id)).toEqual([...ids].reverse());
    expect(all.next_cursor).toBeNull();
    expect((await list('?status=resolved')).issues.map((i: { id: string }) => i.id)).toEqual([ids[0]]);
    expect((await list('?status=resolved,in_progress')).issues.map((i: { id: string }) => i.id)).toEqual([ids[1], ids[0]]);
    expect((await list(`?assignee=${alice.userId}`)).issues.map((i: { id: string }) => i.id)).toEqual([ids[1]]);
    expect((await list('?assignee=none')).issues).toHaveLength(4);
    expect((await list('?flagged=true')).issues.map((i: { id: string }) => i.id)).toEqual([ids[2]]);
    expect((await list('?flagged=false')).issues).toHaveLength(4);
    const tagged = await list(`?tag=${tag.body.id}`);
    expect(tagged.issues.map((i: { id: string }) => i.id)).toEqual([ids[3]]);
    expect(tagged.issues[0].tags).toEqual([{ id: tag.body.id, name: 'billing', color: '#ff0000' }]);

    const seen: string[] = [];
    let cursor: string | null = '';
    while (cursor !== null) {
      const page: { issues: { id: string }[]; next_cursor: string | null } = await list(`?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.issues.length).toBeLessThanOrEqual(2);
      seen.push(...page.issues.map((i) => i.id));
      cursor = page.next_cursor;
    }
    expect(seen).toEqual([...ids].reverse());

    for (const bad of ['?status=closed', '?cursor=nonsense', '?limit=0', '?limit=1000', '?tag=x', '?assignee=me', '?flagged=maybe', '?order=asc']) {
      const res = await svc.call('GET', `/projects/${project}/issues${bad}`);
      expect(res.status, bad).toBe(400);
      expect(res.body.code).toBe('validation_error');
    }
  });
});

describe('tags', () => {
  it('creates, lists in normalized name order, attaches and detaches idempotently', async () => {
    const project = (await svc.newProject('tags')).id;
    const make = (name: string, color = 'blue') => svc.call('POST', '/issues/tags', { body: { project_id: project, name, color } });
    const zed = await make('zed');
    expect(zed.status).toBe(201);
    expect(Object.keys(zed.body).sort()).toEqual(['color', 'id', 'name']);
    await make('  Alpha ', '#0af');
    await make('beta');
    const dup = await make('ALPHA');
    expect(dup.status).toBe(409);
    expect(dup.body.code).toBe('conflict');
    const list = await svc.call('GET', `/issues/tags?project_id=${project}`);
    expect(list.body.tags.map((t: { name: string }) => t.name)).toEqual(['Alpha', 'beta', 'zed']);

    const issue = await newIssue(svc, project);
    for (let i = 0; i < 2; i++) {
      const put = await svc.call('PUT', `/issues/${issue.id}/tags/${zed.body.id}`);
      expect(put.status).toBe(200);
      expect(put.body).toEqual({ issue_id: issue.id, tags: [zed.body] });
    }
    for (let i = 0; i < 2; i++) {
      const del = await svc.call('DELETE', `/issues/${issue.id}/tags/${zed.body.id}`);
      expect(del.status).toBe(200);
      expect(del.body).toEqual({ issue_id: issue.id, tags: [] });
    }
    // A tag of another project cannot be attached.
    const otherTag = await svc.call('POST', '/issues/tags', { body: { project_id: projectId, name: 'elsewhere', color: 'red' } });
    expect((await svc.call('PUT', `/issues/${issue.id}/tags/${otherTag.body.id}`)).status).toBe(404);
    expect((await svc.call('PUT', `/issues/${issue.id}/tags/nope`)).status).toBe(404);
    // Without project_id only a project-limited key can list.
    const missing = await svc.call('GET', '/issues/tags');
    expect(missing.status).toBe(400);
    const limited = await svc.newKey('read', { projectId: project });
    const own = await svc.call('GET', '/issues/tags', { key: limited });
    expect(own.body.tags.map((t: { name: string }) => t.name)).toEqual(['Alpha', 'beta', 'zed']);
    expect((await svc.call('GET', `/issues/tags?project_id=${projectId}`, { key: limited })).status).toBe(404);
  });
});

describe('isolation', () => {
  it('hides issues of other tenants and of projects outside a project-limited key', async () => {
    const issue = await newIssue(svc, projectId);
    const tag = await svc.call('POST', '/issues/tags', { body: { project_id: projectId, name: 'iso', color: 'red' } });
    const other = await svc.newTenant('iso');
    const otherProject = (await svc.newProject('theirs', other.adminKey)).id;
    const limitedProject = (await svc.newProject('limited')).id;
    const limitedAdmin = await svc.newKey('admin', { projectId: limitedProject });
    const reader = await svc.newKey('read');

    for (const key of [other.adminKey, limitedAdmin]) {
      expect((await svc.call('GET', `/issues/${issue.id}`, { key })).status).toBe(404);
      expect((await svc.call('PATCH', `/issues/${issue.id}`, { key, body: { title: 'x' } })).status).toBe(404);
      for (const t of ['start-review', 'resolve', 'dismiss', 'reopen', 'flag', 'unflag']) {
        const res = await svc.call('PATCH', `/issues/${issue.id}/${t}`, { key });
        expect(res.status, t).toBe(404);
        expect(res.body.code).toBe('not_found');
      }
      expect((await svc.call('POST', `/issues/${issue.id}/chat`, { key, body: { message: 'x' } })).status).toBe(404);
      expect((await svc.call('GET', `/issues/${issue.id}/chat`, { key })).status).toBe(404);
      expect((await svc.call('GET', `/issues/${issue.id}/occurrences`, { key })).status).toBe(404);
      expect((await svc.call('PUT', `/issues/${issue.id}/tags/${tag.body.id}`, { key })).status).toBe(404);
      expect((await svc.call('DELETE', `/issues/${issue.id}/tags/${tag.body.id}`, { key })).status).toBe(404);
      expect((await svc.call('GET', `/projects/${projectId}/issues`, { key })).status).toBe(404);
      expect((await svc.call('POST', `/projects/${projectId}/issues`, { key, body: { title: 'x' } })).status).toBe(404);
      expect((await svc.call('GET', `/issues/tags?project_id=${projectId}`, { key })).status).toBe(404);
      expect((await svc.call('POST', '/issues/tags', { key, body: { project_id: projectId, name: 'x', color: 'red' } })).status).toBe(404);
    }
    // The other tenant sees only its own (empty) project.
    expect((await svc.call('GET', `/projects/${otherProject}/issues`, { key: other.adminKey })).body.issues).toEqual([]);
    // The project-limited key works inside its project.
    const mine = await svc.call('POST', `/projects/${limitedProject}/issues`, { key: limitedAdmin, body: { title: 'inside' } });
    expect(mine.status).toBe(201);
    expect((await svc.call('PATCH', `/issues/${mine.body.id}/start-review`, { key: limitedAdmin })).status).toBe(200);
    // A read key reads but does not change.
    expect((await svc.call('GET', `/issues/${issue.id}`, { key: reader })).status).toBe(200);
    const forbidden = await svc.call('PATCH', `/issues/${issue.id}/resolve`, { key: reader });
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.code).toBe('forbidden');
    expect((await svc.call('GET', `/issues/${issue.id}`, { key: null })).status).toBe(401);
    // Nothing above changed the issue.
    expect((await svc.call('GET', `/issues/${issue.id}`)).body).toMatchObject({ status: 'open', title: issue.title, flagged: false, tags: [] });
  });
});
