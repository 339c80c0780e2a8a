import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { startTestService, type TestService } from '../../helpers/service.js';
import { WebhookDeliverer } from '../../../src/workspace/webhooks/webhook-deliverer.js';
import { secretBox } from '../../../src/app/secret-box-access.js';
import { sendRuns } from '../../helpers/otlp-json.js';
import { createEndpoint, deliveries, json, sleep, verifies } from './harness.js';
import { startReceiver, type Receiver } from './receiver.js';

/**
 * Webhook endpoints as a resource (admin scope, tenant and project isolation, validation, PATCH),
 * monitor.activated, and the delivery worker's isolation: a receiver that never answers delays no
 * other endpoint and holds no more than its per-endpoint share of attempts.
 */
let svc: TestService;
let receiver: Receiver;
let ingestKey: string;

beforeAll(async () => {
  receiver = await startReceiver();
  svc = await startTestService({ LOOKOUT_WEBHOOK_ALLOW_PRIVATE: '1', MONITOR_LEARNING_MIN_TRACES: '2', LOOKOUT_WEBHOOK_CONCURRENCY: '2' }, undefined, { harness: { webhookBackoffBaseMs: 5 } });
  ingestKey = await svc.newKey('ingest');
}, 120_000);

afterAll(async () => {
  await svc?.stop();
  await receiver?.close();
});

describe('webhook endpoints', () => {
  it('lists, reads and patches endpoints without ever returning the secret', async () => {
    const project = await svc.newProject('endpoint crud');
    const created = await createEndpoint(svc, project.id, { url: `${receiver.url}/crud`, events: ['issue.created'] });
    const { secret, ...endpoint } = created;
    expect(Object.keys(created).sort()).toEqual(['consecutive_give_ups', 'created_at', 'description', 'disabled_at', 'disabled_reason', 'enabled', 'events', 'format', 'id', 'project_id', 'secret', 'updated_at', 'url'].sort());
    const listed = await svc.call('GET', `/projects/${project.id}/webhooks`);
    expect(listed.body).toEqual({ webhooks: [endpoint] });
    expect((await svc.call('GET', `/webhooks/${created.id}`)).body).toEqual(endpoint);

    const patched = await svc.call('PATCH', `/webhooks/${created.id}`, { body: { events: ['*'], format: 'slack', description: '  team chat  ' } });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ events: ['*'], format: 'slack', description: 'team chat', url: `${receiver.url}/crud` });
    for (const answer of [listed, patched, await svc.call('GET', `/webhooks/${created.id}`)]) expect(JSON.stringify(answer.body)).not.toContain(secret);

    // Disabled: nothing is sent; enabled again: new events flow.
    expect((await svc.call('PATCH', `/webhooks/${created.id}`, { body: { enabled: false } })).body).toMatchObject({ enabled: false, disabled_reason: 'Disabled by a user' });
    await svc.call('POST', `/projects/${project.id}/issues`, { body: { title: 'while disabled' } });
    await sleep(800);
    expect(receiver.at('/crud')).toHaveLength(0);
    expect((await svc.call('PATCH', `/webhooks/${created.id}`, { body: { enabled: true } })).body).toMatchObject({ enabled: true, disabled_reason: null, disabled_at: null });
    await svc.call('POST', `/projects/${project.id}/issues`, { body: { title: 'after enabling' } });
    const [request] = await receiver.waitFor('/crud', 1);
    expect(json(request).text).toContain('after enabling');
    expect(verifies(secret, request)).toBe(true);

    expect((await svc.call('DELETE', `/webhooks/${created.id}`)).status).toBe(204);
    expect((await svc.call('GET', `/webhooks/${created.id}`)).status).toBe(404);
    expect((await svc.call('GET', `/webhooks/${created.id}/deliveries`)).status).toBe(404);
    expect((await svc.call('GET', `/projects/${project.id}/webhooks`)).body).toEqual({ webhooks: [] });
  });

  it('refuses bad endpoints with 400 validation_error naming the field', async () => {
    const project = await svc.newProject('endpoint validation');
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ url: `${receiver.url}/x`, events: [] }, /^events/],
      [{ url: `${receiver.url}/x`, events: ['issue.flagged'] }, /^events\.0: must be one of/],
      [{ url: `${receiver.url}/x`, events: ['issue.created', 'issue.created'] }, /^events/],
      [{ url: `${receiver.url}/x`, events: ['*'], format: 'xml' }, /^format/],
      [{ url: 'ftp://files.example/hook', events: ['*'] }, /^url: must be an http or https URL/],
      [{ url: 'not a url', events: ['*'] }, /^url: must be an absolute/],
      [{ url: 'https://user:pw@hooks.example.invalid/x', events: ['*'] }, /^url: must not contain credentials/],
      [{ url: `${receiver.url}/x`, events: ['*'], secret: 'whsec_mine' }, /unknown key 'secret'/],
      [{ events: ['*'] }, /url is required/],
    ];
    for (const [body, detail] of cases) {
      const res = await svc.call('POST', `/projects/${project.id}/webhooks`, { body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.code).toBe('validation_error');
      expect(res.body.detail).toMatch(detail);
    }
    const webhook = await createEndpoint(svc, project.id, { url: `${receiver.url}/x`, events: ['*'] });
    expect((await svc.call('PATCH', `/webhooks/${webhook.id}`, { body: {} })).status).toBe(400);
    expect((await svc.call('PATCH', `/webhooks/${webhook.id}`, { body: { url: 'gopher://x' } })).status).toBe(400);
    expect((await svc.call('GET', `/webhooks/${webhook.id}/deliveries?limit=0`)).status).toBe(400);
    expect((await svc.call('GET', '/webhooks/not-a-uuid')).status).toBe(404);
  });

  it('another tenant and a project-limited key get 404; a read key gets 403; a key limited to the project works', async () => {
    const project = await svc.newProject('endpoint access');
    const other = await svc.newProject('endpoint access other');
    const webhook = await createEndpoint(svc, project.id, { url: `${receiver.url}/access`, events: ['*'] });
    const b = await svc.newTenant('webhook tenant b');
    const limitedElsewhere = await svc.newKey('admin', { projectId: other.id });
    const limitedHere = await svc.newKey('admin', { projectId: project.id });
    const readKey = await svc.newKey('read');
    const calls: [string, string, unknown?][] = [
      ['GET', `/projects/${project.id}/webhooks`],
      ['POST', `/projects/${project.id}/webhooks`, { url: `${receiver.url}/b`, events: ['*'] }],
      ['GET', `/webhooks/${webhook.id}`],
      ['PATCH', `/webhooks/${webhook.id}`, { description: 'taken over' }],
      ['POST', `/webhooks/${webhook.id}/rotate-secret`],
      ['POST', `/webhooks/${webhook.id}/test`],
      ['GET', `/webhooks/${webhook.id}/deliveries`],
      ['DELETE', `/webhooks/${webhook.id}`],
    ];
    for (const [method, path, body] of calls) {
      for (const key of [b.adminKey, limitedElsewhere]) {
        const res = await svc.call(method, path, { key, body });
        expect(res.status, `${method} ${path}`).toBe(404);
        expect(res.body.code).toBe('not_found');
      }
      const read = await svc.call(method, path, { key: readKey, body });
      expect(read.status, `read key ${method} ${path}`).toBe(403);
    }
    expect(receiver.at('/access')).toHaveLength(0);
    expect((await svc.call('GET', `/webhooks/${webhook.id}`)).body.description).toBeNull();
    const mine = await svc.call('GET', `/projects/${project.id}/webhooks`, { key: limitedHere });
    expect(mine.body.webhooks.map((w: { id: string }) => w.id)).toEqual([webhook.id]);
    expect((await svc.call('GET', `/webhooks/${webhook.id}`, { key: limitedHere })).status).toBe(200);
  });
});

describe('webhook events and workers', () => {
  it('sends monitor.activated when a monitor leaves learning', async () => {
    const project = await svc.newProject('monitor activation');
    const webhook = await createEndpoint(svc, project.id, { url: `${receiver.url}/monitor`, events: ['monitor.activated'] });
    const monitor = await svc.call('POST', `/projects/${project.id}/monitors`, { body: { name: 'Refund tool', kind: 'tool', tool_name: 'refund', issue_criteria: { error: true } } });
    expect(monitor.status).toBe(201);
    const run = (ms: number) => ({ start: new Date(Date.now() - ms), agent: 'support', generations: [{ model: 'gpt-4o', input: 5, output: 5 }], tools: [{ name: 'refund' }] });
    await sendRuns(svc.url, ingestKey, project.id, [run(30_000), run(20_000)]);
    const [request] = await receiver.waitFor('/monitor', 1);
    expect(request.headers['lookout-event-type']).toBe('monitor.activated');
    expect(verifies(webhook.secret, request)).toBe(true);
    expect(json(request)).toMatchObject({
      type: 'monitor.activated',
      project_id: project.id,
      data: { monitor: { id: monitor.body.id, name: 'Refund tool', kind: 'tool', exploration_status: 'active', url: null } },
    });
    expect((await svc.call('GET', `/monitors/${monitor.body.id}`)).body.exploration_status).toBe('active');
    await sleep(500);
    expect(receiver.at('/monitor')).toHaveLength(1);
  });

  it('a receiver that never answers delays no other endpoint and holds at most its concurrency share, over two workers', async () => {
    // A second worker on the same database, as another service process would run one.
    const deps = svc.service.deps;
    const second = new WebhookDeliverer(deps.sql, secretBox(deps), { ...deps.config.webhooks, backoffBaseMs: deps.harness.webhookBackoffBaseMs!, publicUrl: null }, pino({ level: 'silent' }));
    second.start();
    const project = await svc.newProject('slow receiver');
    const dead = await createEndpoint(svc, project.id, { url: `${receiver.url}/dead`, events: ['issue.created'] });
    await createEndpoint(svc, project.id, { url: `${receiver.url}/alive`, events: ['issue.created'] });
    receiver.reply = (req) => (req.path === '/dead' ? { hang: true } : { status: 200 });
    for (let i = 0; i < 6; i++) await svc.call('POST', `/projects/${project.id}/issues`, { body: { title: `slow ${i}` } });
    // Generous under load; a receiver that blocked the worker would hold these 10 s per attempt.
    await receiver.waitFor('/alive', 6, 8_000);
    // LOOKOUT_WEBHOOK_CONCURRENCY=2: the dead receiver has at most two attempts open at a time,
    // counted over both workers, even after both had time to claim more.
    await sleep(1_500);
    expect(receiver.at('/dead').length).toBeGreaterThan(0);
    expect(receiver.at('/dead').length).toBeLessThanOrEqual(2);
    const log = await deliveries(svc, dead.id);
    expect(log.filter((d) => d.status === 'pending')).toHaveLength(6);
    await second.stop();
  });
});
