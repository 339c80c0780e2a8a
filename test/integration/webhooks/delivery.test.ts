import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OutboxRelay } from '../../../src/workspace/issues/outbox-relay.js';
import { startTestService, type TestService } from '../../helpers/service.js';
import { sendRuns } from '../../helpers/otlp-json.js';
import { createEndpoint, deliveries, eventually, json, sleep, verifies } from './harness.js';
import { startReceiver, type Receiver } from './receiver.js';

/**
 * A real receiver on 127.0.0.1 gets signed webhooks from the outbox — a failing
 * trace opens an issue (issue.created), resolving and a recurrence give issue.resolved and
 * issue.reopened; a 500 then a 200 delivers the same event twice with one Lookout-Event-Id and both
 * attempts in the log; Retry-After is honoured; the Slack format; the test route; secret rotation.
 * The backoff base is 5 ms here (the service's webhookBackoffBaseMs option), so retries come at once.
 */
const PUBLIC_URL = 'https://lookout.example.test';
let svc: TestService;
let receiver: Receiver;
let ingestKey: string;

beforeAll(async () => {
  receiver = await startReceiver();
  svc = await startTestService({
    LOOKOUT_WEBHOOK_ALLOW_PRIVATE: '1',
    LOOKOUT_PUBLIC_URL: `${PUBLIC_URL}/`,
  }, undefined, { harness: { webhookBackoffBaseMs: 5 } });
  ingestKey = await svc.newKey('ingest');
}, 120_000);

afterAll(async () => {
  await svc?.stop();
  await receiver?.close();
});

const failingRun = (start: Date) => ({ start, agent: 'billing-agent', generations: [{ model: 'gpt-4o', input: 10, output: 5 }], tools: [{ name: 'charge_card', error: true }], failed: false });

describe('webhooks: issue events from the outbox', () => {
  let projectId: string;
  let webhook: { id: string; secret: string };
  let issueId: string;

  it('a failing trace opens an issue and the receiver gets one signed issue.created', async () => {
    projectId = (await svc.newProject('webhook issues')).id;
    webhook = await createEndpoint(svc, projectId, { url: `${receiver.url}/issues`, events: ['issue.created', 'issue.resolved', 'issue.reopened'], description: 'on-call' });
    expect(webhook).toMatchObject({ project_id: projectId, format: 'json', description: 'on-call', enabled: true, disabled_reason: null });

    await sendRuns(svc.url, ingestKey, projectId, [failingRun(new Date(Date.now() - 60_000))]);
    const [request] = await receiver.waitFor('/issues', 1);
    expect(verifies(webhook.secret, request)).toBe(true);
    expect(verifies(`${webhook.secret}x`, request)).toBe(false);
    expect(request.headers['content-type']).toBe('application/json');
    expect(request.headers['lookout-event-type']).toBe('issue.created');
    const body = json(request);
    expect(Object.keys(body)).toEqual(['id', 'type', 'occurred_at', 'project_id', 'data']);
    expect(body.id).toBe(request.headers['lookout-event-id']);

    const { issues } = (await svc.call('GET', `/projects/${projectId}/issues`)).body;
    expect(issues).toHaveLength(1);
    issueId = issues[0].id;
    expect(body).toMatchObject({
      type: 'issue.created',
      project_id: projectId,
      data: {
        project: { id: projectId, name: 'webhook issues' },
        issue: {
          id: issueId, title: issues[0].title, status: 'open', fingerprint: issues[0].fingerprint, occurrence_count: 1,
          first_seen_at: issues[0].first_seen_at, last_seen_at: issues[0].last_seen_at, url: `${PUBLIC_URL}/p/${projectId}/issues/${issueId}`,
        },
      },
    });
    expect(issues[0].fingerprint).toEqual(expect.any(String));
    // Exactly one: nothing else is on its way.
    await sleep(1_000);
    expect(receiver.at('/issues')).toHaveLength(1);
    const log = await deliveries(svc, webhook.id);
    expect(log).toEqual([expect.objectContaining({ event_id: body.id, event_type: 'issue.created', attempt: 1, status: 'succeeded', response_status: 200, error: null, next_attempt_at: null })]);
    expect(log[0].delivered_at).toEqual(expect.any(String));
  });

  it('resolving and a recurrence give issue.resolved and issue.reopened', async () => {
    expect((await svc.call('PATCH', `/issues/${issueId}/resolve`)).status).toBe(200);
    const resolved = (await receiver.waitFor('/issues', 2))[1];
    expect(resolved.headers['lookout-event-type']).toBe('issue.resolved');
    expect(json(resolved).data.issue).toMatchObject({ id: issueId, status: 'resolved' });
    expect(verifies(webhook.secret, resolved)).toBe(true);

    // The same failure again, after the resolution: extraction reopens the issue.
    await sendRuns(svc.url, ingestKey, projectId, [failingRun(new Date())]);
    const reopened = (await receiver.waitFor('/issues', 3))[2];
    expect(reopened.headers['lookout-event-type']).toBe('issue.reopened');
    expect(json(reopened).data.issue).toMatchObject({ id: issueId, status: 'open', occurrence_count: 2 });
    expect(verifies(webhook.secret, reopened)).toBe(true);
    const ids = receiver.at('/issues').map((r) => r.headers['lookout-event-id']);
    expect(new Set(ids).size).toBe(3);
  });

  it('events the endpoint did not subscribe to are not sent', async () => {
    expect((await svc.call('PATCH', `/issues/${issueId}/flag`)).status).toBe(200);
    expect((await svc.call('PATCH', `/issues/${issueId}/start-review`)).status).toBe(200);
    await sleep(1_000);
    expect(receiver.at('/issues')).toHaveLength(3);
  });
});

describe('webhooks: retries', () => {
  it('a receiver answering 500 then 200 gets the event twice with the same Lookout-Event-Id, and the log shows both attempts', async () => {
    const project = await svc.newProject('webhook retries');
    const webhook = await createEndpoint(svc, project.id, { url: `${receiver.url}/flaky`, events: ['*'] });
    receiver.reply = (req, seen) => (req.path === '/flaky' && seen === 1 ? { status: 500 } : { status: 200 });
    const issue = await svc.call('POST', `/projects/${project.id}/issues`, { body: { title: 'Checkout times out' } });
    expect(issue.status).toBe(201);

    const [first, second] = await receiver.waitFor('/flaky', 2);
    expect(first.headers['lookout-event-id']).toBe(second.headers['lookout-event-id']);
    expect(first.body).toBe(second.body);
    expect([first.headers['lookout-delivery-attempt'], second.headers['lookout-delivery-attempt']]).toEqual(['1', '2']);
    expect(verifies(webhook.secret, first) && verifies(webhook.secret, second)).toBe(true);

    const log = await eventually(async () => {
      const rows = await deliveries(svc, webhook.id);
      return rows.length === 2 && rows[0].status === 'succeeded' ? rows : undefined;
    }, 'both attempts logged');
    expect(log).toEqual([
      expect.objectContaining({ attempt: 2, status: 'succeeded', response_status: 200, error: null, next_attempt_at: null, event_type: 'issue.created' }),
      expect.objectContaining({ attempt: 1, status: 'failed', response_status: 500, error: 'receiver answered 500', delivered_at: null, event_type: 'issue.created' }),
    ]);
    expect(log[0].event_id).toBe(first.headers['lookout-event-id']);
    expect(log[1].event_id).toBe(log[0].event_id);
    // The failed attempt names when the retry was due; the retry ran no earlier.
    expect(Date.parse(log[1].next_attempt_at)).toBeLessThanOrEqual(second.at + 1);
    await sleep(500);
    expect(receiver.at('/flaky')).toHaveLength(2);
  });

  it('honours Retry-After', async () => {
    const project = await svc.newProject('webhook retry-after');
    await createEndpoint(svc, project.id, { url: `${receiver.url}/busy`, events: ['issue.created'] });
    receiver.reply = (req, seen) => (req.path === '/busy' && seen === 1 ? { status: 503, headers: { 'retry-after': '2' } } : { status: 200 });
    await svc.call('POST', `/projects/${project.id}/issues`, { body: { title: 'Busy receiver' } });
    const [first, second] = await receiver.waitFor('/busy', 2);
    // With a 5 ms backoff base, only Retry-After explains a two-second wait.
    expect(second.at - first.at).toBeGreaterThanOrEqual(1_900);
  });
});

describe('webhooks: formats, test route, secret rotation', () => {
  it('the slack format sends a signed {text, blocks} body with the issue linked', async () => {
    const project = await svc.newProject('Payments <prod>');
    const webhook = await createEndpoint(svc, project.id, { url: `${receiver.url}/slack`, events: ['issue.created'], format: 'slack' });
    const created = await svc.call('POST', `/projects/${project.id}/issues`, { body: { title: 'Refunds fail for <EUR> & GBP' } });
    const [request] = await receiver.waitFor('/slack', 1);
    expect(verifies(webhook.secret, request)).toBe(true);
    const body = json(request);
    expect(Object.keys(body)).toEqual(['text', 'blocks']);
    const link = `<${PUBLIC_URL}/p/${project.id}/issues/${created.body.id}|Refunds fail for &lt;EUR&gt; &amp; GBP>`;
    expect(body.text).toBe(`New issue in Payments &lt;prod&gt;: ${link}`);
    expect(body.blocks[0]).toEqual({ type: 'section', text: { type: 'mrkdwn', text: body.text } });
    expect(body.blocks[1].elements[0].text).toContain('Status: open');
  });

  it('POST /webhooks/{id}/test sends webhook.test and answers with the delivery; a failing one is tried once', async () => {
    const project = await svc.newProject('webhook test route');
    const webhook = await createEndpoint(svc, project.id, { url: `${receiver.url}/probe`, events: ['issue.resolved'] });
    receiver.reply = (req, seen) => (req.path === '/probe' && seen === 2 ? { status: 500 } : { status: 200 });
    const ok = await svc.call('POST', `/webhooks/${webhook.id}/test`);
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ event_type: 'webhook.test', attempt: 1, status: 'succeeded', response_status: 200 });
    const [request] = receiver.at('/probe');
    expect(verifies(webhook.secret, request)).toBe(true);
    expect(json(request)).toMatchObject({ id: ok.body.event_id, type: 'webhook.test', project_id: project.id, data: { webhook: { id: webhook.id } } });

    const failing = await svc.call('POST', `/webhooks/${webhook.id}/test`);
    expect(failing.body).toMatchObject({ status: 'failed', response_status: 500, next_attempt_at: null });
    await sleep(500);
    expect(receiver.at('/probe')).toHaveLength(2);
    expect((await svc.call('GET', `/webhooks/${webhook.id}`)).body.consecutive_give_ups).toBe(0);
  });

  it('rotate-secret returns a new secret once; later deliveries are signed with it only', async () => {
    const project = await svc.newProject('webhook rotation');
    const webhook = await createEndpoint(svc, project.id, { url: `${receiver.url}/rotate`, events: ['issue.created'] });
    const rotated = await svc.call('POST', `/webhooks/${webhook.id}/rotate-secret`);
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(rotated.body.secret).not.toBe(webhook.secret);
    await svc.call('POST', `/projects/${project.id}/issues`, { body: { title: 'After rotation' } });
    const [request] = await receiver.waitFor('/rotate', 1);
    expect(verifies(rotated.body.secret, request)).toBe(true);
    expect(verifies(webhook.secret, request)).toBe(false);
    for (const answer of [await svc.call('GET', `/webhooks/${webhook.id}`), await svc.call('GET', `/projects/${project.id}/webhooks`), await svc.call('GET', `/webhooks/${webhook.id}/deliveries`)]) {
      expect(JSON.stringify(answer.body)).not.toContain('whsec_');
      expect(JSON.stringify(answer.body)).not.toContain('secret');
    }
  });
});

describe('webhooks: sharing the outbox', () => {
  it('the analytics relay never skips a row because the webhook fan-out is reading it', async () => {
    const relay = svc.service.deps.services.issueOutboxRelay as OutboxRelay;
    const sql = svc.service.deps.sql;
    await relay.stop();
    try {
      const project = await svc.newProject('shared outbox');
      const issue = await svc.call('POST', `/projects/${project.id}/issues`, { body: { title: 'Read by both' } });
      // Hold the row as the fan-out does while it builds the event, and drain the relay meanwhile.
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      let locked!: () => void;
      const isLocked = new Promise<void>((resolve) => (locked = resolve));
      const fanOut = sql.begin(async (tx) => {
        await tx`select id from issue_event_outbox where issue_id = ${issue.body.id} for key share`;
        locked();
        await held;
      });
      await isLocked;
      await relay.drain();
      const [row] = await sql<{ relayed_at: Date | null }[]>`select relayed_at from issue_event_outbox where issue_id = ${issue.body.id}`;
      release();
      await fanOut;
      expect(row.relayed_at).not.toBeNull();
    } finally {
      relay.start();
    }
  });
});

describe('webhooks: the documented receiver', () => {
  it('the Node verification snippet of docs/webhooks.md accepts a real delivery and refuses a tampered one', async () => {
    const { default: express } = await import('express');
    const { createRequire } = await import('node:module');
    const fs = await import('node:fs');
    const doc = fs.readFileSync(new URL('../../../docs/webhooks.md', import.meta.url), 'utf8');
    const snippet = /## Verifying signatures[\s\S]*?```js\n([\s\S]*?)```/.exec(doc)![1];
    expect(snippet.split('\n').filter(Boolean).length).toBeLessThanOrEqual(12);

    const project = await svc.newProject('documented receiver');
    const webhook = await createEndpoint(svc, project.id, { url: 'http://127.0.0.1:1/placeholder', events: ['issue.created'] });
    const app = express();
    const handled: string[] = [];
    app.use((req, res, next) => {
      res.on('finish', () => handled.push(`${res.statusCode}`));
      next();
    });
    // The snippet as written, with its free names bound: require, app, express, process.env.
    // eslint-disable-next-line @typescript-eslint/no-implied-eval -- the documentation's snippet is run as a reader would paste it
    new Function('require', 'app', 'express', 'process', snippet)(createRequire(import.meta.url), app, express, { env: { LOOKOUT_WEBHOOK_SECRET: webhook.secret } });
    const server = app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    try {
      const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/lookout`;
      expect((await svc.call('PATCH', `/webhooks/${webhook.id}`, { body: { url } })).status).toBe(200);
      await svc.call('POST', `/projects/${project.id}/issues`, { body: { title: 'Verified by the snippet' } });
      const log = await eventually(async () => {
        const rows = await deliveries(svc, webhook.id);
        return rows[0]?.status === 'succeeded' ? rows : undefined;
      }, 'the snippet to accept the delivery');
      expect(log[0]).toMatchObject({ attempt: 1, response_status: 204 });

      const body = '{"id":"forged"}';
      const t = Math.floor(Date.now() / 1000);
      const { createHmac } = await import('node:crypto');
      const good = createHmac('sha256', webhook.secret).update(`${t}.${body}`).digest('hex');
      const post = (signature: string, text = body) => fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'lookout-signature': signature }, body: text });
      expect((await post(`t=${t},v1=${good}`)).status).toBe(204);
      expect((await post(`t=${t},v1=${good}`, '{"id":"forged!"}')).status).toBe(400);
      expect((await post(`t=${t - 301},v1=${createHmac('sha256', webhook.secret).update(`${t - 301}.${body}`).digest('hex')}`)).status).toBe(400);
      expect((await post('')).status).toBe(400);
      expect(handled).toEqual(['204', '204', '400', '400', '400']);
    } finally {
      server.close();
    }
  });
});
