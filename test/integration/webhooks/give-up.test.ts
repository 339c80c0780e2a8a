import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../../helpers/service.js';
import { createEndpoint, deliveries, eventually, sleep } from './harness.js';
import { startReceiver, type Receiver } from './receiver.js';

/**
 * Giving up (docs/webhooks.md "Retries"): the schedule runs to its 24-hour window — 2880 × the
 * backoff base — then the delivery gives up; 20 give-ups in a row disable the endpoint, and any
 * success resets the count. A 2 ms base (the service's webhookBackoffBaseMs option) makes the window 5.8 s.
 */
let svc: TestService;
let receiver: Receiver;

beforeAll(async () => {
  receiver = await startReceiver();
  receiver.reply = () => ({ status: 500 });
  svc = await startTestService({ LOOKOUT_WEBHOOK_ALLOW_PRIVATE: '1', LOOKOUT_WEBHOOK_CONCURRENCY: '8' }, undefined, { harness: { webhookBackoffBaseMs: 2 } });
}, 120_000);

afterAll(async () => {
  await svc?.stop();
  await receiver?.close();
});

const endpoint = async (id: string) => (await svc.call('GET', `/webhooks/${id}`)).body;

describe('webhooks: giving up', () => {
  it('retries with backoff until the window closes, gives up, and a success resets the streak', async () => {
    const project = await svc.newProject('give up');
    const webhook = await createEndpoint(svc, project.id, { url: `${receiver.url}/down`, events: ['issue.created'] });
    await svc.call('POST', `/projects/${project.id}/issues`, { body: { title: 'never delivered' } });
    const log = await eventually(async () => {
      const rows = await deliveries(svc, webhook.id);
      return rows[0]?.status === 'gave_up' ? rows : undefined;
    }, 'the delivery to give up', 60_000);
    // Newest first: one gave_up, every earlier attempt failed with its retry time.
    expect(log[0]).toMatchObject({ status: 'gave_up', response_status: 500, next_attempt_at: null });
    expect(log.slice(1).every((d) => d.status === 'failed' && d.next_attempt_at !== null)).toBe(true);
    expect(log.map((d) => d.attempt)).toEqual(Array.from({ length: log.length }, (_, i) => log.length - i));
    // Steps of 2, 8, 40, 240, 1440 ms then 1440 ms each, ±20 %, inside 5.76 s: seven or eight attempts.
    expect(log.length).toBeGreaterThanOrEqual(6);
    expect(log.length).toBeLessThanOrEqual(9);
    const gaps = receiver.at('/down').map((r, i, all) => (i === 0 ? 0 : r.at - all[i - 1].at));
    expect(gaps[5]).toBeGreaterThanOrEqual(1_440 * 0.8 - 50);
    expect(receiver.at('/down')).toHaveLength(log.length);
    expect((await endpoint(webhook.id)).consecutive_give_ups).toBe(1);

    receiver.reply = (req) => (req.path === '/down' ? { status: 204 } : { status: 500 });
    await svc.call('POST', `/projects/${project.id}/issues`, { body: { title: 'delivered' } });
    await eventually(async () => ((await endpoint(webhook.id)).consecutive_give_ups === 0 ? true : undefined), 'the streak to reset');
    receiver.reply = () => ({ status: 500 });
  });

  it('disables an endpoint after 20 deliveries in a row gave up, and says so in its GET', async () => {
    const project = await svc.newProject('disable');
    const webhook = await createEndpoint(svc, project.id, { url: `${receiver.url}/dead`, events: ['*'] });
    for (let i = 0; i < 20; i++) await svc.call('POST', `/projects/${project.id}/issues`, { body: { title: `failing ${i}` } });
    const disabled = await eventually(async () => {
      const body = await endpoint(webhook.id);
      return body.enabled ? undefined : body;
    }, 'the endpoint to be disabled', 90_000);
    expect(disabled).toMatchObject({ enabled: false, consecutive_give_ups: 20 });
    expect(disabled.disabled_reason).toMatch(/20 deliveries in a row gave up/);
    expect(disabled.disabled_at).toEqual(expect.any(String));
    const log = await deliveries(svc, webhook.id);
    expect(log.filter((d) => d.status === 'gave_up')).toHaveLength(20);
    expect(log.filter((d) => d.status === 'pending')).toHaveLength(0);

    // Disabled: new events are not queued for it.
    const before = receiver.at('/dead').length;
    await svc.call('POST', `/projects/${project.id}/issues`, { body: { title: 'after disabling' } });
    await sleep(1_000);
    expect(receiver.at('/dead')).toHaveLength(before);
    expect(await deliveries(svc, webhook.id)).toHaveLength(log.length);

    // Enabled again by hand: the streak starts over.
    expect((await svc.call('PATCH', `/webhooks/${webhook.id}`, { body: { enabled: true } })).body).toMatchObject({ enabled: true, consecutive_give_ups: 0, disabled_reason: null });
  }, 120_000);
});
