import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { slackBody } from '../../../src/workspace/webhooks/slack-format.js';
import type { WebhookEnvelope } from '../../../src/workspace/webhooks/webhook-payload.js';
import { newWebhookSecret, signatureHeader } from '../../../src/workspace/webhooks/webhook-signature.js';
import { subscribes } from '../../../src/workspace/webhooks/webhook-types.js';

const envelope = (data: WebhookEnvelope['data'], type = 'issue.created'): WebhookEnvelope => ({
  id: '6f1c1d2e-0000-4000-8000-000000000001', type, occurred_at: '2026-01-01T00:00:00.000Z', project_id: 'p1', data,
});

/** A receiver's check, as docs/webhooks.md shows it: signature matches and the timestamp is within tolerance. */
function verifySignature(secret: string, body: string, header: string, nowSeconds: number, toleranceSeconds = 300): boolean {
  const parts = Object.fromEntries(header.split(',').map((p) => p.split('=') as [string, string]));
  const t = Number(parts.t);
  if (!Number.isInteger(t) || Math.abs(nowSeconds - t) > toleranceSeconds || !parts.v1) return false;
  const expected = Buffer.from(signatureHeader(secret, body, t).split('v1=')[1], 'hex');
  const given = Buffer.from(parts.v1, 'hex');
  return given.length === expected.length && crypto.timingSafeEqual(given, expected);
}

describe('webhook signature', () => {
  it('is HMAC-SHA256 of "<t>.<body>" keyed by the whole secret string, checked within a tolerance', () => {
    const secret = newWebhookSecret();
    const body = '{"id":"e1"}';
    const header = signatureHeader(secret, body, 1_700_000_000);
    expect(header).toBe(`t=1700000000,v1=${crypto.createHmac('sha256', secret).update(`1700000000.${body}`).digest('hex')}`);
    expect(verifySignature(secret, body, header, 1_700_000_100)).toBe(true);
    expect(verifySignature(secret, body, header, 1_700_000_301)).toBe(false);
    expect(verifySignature(secret, `${body} `, header, 1_700_000_000)).toBe(false);
    expect(verifySignature(newWebhookSecret(), body, header, 1_700_000_000)).toBe(false);
    expect(verifySignature(secret, body, 't=1700000000,v1=zz', 1_700_000_000)).toBe(false);
  });
});

describe('webhook subscriptions', () => {
  it('matches listed events and `*`, never events outside the webhook set', () => {
    expect(subscribes(['issue.created'], 'issue.created')).toBe(true);
    expect(subscribes(['issue.created'], 'issue.resolved')).toBe(false);
    expect(subscribes(['*'], 'monitor.activated')).toBe(true);
    expect(subscribes(['*'], 'issue.chat_sent')).toBe(false);
    expect(subscribes(['*'], 'webhook.test')).toBe(false);
  });
});

describe('slack format', () => {
  it('links the issue, escapes user text and lists its facts', () => {
    const body = slackBody(envelope({
      project: { id: 'p1', name: 'Shop & Co' },
      issue: { id: 'i1', title: '<script> & co', status: 'open', fingerprint: 'f', occurrence_count: 3, first_seen_at: null, last_seen_at: '2026-01-01T00:00:00.000Z', created_at: '2026-01-01T00:00:00.000Z', url: 'https://l.example/p/p1/issues/i1' },
    }));
    expect(body.text).toBe('New issue in Shop &amp; Co: <https://l.example/p/p1/issues/i1|&lt;script&gt; &amp; co>');
    expect(body.blocks).toEqual([
      { type: 'section', text: { type: 'mrkdwn', text: body.text } },
      { type: 'context', elements: [{ type: 'mrkdwn', text: 'Status: open · Occurrences: 3 · Last seen: 2026-01-01T00:00:00.000Z · Event 6f1c1d2e-0000-4000-8000-000000000001' }] },
    ]);
  });

  it('bolds the title when there is no dashboard URL, and describes monitors and tests', () => {
    const issue = slackBody(envelope({ project: { id: 'p1', name: 'P' }, issue: { id: 'i1', title: 'T', status: 'resolved', fingerprint: null, occurrence_count: 0, first_seen_at: null, last_seen_at: null, created_at: 'x', url: null } }, 'issue.resolved'));
    expect(issue.text).toBe('Issue resolved in P: *T*');
    const monitor = slackBody(envelope({ project: { id: 'p1', name: 'P' }, monitor: { id: 'm', name: 'Refunds', kind: 'tool', exploration_status: 'active', activated_at: null, url: null } }, 'monitor.activated'));
    expect(monitor.text).toBe('Monitor active in P: *Refunds* finished learning and now watches every trace');
    const test = slackBody(envelope({ project: { id: 'p1', name: 'P' }, webhook: { id: 'w' }, message: 'hello' }, 'webhook.test'));
    expect(test.text).toBe('Test event for P: hello');
  });
});
