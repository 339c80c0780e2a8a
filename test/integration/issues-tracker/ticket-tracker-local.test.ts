import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../../helpers/service.js';
import { newIssue, userWithKey } from '../issues/issue-test-helpers.js';

let svc: TestService;
let projectId: string;
let alice: { userId: string; key: string; keyId: string };

beforeAll(async () => {
  svc = await startTestService();
  projectId = (await svc.newProject('tickets')).id;
  alice = await userWithKey(svc, 'Alice');
});
afterAll(async () => {
  await svc?.stop();
});

const LINK_KEYS = ['activity', 'issue_assignee_user_id', 'issue_id', 'link', 'project_id', 'pull_requests'];
const LINK_FIELDS = ['id', 'last_error_at', 'last_error_code', 'last_error_message', 'last_successful_sync_at', 'linked_at', 'origin', 'sync_status', 'ticket'];
const TICKET_FIELDS = ['id', 'identifier', 'state_id', 'state_name', 'state_type', 'team_id', 'team_key', 'team_name', 'title', 'tracker_assignee',
  'tracker_project_id', 'tracker_project_name', 'url'];

async function preview(issueId: string, body: Record<string, unknown> = {}, key?: string) {
  const res = await svc.call('POST', `/issues/${issueId}/tracker-ticket/preview`, { key, body });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

describe('local ticket tracker', () => {
  it('defaults to local and never shows a key', async () => {
    const res = await svc.call('GET', '/integrations/ticket-tracker');
    expect(res.body).toEqual({
      provider: 'local', team_id: 'local:LOC', team_key: 'LOC', team_name: 'Lookout', api_key_configured: false,
      sync_status: 'healthy', last_error_code: null, last_error_message: null, last_error_at: null, updated_at: null,
    });
  });

  it('previews, links with the full ticket link object, adds pull requests, syncs and unlinks', async () => {
    const issue = await newIssue(svc, projectId, { title: 'Checkout agent loops', description: 'loops on payment', assignee_user_id: alice.userId });
    const draft = await preview(issue.id, {}, alice.key);
    expect(Object.keys(draft).sort()).toEqual(['expires_at', 'preview_token', 'ticket']);
    expect(draft.ticket).toMatchObject({ provider: 'local', title: 'Checkout agent loops', team_id: 'local:LOC', team_key: 'LOC', team_name: 'Lookout' });
    expect(draft.ticket.description).toContain('loops on payment');
    const ttl = new Date(draft.expires_at).getTime() - Date.now();
    expect(ttl).toBeGreaterThan(14 * 60_000);
    expect(ttl).toBeLessThanOrEqual(15 * 60_000);

    const linked = await svc.call('PUT', `/issues/${issue.id}/tracker-ticket`, { key: alice.key, body: { preview_token: draft.preview_token } });
    expect(linked.status, JSON.stringify(linked.body)).toBe(201);
    const body = linked.body;
    expect(Object.keys(body).sort()).toEqual(LINK_KEYS);
    expect(Object.keys(body.link).sort()).toEqual(LINK_FIELDS);
    expect(Object.keys(body.link.ticket).sort()).toEqual(TICKET_FIELDS);
    expect(body).toMatchObject({ project_id: projectId, issue_id: issue.id, issue_assignee_user_id: alice.userId, pull_requests: [] });
    expect(body.link).toMatchObject({ origin: 'created', sync_status: 'healthy', last_error_code: null, last_error_message: null, last_error_at: null });
    expect(body.link.last_successful_sync_at).toBe(body.link.linked_at);
    expect(body.link.ticket).toMatchObject({
      identifier: 'LOC-1', title: 'Checkout agent loops', team_id: 'local:LOC', team_key: 'LOC', team_name: 'Lookout',
      state_id: 'todo', state_name: 'Todo', state_type: 'unstarted', url: '/api/integrations/ticket-tracker/tickets/LOC-1',
      tracker_project_id: '', tracker_project_name: '', tracker_assignee: { id: alice.userId, name: 'Alice', avatar_url: '' },
    });
    expect(body.activity).toHaveLength(1);
    expect(body.activity[0]).toMatchObject({ type: 'ticket_created', actor_type: 'user', actor_id: alice.userId, ticket_identifier: 'LOC-1' });
    expect(Object.keys(body.activity[0]).sort()).toEqual(['actor_id', 'actor_type', 'id', 'metadata', 'occurred_at', 'ticket_identifier', 'type']);

    // A retry whose first answer was lost gets the same link; the token made only one ticket.
    const retry = await svc.call('PUT', `/issues/${issue.id}/tracker-ticket`, { body: { preview_token: draft.preview_token } });
    expect(retry.status).toBe(200);
    expect(retry.body.link).toEqual(body.link);
    expect((await svc.call('POST', `/issues/${issue.id}/tracker-ticket/preview`, { body: {} })).status).toBe(409);
    expect((await svc.call('GET', '/integrations/ticket-tracker/tickets/LOC-1')).body).toEqual(body.link.ticket);

    const pr = await svc.call('POST', `/issues/${issue.id}/pull-requests`, { body: { title: 'Stop the loop', url: 'https://github.com/acme/agent/pull/7' } });
    expect(pr.status).toBe(201);
    expect(Object.keys(pr.body).sort()).toEqual(['id', 'title', 'url']);
    const again = await svc.call('POST', `/issues/${issue.id}/pull-requests`, { body: { title: 'Stop the loop', url: 'https://github.com/acme/agent/pull/7' } });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(pr.body);

    await svc.call('PATCH', '/integrations/ticket-tracker/tickets/LOC-1', { body: { state: 'in_progress' } });
    const synced = await svc.call('POST', `/issues/${issue.id}/tracker-ticket/sync`);
    expect(synced.status).toBe(200);
    expect(synced.body.link.ticket).toMatchObject({ state_id: 'in_progress', state_name: 'In Progress', state_type: 'started' });
    expect(synced.body.link.sync_status).toBe('healthy');
    expect(synced.body.pull_requests).toEqual([pr.body]);
    expect(synced.body.activity.map((a: { type: string }) => a.type)).toEqual(['ticket_created', 'pull_request_added', 'ticket_state_changed']);

    const got = await svc.call('GET', `/issues/${issue.id}/tracker-ticket`);
    expect(got.body).toEqual(synced.body);

    const unlinked = await svc.call('DELETE', `/issues/${issue.id}/tracker-ticket`);
    expect(unlinked.status).toBe(200);
    expect(unlinked.body.link).toBeNull();
    expect(unlinked.body.activity.at(-1)).toMatchObject({ type: 'ticket_unlinked', ticket_identifier: 'LOC-1' });
    expect(unlinked.body.pull_requests).toEqual([pr.body]);
    const twice = await svc.call('DELETE', `/issues/${issue.id}/tracker-ticket`);
    expect(twice.body).toEqual(unlinked.body);
    expect((await svc.call('GET', `/issues/${issue.id}/tracker-ticket`)).body.link).toBeNull();

    // Linking again after the unlink makes a new ticket with the next number.
    const second = await preview(issue.id, { title: 'Checkout agent loops (again)' });
    const relinked = await svc.call('PUT', `/issues/${issue.id}/tracker-ticket`, { body: { preview_token: second.preview_token } });
    expect(relinked.body.link.ticket).toMatchObject({ identifier: 'LOC-2', title: 'Checkout agent loops (again)', tracker_assignee: { id: alice.userId } });
  });

  it('refuses unknown, foreign, replaced, used and expired preview tokens without linking', async () => {
    const a = await newIssue(svc, projectId, { title: 'token a' });
    const b = await newIssue(svc, projectId, { title: 'token b' });
    const put = (issueId: string, token: string) => svc.call('PUT', `/issues/${issueId}/tracker-ticket`, { body: { preview_token: token } });

    expect((await put(a.id, 'tkp_nonsense')).status).toBe(400);
    const pa = await preview(a.id);
    expect((await put(b.id, pa.preview_token)).status).toBe(400);
    const replaced = pa.preview_token;
    const pa2 = await preview(a.id);
    const old = await put(a.id, replaced);
    expect(old.status).toBe(400);
    expect(old.body.detail).toMatch(/preview_token/);

    await svc.service.deps.sql`update ticket_previews set expires_at = now() - interval '1 second' where issue_id = ${a.id}`;
    const expired = await put(a.id, pa2.preview_token);
    expect(expired.status).toBe(400);
    expect(expired.body).toEqual({ detail: 'preview_token has expired; request a new preview', code: 'validation_error' });
    expect((await svc.call('GET', `/issues/${a.id}/tracker-ticket`)).body.link).toBeNull();

    // Concurrent PUTs with one token: one link, one ticket.
    const pb = await preview(b.id);
    const results = await Promise.all(Array.from({ length: 5 }, () => put(b.id, pb.preview_token)));
    expect(results.map((r) => r.status).sort()).toEqual([200, 200, 200, 200, 201]);
    const identifiers = new Set(results.map((r) => r.body.link.ticket.identifier));
    expect(identifiers.size).toBe(1);
    const [{ n }] = await svc.service.deps.sql<{ n: number }[]>`select count(*)::int as n from local_tickets where title = 'token b'`;
    expect(n).toBe(1);
  });

  it('answers 400 for bad bodies and keeps tenants and projects apart', async () => {
    const issue = await newIssue(svc, projectId);
    const bad: [string, string, unknown][] = [
      ['PUT', `/issues/${issue.id}/tracker-ticket`, {}],
      ['PUT', `/issues/${issue.id}/tracker-ticket`, { preview_token: 'x', extra: 1 }],
      ['PUT', `/issues/${issue.id}/tracker-ticket`, { preview_token: 5 }],
      ['POST', `/issues/${issue.id}/tracker-ticket/preview`, { team: 'x' }],
      ['POST', `/issues/${issue.id}/tracker-ticket/preview`, { title: ' ' }],
      ['POST', `/issues/${issue.id}/pull-requests`, { title: 'x' }],
      ['POST', `/issues/${issue.id}/pull-requests`, { title: 'x', url: 'not a url' }],
      ['POST', `/issues/${issue.id}/pull-requests`, { title: 'x', url: 'ftp://example.com/pr/1' }],
      ['POST', `/issues/${issue.id}/pull-requests`, { title: ' ', url: 'https://example.com/pr/1' }],
      ['POST', `/issues/${issue.id}/pull-requests`, { title: 'x', url: 'https://example.com/pr/1', state: 'open' }],
      ['PUT', '/integrations/ticket-tracker', {}],
      ['PUT', '/integrations/ticket-tracker', { provider: 'jira' }],
      ['PUT', '/integrations/ticket-tracker', { provider: 'local', api_key: 'k' }],
      ['PUT', '/integrations/ticket-tracker', { provider: 'local', team_key: 'lower' }],
      ['PUT', '/integrations/ticket-tracker', { provider: 'linear', api_key: 'k' }],
      ['PUT', '/integrations/ticket-tracker', { provider: 'linear', team_id: 'team-eng' }],
      ['PUT', '/integrations/ticket-tracker', { provider: 'local', colour: 'x' }],
      ['PATCH', '/integrations/ticket-tracker/tickets/LOC-1', { state: 'closed' }],
    ];
    for (const [method, path, body] of bad) {
      const res = await svc.call(method, path, { body });
      expect(res.status, `${method} ${path} ${JSON.stringify(body)}: ${JSON.stringify(res.body)}`).toBe(400);
      expect(res.body.code).toBe('validation_error');
    }

    const other = await svc.newTenant('tickets-other');
    const limited = await svc.newKey('admin', { projectId: (await svc.newProject('elsewhere')).id });
    const reader = await svc.newKey('read');
    const token = (await preview(issue.id)).preview_token;
    for (const key of [other.adminKey, limited]) {
      expect((await svc.call('POST', `/issues/${issue.id}/tracker-ticket/preview`, { key, body: {} })).status).toBe(404);
      expect((await svc.call('PUT', `/issues/${issue.id}/tracker-ticket`, { key, body: { preview_token: token } })).status).toBe(404);
      expect((await svc.call('GET', `/issues/${issue.id}/tracker-ticket`, { key })).status).toBe(404);
      expect((await svc.call('DELETE', `/issues/${issue.id}/tracker-ticket`, { key })).status).toBe(404);
      expect((await svc.call('POST', `/issues/${issue.id}/tracker-ticket/sync`, { key })).status).toBe(404);
      expect((await svc.call('POST', `/issues/${issue.id}/pull-requests`, { key, body: { title: 'x', url: 'https://e.com/1' } })).status).toBe(404);
    }
    expect((await svc.call('GET', '/integrations/ticket-tracker/tickets/LOC-1', { key: other.adminKey })).status).toBe(404);
    expect((await svc.call('PUT', '/integrations/ticket-tracker', { key: limited, body: { provider: 'local' } })).status).toBe(403);
    expect((await svc.call('PUT', `/issues/${issue.id}/tracker-ticket`, { key: reader, body: { preview_token: token } })).status).toBe(403);
    expect((await svc.call('GET', `/issues/${issue.id}/tracker-ticket`, { key: reader })).status).toBe(200);
    // The token still works for its own tenant: nothing above consumed it.
    expect((await svc.call('PUT', `/issues/${issue.id}/tracker-ticket`, { body: { preview_token: token } })).status).toBe(201);
    expect((await svc.call('POST', `/issues/${(await newIssue(svc, projectId)).id}/tracker-ticket/sync`)).status).toBe(404);
  });

  it('local team key and name are settable', async () => {
    const tenant = await svc.newTenant('local-team');
    const project = (await svc.newProject('p', tenant.adminKey)).id;
    const set = await svc.call('PUT', '/integrations/ticket-tracker', { key: tenant.adminKey, body: { provider: 'local', team_key: 'OPS', team_name: 'Operations' } });
    expect(set.body).toMatchObject({ provider: 'local', team_id: 'local:OPS', team_key: 'OPS', team_name: 'Operations', api_key_configured: false });
    const issue = await newIssue(svc, project, {}, tenant.adminKey);
    const p = await preview(issue.id, {}, tenant.adminKey);
    const linked = await svc.call('PUT', `/issues/${issue.id}/tracker-ticket`, { key: tenant.adminKey, body: { preview_token: p.preview_token } });
    expect(linked.body.link.ticket).toMatchObject({ identifier: 'OPS-1', team_name: 'Operations', tracker_assignee: null });
    expect(linked.body.activity[0]).toMatchObject({ actor_type: 'user' });
  });
});
