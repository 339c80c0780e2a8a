import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../../helpers/service.js';
import { createEndpoint, sleep } from './harness.js';
import { startReceiver, type Receiver } from './receiver.js';

/**
 * The SSRF guard without LOOKOUT_WEBHOOK_ALLOW_PRIVATE: endpoints may not name loopback, private or
 * link-local hosts (by address or by a name resolving to one), and a stored URL that points at such
 * an address by the time it is sent (DNS rebinding, an edited row) is refused at connection time.
 */
let svc: TestService;
let receiver: Receiver;

beforeAll(async () => {
  receiver = await startReceiver();
  svc = await startTestService();
}, 120_000);

afterAll(async () => {
  await svc?.stop();
  await receiver?.close();
});

describe('webhooks: SSRF guard', () => {
  it('refuses loopback, private, link-local and other non-public hosts with 400', async () => {
    const project = await svc.newProject('ssrf');
    const refused = [
      receiver.url, 'http://localhost:8080/hook', 'http://127.1/hook', 'http://0.0.0.0/hook', 'http://10.1.2.3/hook', 'http://172.20.0.5/hook',
      'http://192.168.1.10/hook', 'http://169.254.169.254/latest/meta-data', 'http://100.64.0.1/hook', 'http://[::1]/hook',
      'http://[fe80::1]/hook', 'http://[fd00::5]/hook', 'http://[::ffff:127.0.0.1]/hook', 'http://[64:ff9b::a9fe:a9fe]/hook', 'http://2130706433/hook',
    ];
    for (const url of refused) {
      const res = await svc.call('POST', `/projects/${project.id}/webhooks`, { body: { url, events: ['*'] } });
      expect(res.status, url).toBe(400);
      expect(res.body).toEqual({ code: 'validation_error', detail: expect.stringMatching(/^url: resolves to a loopback, private or link-local address/) });
    }
    const webhook = await createEndpoint(svc, project.id, { url: 'https://hooks.lookout-test.invalid/in', events: ['*'] });
    const patched = await svc.call('PATCH', `/webhooks/${webhook.id}`, { body: { url: 'http://192.168.0.1/' } });
    expect(patched.status).toBe(400);
    expect((await svc.call('GET', `/webhooks/${webhook.id}`)).body.url).toBe('https://hooks.lookout-test.invalid/in');
    expect((await svc.call('GET', `/projects/${project.id}/webhooks`)).body.webhooks).toHaveLength(1);
  });

  it('refuses at connection time a stored URL that now reaches a private address, without contacting it', async () => {
    const project = await svc.newProject('ssrf at send');
    const webhook = await createEndpoint(svc, project.id, { url: 'https://hooks.lookout-test.invalid/in', events: ['issue.created'] });
    // As if the name now resolved to loopback: the row is changed under the API's check.
    for (const url of [`${receiver.url}/literal`, `${receiver.url.replace('127.0.0.1', 'localhost')}/named`]) {
      await svc.service.deps.sql`update webhook_endpoints set url = ${url} where id = ${webhook.id}`;
      const res = await svc.call('POST', `/webhooks/${webhook.id}/test`);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ status: 'failed', response_status: null });
      expect(res.body.error).toMatch(/^refused: the host resolves to a loopback, private or link-local address/);
    }
    await sleep(300);
    expect(receiver.received).toHaveLength(0);
  });

  it('a host that does not resolve is accepted and its deliveries fail with a readable error', async () => {
    const project = await svc.newProject('ssrf unresolvable');
    const webhook = await createEndpoint(svc, project.id, { url: 'https://hooks.lookout-test.invalid/in', events: ['*'] });
    const res = await svc.call('POST', `/webhooks/${webhook.id}/test`);
    expect(res.body).toMatchObject({ status: 'failed', error: 'host does not resolve' });
  });
});
