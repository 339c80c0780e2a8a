import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../../helpers/service.js';
import { createEndpoint, eventually } from '../../integration/webhooks/harness.js';
import { startReceiver, type Receiver } from '../../integration/webhooks/receiver.js';
import { launchBrowser, screenshot, type Browser } from './browser.js';
import { buildWebOnce } from './built-web.js';

/**
 * The project settings page in Chromium: it lists the project's webhook
 * endpoints as the REST API does, each with its last deliveries, and "Send test" sends a real
 * webhook.test to a receiver on 127.0.0.1 and shows the outcome.
 */
let svc: TestService;
let receiver: Receiver;
let browser: Browser & { consoleErrors: string[] };
let page: Page;
let projectId: string;
let healthy: { id: string; secret: string };
let broken: { id: string; secret: string };
/** Every response of 400 or more the page got: only the browser's own favicon probe may be among them. */
const failedLoads: string[] = [];

beforeAll(async () => {
  buildWebOnce();
  receiver = await startReceiver();
  receiver.reply = (req) => (req.path === '/broken' ? { status: 500 } : { status: 200 });
  svc = await startTestService({ LOOKOUT_WEBHOOK_ALLOW_PRIVATE: '1' }, undefined, { harness: { webhookBackoffBaseMs: 60_000 } });
  projectId = (await svc.newProject('Webhook settings')).id;
  healthy = await createEndpoint(svc, projectId, { url: `${receiver.url}/healthy`, events: ['issue.created', 'issue.resolved'], description: 'On-call bridge' });
  broken = await createEndpoint(svc, projectId, { url: `${receiver.url}/broken`, events: ['*'], format: 'slack' });
  const issue = await svc.call('POST', `/projects/${projectId}/issues`, { body: { title: 'Refunds time out' } });
  expect(issue.status).toBe(201);
  // One delivered issue.created at the healthy receiver, one failed attempt (retry in a minute) at the broken one.
  await receiver.waitFor('/healthy', 1);
  await receiver.waitFor('/broken', 1);
  await eventually(async () => {
    const log = await svc.call('GET', `/webhooks/${broken.id}/deliveries`);
    return log.body.deliveries.some((d: { status: string }) => d.status === 'failed') ? true : undefined;
  }, 'the failed attempt to be logged');
  browser = await launchBrowser();
  page = await browser.page();
  page.on('response', (response) => {
    if (response.status() >= 400) failedLoads.push(`${response.status()} ${new URL(response.url()).pathname}`);
  });
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await svc?.stop();
  await receiver?.close();
});

async function cardTexts(webhookId: string) {
  const card = page.locator(`[data-webhook-id="${webhookId}"]`);
  return card.locator('[data-testid="webhook-deliveries"] tbody tr').evaluateAll((rows) =>
    rows.map((row) => ({ id: row.getAttribute('data-delivery-id'), cells: [...row.querySelectorAll('td')].map((td) => td.textContent?.trim() ?? '') })),
  );
}

describe('dashboard: project settings, webhooks', () => {
  it('lists the endpoints with their last deliveries, as the API answers them', async () => {
    await page.goto(`${svc.url}/`);
    await page.fill('#api-key', svc.adminKey);
    await page.press('#api-key', 'Enter');
    await page.locator('[data-testid="project-list"]').waitFor();
    await page.goto(`${svc.url}/p/${projectId}/settings`);
    await page.locator('[data-testid="webhook-list"]').waitFor();
    expect(await page.locator('nav.tabs a[data-tab="settings"]').getAttribute('aria-current')).toBe('page');

    const { webhooks } = (await svc.call('GET', `/projects/${projectId}/webhooks`)).body;
    const shown = await page.locator('[data-testid="webhook-card"]').evaluateAll((cards) =>
      cards.map((c) => ({
        id: c.getAttribute('data-webhook-id'),
        url: c.querySelector('h3 code')?.textContent,
        enabled: c.querySelector('[data-testid="webhook-enabled"]')?.textContent,
        events: c.querySelector('[data-testid="webhook-events"]')?.textContent,
      })),
    );
    expect(shown).toEqual(webhooks.map((w: { id: string; url: string; events: string[] }) => ({ id: w.id, url: w.url, enabled: 'enabled', events: w.events.join(', ') })));
    expect(await page.locator(`[data-webhook-id="${healthy.id}"]`).innerText()).toContain('On-call bridge');

    for (const webhook of [healthy, broken]) {
      await page.locator(`[data-webhook-id="${webhook.id}"] [data-testid="webhook-deliveries"]`).waitFor();
      const rest = (await svc.call('GET', `/webhooks/${webhook.id}/deliveries?limit=5`)).body.deliveries;
      const rows = await cardTexts(webhook.id);
      expect(rows.map((r) => r.id)).toEqual(rest.map((d: { id: string }) => d.id));
      expect(rows.map((r) => [r.cells[1], r.cells[2], r.cells[3]])).toEqual(rest.map((d: { event_type: string; attempt: number; status: string }) => [d.event_type, String(d.attempt), d.status.replace('_', ' ')]));
    }
    // Newest first: the retry, still pending, then the attempt that failed.
    const [retry, failed] = await cardTexts(broken.id);
    expect(retry.cells.slice(2, 5)).toEqual(['2', 'pending', '—']);
    expect(retry.cells[5]).toMatch(/^due \d{4}-/);
    expect(failed.cells.slice(2, 5)).toEqual(['1', 'failed', '500']);
    expect(failed.cells[5]).toMatch(/^receiver answered 500 · retry \d{4}-/);
    await screenshot(page, 'webhooks-01-settings');
  });

  it('"Send test" delivers a signed webhook.test and shows it; a failing receiver is reported', async () => {
    const card = page.locator(`[data-webhook-id="${healthy.id}"]`);
    await card.locator('[data-testid="send-test"]').click();
    await card.locator('[data-testid="test-result"]', { hasText: 'Test event delivered (HTTP 200).' }).waitFor();
    const tests = receiver.at('/healthy').filter((r) => r.headers['lookout-event-type'] === 'webhook.test');
    expect(tests).toHaveLength(1);
    // The table reloads with the test on top.
    await eventually(async () => ((await cardTexts(healthy.id))[0]?.cells[1] === 'webhook.test' ? true : undefined), 'the test delivery in the table', 10_000);
    expect((await cardTexts(healthy.id))[0].id).toBe(tests[0].headers['lookout-delivery-id']);

    const brokenCard = page.locator(`[data-webhook-id="${broken.id}"]`);
    await brokenCard.locator('[data-testid="send-test"]').click();
    await brokenCard.locator('[data-testid="test-result"]', { hasText: 'Test event failed: receiver answered 500.' }).waitFor();
    await screenshot(page, 'webhooks-02-send-test');
  });

  it('shows why an endpoint is disabled', async () => {
    expect((await svc.call('PATCH', `/webhooks/${broken.id}`, { body: { enabled: false } })).status).toBe(200);
    await page.reload();
    const card = page.locator(`[data-webhook-id="${broken.id}"]`);
    await card.locator('[data-testid="webhook-disabled-reason"]').waitFor();
    expect(await card.locator('[data-testid="webhook-enabled"]').innerText()).toBe('disabled');
    expect(await card.locator('[data-testid="webhook-disabled-reason"]').innerText()).toBe('Disabled by a user');
    expect(failedLoads.filter((f) => f !== '404 /favicon.ico')).toEqual([]);
    expect(browser.consoleErrors.filter((e) => !/Failed to load resource: the server responded with a status of 404/.test(e))).toEqual([]);
  });

  it('adds, edits, disables, enables an endpoint and rotates its secret, each secret shown once', async () => {
    await page.goto(`${svc.url}/p/${projectId}/settings`);
    await page.locator('[data-testid="webhook-list"]').waitFor();
    await page.click('[data-testid="webhook-add"]');
    await page.fill('[data-testid="webhook-url-input"]', `${receiver.url}/added`);
    await page.click('[data-testid="webhook-form"] button[type="submit"]');
    const firstSecret = await page.locator('[data-testid="secret-value"]').innerText();
    expect(firstSecret).toMatch(/^whsec_/);
    const listed = () => svc.call('GET', `/projects/${projectId}/webhooks`).then((r) => r.body.webhooks as { id: string; url: string; enabled: boolean; events: string[] }[]);
    const added = (await listed()).find((w) => w.url === `${receiver.url}/added`)!;
    expect(added.events).toEqual(['*']);
    await page.click('[data-testid="secret-once"] button:text("Done")');
    expect(await page.locator('[data-testid="secret-once"]').count()).toBe(0);

    const card = page.locator(`[data-webhook-id="${added.id}"]`);
    await card.locator('[data-testid="webhook-edit"]').click();
    await card.locator('[data-testid="webhook-url-input"]').fill(`${receiver.url}/edited`);
    await card.locator('[data-testid="webhook-form"] button[type="submit"]').click();
    await expect.poll(async () => (await listed()).find((w) => w.id === added.id)!.url).toBe(`${receiver.url}/edited`);
    await card.locator('h3 code', { hasText: '/edited' }).waitFor();

    await card.locator('[data-testid="webhook-toggle"]').click();
    await expect.poll(async () => (await listed()).find((w) => w.id === added.id)!.enabled).toBe(false);
    await card.locator('[data-testid="webhook-enabled"]', { hasText: 'disabled' }).waitFor();
    await card.locator('[data-testid="webhook-toggle"]').click();
    await expect.poll(async () => (await listed()).find((w) => w.id === added.id)!.enabled).toBe(true);

    await card.locator('[data-testid="webhook-rotate"]').click();
    const rotated = await card.locator('[data-testid="secret-value"]').innerText();
    expect(rotated).toMatch(/^whsec_/);
    expect(rotated).not.toBe(firstSecret);
    // Deliveries are signed with the new secret from now on: the test event reaches the receiver.
    await card.locator('[data-testid="send-test"]').click();
    await card.locator('[data-testid="test-result"]', { hasText: 'Test event delivered (HTTP 200).' }).waitFor();
    await screenshot(page, 'webhooks-03-managed');
  });

  it('administers projects and API keys: a new key is shown once, works, and stops working once revoked', async () => {
    await page.click('[data-testid="admin-link"]');
    await page.locator('[data-testid="api-keys"]').waitFor();
    await page.fill('[data-testid="new-project-name"]', 'Made in the dashboard');
    await page.click('[data-testid="new-project"] button[type="submit"]');
    await page.locator('[data-testid="admin-projects"] a', { hasText: 'Made in the dashboard' }).waitFor();
    const made = (await svc.call('GET', '/projects')).body.projects.find((p: { name: string }) => p.name === 'Made in the dashboard');
    expect(made).toBeTruthy();

    await page.fill('[data-testid="new-key-name"]', 'viewer');
    await page.selectOption('[data-testid="new-key-project"]', made.id);
    await page.click('[data-testid="new-key"] button[type="submit"]');
    const secret = await page.locator('[data-testid="secret-value"]').innerText();
    expect((await svc.call('GET', `/projects/${made.id}`, { key: secret })).status).toBe(200);
    const key = (await svc.call('GET', '/api-keys')).body.api_keys.find((k: { name: string }) => k.name === 'viewer');
    expect(key).toMatchObject({ scope: 'read', project_id: made.id, revoked_at: null });
    const row = page.locator(`[data-testid="api-keys"] tr[data-row-key="${key.id}"]`);
    expect(await row.innerText()).toContain('Made in the dashboard');
    await row.locator('[data-testid="revoke"]').click();
    await row.locator('[data-testid="confirm-revoke"]').click();
    await row.locator('.badge-error', { hasText: 'revoked' }).waitFor();
    expect((await svc.call('GET', `/projects/${made.id}`, { key: secret })).status).toBe(401);
    await screenshot(page, 'admin-01-keys');

    // A read key is told the page needs the admin scope.
    const readKey = await svc.newKey('read');
    await page.click('text=Sign out');
    await page.fill('#api-key', readKey);
    await page.press('#api-key', 'Enter');
    await page.locator('[data-testid="project-list"]').waitFor();
    await page.click('[data-testid="admin-link"]');
    await page.locator('[data-testid="admin-needs-scope"]').waitFor();
  });
});
