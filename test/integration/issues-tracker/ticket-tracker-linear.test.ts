import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../../helpers/service.js';
import { newIssue } from '../issues/issue-test-helpers.js';
import { startLinearStandIn, type LinearStandIn } from './linear-stand-in.js';

let svc: TestService;
let linear: LinearStandIn;
let tenantKey: string;
let tenantId: string;
let projectId: string;

beforeAll(async () => {
  linear = await startLinearStandIn();
  svc = await startTestService({ LINEAR_API_URL: linear.url, LOOKOUT_SECRET_KEY: 'test-secret-key-for-tracker-credentials' });
  const tenant = await svc.newTenant('linear-tenant');
  tenantKey = tenant.adminKey;
  tenantId = tenant.tenantId;
  projectId = (await svc.newProject('linear', tenantKey)).id;
});
afterAll(async () => {
  await svc?.stop();
  await linear?.close();
});

const call = (method: string, path: string, body?: unknown) => svc.call(method, path, { key: tenantKey, body });

async function previewAndLink(issueId: string) {
  const preview = await call('POST', `/issues/${issueId}/tracker-ticket/preview`, {});
  expect(preview.status, JSON.stringify(preview.body)).toBe(200);
  return { preview: preview.body, put: () => call('PUT', `/issues/${issueId}/tracker-ticket`, { preview_token: preview.body.preview_token }) };
}

describe('linear ticket tracker (against a local stand-in)', () => {
  it('checks the key and team, stores the key encrypted and never returns it', async () => {
    const wrongKey = await call('PUT', '/integrations/ticket-tracker', { provider: 'linear', api_key: 'lin_api_wrong', team_id: 'team-eng' });
    expect(wrongKey.status).toBe(502);
    expect(wrongKey.body).toEqual({ detail: expect.stringMatching(/Linear rejected the API key/), code: 'tracker_error' });
    const wrongTeam = await call('PUT', '/integrations/ticket-tracker', { provider: 'linear', api_key: linear.apiKey, team_id: 'team-nope' });
    expect(wrongTeam.status).toBe(502);
    expect(wrongTeam.body.detail).toMatch(/not found/i);
    expect((await call('GET', '/integrations/ticket-tracker')).body.provider).toBe('local');

    const set = await call('PUT', '/integrations/ticket-tracker', { provider: 'linear', api_key: linear.apiKey, team_id: 'team-eng' });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({ provider: 'linear', team_id: 'team-eng', team_key: 'ENG', team_name: 'Engineering', api_key_configured: true, sync_status: 'healthy' });
    expect(JSON.stringify(set.body)).not.toContain(linear.apiKey);
    const got = await call('GET', '/integrations/ticket-tracker');
    expect(got.body).toEqual(set.body);
    expect(JSON.stringify(got.body)).not.toContain(linear.apiKey);
    const [stored] = await svc.service.deps.sql<{ api_key_encrypted: string }[]>`select api_key_encrypted from ticket_trackers where tenant_id = ${tenantId}`;
    expect(stored.api_key_encrypted.startsWith('v1.')).toBe(true);
    expect(stored.api_key_encrypted).not.toContain(linear.apiKey);
    expect(stored.api_key_encrypted).not.toContain(Buffer.from(linear.apiKey).toString('base64'));

    // Omitting api_key keeps the stored one (it is decrypted and checked again).
    const kept = await call('PUT', '/integrations/ticket-tracker', { provider: 'linear', team_id: 'team-eng' });
    expect(kept.status).toBe(200);
    expect(linear.requests.at(-1)).toMatchObject({ operation: 'LookoutTeam', authorization: linear.apiKey });
  });

  it('creates the ticket in Linear and returns the full link object', async () => {
    const issue = await newIssue(svc, projectId, { title: 'Search tool times out' }, tenantKey);
    const { preview, put } = await previewAndLink(issue.id);
    expect(preview.ticket).toMatchObject({ provider: 'linear', team_id: 'team-eng', team_key: 'ENG', team_name: 'Engineering', title: 'Search tool times out' });
    const linked = await put();
    expect(linked.status, JSON.stringify(linked.body)).toBe(201);
    const ticket = linked.body.link.ticket;
    expect(ticket).toMatchObject({
      identifier: expect.stringMatching(/^ENG-\d+$/), title: 'Search tool times out', team_id: 'team-eng', team_name: 'Engineering', team_key: 'ENG',
      tracker_project_id: 'proj-1', tracker_project_name: 'Reliability', state_id: 'state-backlog', state_name: 'Backlog', state_type: 'backlog',
      tracker_assignee: null,
    });
    expect(ticket.url).toBe(`https://linear.app/acme/issue/${ticket.identifier}`);
    expect(linked.body.link).toMatchObject({ origin: 'created', sync_status: 'healthy' });
    expect(linked.body.activity.map((a: { type: string }) => a.type)).toEqual(['ticket_created']);
    const create = linear.requests.find((r) => r.operation === 'LookoutIssueCreate' && r.variables.input.id === ticket.id)!;
    expect(create.authorization).toBe(linear.apiKey);
    expect(create.variables.input).toMatchObject({ teamId: 'team-eng', title: 'Search tool times out' });
    expect(linear.issues.get(ticket.id)!.description).toContain(issue.id);

    // Linear moves the ticket; a sync reads it back.
    linear.issues.get(ticket.id)!.state = { id: 'state-started', name: 'In Progress', type: 'started' };
    linear.issues.get(ticket.id)!.assignee = { id: 'lin-user-1', name: 'Dana', avatarUrl: 'https://avatars.example/dana.png' };
    const synced = await call('POST', `/issues/${issue.id}/tracker-ticket/sync`);
    expect(synced.body.link.ticket).toMatchObject({
      state_id: 'state-started', state_name: 'In Progress', state_type: 'started',
      tracker_assignee: { id: 'lin-user-1', name: 'Dana', avatar_url: 'https://avatars.example/dana.png' },
    });
    expect(synced.body.activity.at(-1)).toMatchObject({ type: 'ticket_state_changed', metadata: { from: 'Backlog', to: 'In Progress' } });

    // A failing sync records the error on the link and keeps the last known ticket.
    linear.failNext('http500');
    const failed = await call('POST', `/issues/${issue.id}/tracker-ticket/sync`);
    expect(failed.status).toBe(502);
    expect(failed.body).toEqual({ detail: expect.stringMatching(/Linear answered HTTP 500/), code: 'tracker_error' });
    const after = (await call('GET', `/issues/${issue.id}/tracker-ticket`)).body;
    expect(after.link).toMatchObject({ sync_status: 'error', last_error_code: 'tracker_unavailable', last_error_message: expect.stringMatching(/HTTP 500/) });
    expect(new Date(after.link.last_error_at).getTime()).toBeGreaterThan(Date.now() - 60_000);
    expect(after.link.ticket.state_name).toBe('In Progress');
    expect(after.activity.at(-1)).toMatchObject({ type: 'ticket_sync_failed', metadata: { error_code: 'tracker_unavailable' } });
    const healed = await call('POST', `/issues/${issue.id}/tracker-ticket/sync`);
    expect(healed.body.link.sync_status).toBe('healthy');
    expect(healed.body.link.last_successful_sync_at > after.link.last_successful_sync_at).toBe(true);
  });

  it('a failing create answers a clear error, records it, links nothing, and the same token can retry', async () => {
    for (const [failure, code, detail] of [
      ['http500', 'tracker_unavailable', /HTTP 500/],
      ['graphql-error', 'tracker_rejected', /Something went wrong/],
      ['destroy', 'tracker_unreachable', /could not be reached/],
    ] as const) {
      const issue = await newIssue(svc, projectId, { title: `fails with ${failure}` }, tenantKey);
      const { put } = await previewAndLink(issue.id);
      const issuesBefore = linear.issues.size;
      linear.failNext(failure);
      const res = await put();
      expect(res.status, failure).toBe(502);
      expect(res.body.code).toBe('tracker_error');
      expect(res.body.detail).toMatch(detail);
      expect(linear.issues.size).toBe(issuesBefore);
      const view = (await call('GET', `/issues/${issue.id}/tracker-ticket`)).body;
      expect(view.link).toBeNull();
      expect(view.activity.map((a: { type: string }) => a.type)).toEqual(['ticket_create_failed']);
      expect(view.activity[0].metadata).toMatchObject({ provider: 'linear', error_code: code });
      const settings = (await call('GET', '/integrations/ticket-tracker')).body;
      expect(settings).toMatchObject({ sync_status: 'error', last_error_code: code, last_error_message: expect.stringMatching(detail) });
      expect(settings.last_error_at).not.toBeNull();

      const retried = await put();
      expect(retried.status, JSON.stringify(retried.body)).toBe(201);
      expect(linear.issues.size).toBe(issuesBefore + 1);
      expect((await call('GET', '/integrations/ticket-tracker')).body).toMatchObject({ sync_status: 'healthy', last_error_code: null });
    }
  });

  it('a create whose answer is lost is found on retry instead of duplicated', async () => {
    const issue = await newIssue(svc, projectId, { title: 'lost answer' }, tenantKey);
    const { preview, put } = await previewAndLink(issue.id);
    linear.failNext('drop-after-create');
    expect((await put()).status).toBe(502);
    const created = [...linear.issues.values()].filter((i) => i.title === 'lost answer');
    expect(created).toHaveLength(1);
    expect((await call('GET', `/issues/${issue.id}/tracker-ticket`)).body.link).toBeNull();
    const retried = await put();
    expect(retried.status).toBe(201);
    expect(retried.body.link.ticket.id).toBe(created[0].id);
    expect([...linear.issues.values()].filter((i) => i.title === 'lost answer')).toHaveLength(1);
    expect(preview.ticket.title).toBe('lost answer');
  });

  it('a key that no longer decrypts (secret key changed) is reported, not sent', async () => {
    const issue = await newIssue(svc, projectId, { title: 'unreadable key' }, tenantKey);
    const { put } = await previewAndLink(issue.id);
    await svc.service.deps.sql`update ticket_trackers set api_key_encrypted = 'v1.deadbeef.x.y.z' where tenant_id = ${tenantId}`;
    const before = linear.requests.length;
    const res = await put();
    expect(res.status).toBe(502);
    expect(res.body.detail).toMatch(/cannot be decrypted/);
    expect(linear.requests.length).toBe(before);
    expect((await call('GET', `/issues/${issue.id}/tracker-ticket`)).body.link).toBeNull();
  });
});
