import crypto from 'node:crypto';
import { expect } from 'vitest';
import type { TestService } from '../../helpers/service.js';
import type { Received } from './receiver.js';

/**
 * The receiver's side of docs/webhooks.md "Verifying signatures", written out here rather than
 * imported from the service, so the test checks the documented contract and not our own helper.
 */
export function verifies(secret: string, received: Received, toleranceSeconds = 300): boolean {
  const header = String(received.headers['lookout-signature'] ?? '');
  const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header);
  if (!match) return false;
  const expected = crypto.createHmac('sha256', secret).update(`${match[1]}.${received.body}`).digest('hex');
  const fresh = Math.abs(Date.now() / 1000 - Number(match[1])) <= toleranceSeconds;
  return fresh && crypto.timingSafeEqual(Buffer.from(expected, 'hex'), Buffer.from(match[2], 'hex'));
}

export async function createEndpoint(svc: TestService, projectId: string, body: Record<string, unknown>, key?: string): Promise<{ id: string; secret: string; [k: string]: unknown }> {
  const res = await svc.call('POST', `/projects/${projectId}/webhooks`, { body, key });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  expect(res.body.secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
  return res.body;
}

export async function deliveries(svc: TestService, webhookId: string): Promise<any[]> {
  const res = await svc.call('GET', `/webhooks/${webhookId}/deliveries?limit=200`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.deliveries;
}

/** Polls until `check` returns a value other than undefined. */
export async function eventually<T>(check: () => Promise<T | undefined> | T | undefined, what: string, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
export const json = (r: Received) => JSON.parse(r.body);
