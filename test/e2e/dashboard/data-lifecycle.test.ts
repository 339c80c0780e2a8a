import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../../helpers/service.js';
import { launchBrowser, screenshot, type Browser } from './browser.js';
import { expectNoSidewaysScroll, restBody } from './figures.js';
import { buildWebOnce } from './built-web.js';

/**
 * The project settings page's data section in Chromium (docs/data-lifecycle.md): the project's
 * retention as the REST API answers it, changed from the page (and a refused change explained), and
 * the project's deletions with their status, as GET /api/projects/{id}/deletions lists them.
 */
let svc: TestService;
let browser: Browser & { consoleErrors: string[] };
let page: Page;
let projectId: string;
let deletionIds: string[];

beforeAll(async () => {
  buildWebOnce();
  svc = await startTestService();
  projectId = (await svc.newProject('Data lifecycle')).id;
  // Two jobs: traces that were never stored (the job finds nothing and succeeds), and a thread.
  const one = await svc.call('POST', `/projects/${projectId}/deletions`, { body: { trace_ids: ['0123456789abcdef0123456789abcdef'] } });
  const two = await svc.call('POST', `/projects/${projectId}/deletions`, { body: { thread_id: 'conversation-4711' } });
  expect([one.status, two.status]).toEqual([202, 202]);
  deletionIds = [two.body.id, one.body.id];
  browser = await launchBrowser();
  page = await browser.page();
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await svc?.stop();
});

const text = (testId: string) => page.locator(`[data-testid="${testId}"]`).innerText();

describe('dashboard: project settings, retention and deletions', () => {
  it('shows the retention in force and changes it', async () => {
    await page.goto(`${svc.url}/`);
    await page.fill('#api-key', svc.adminKey);
    await page.press('#api-key', 'Enter');
    await page.locator('[data-testid="project-list"]').waitFor();
    await page.goto(`${svc.url}/p/${projectId}/settings`);
    await page.locator('[data-testid="retention-panel"]').waitFor();
    expect(await restBody(svc, `/projects/${projectId}/retention`)).toMatchObject({ analytics_days: 90, content_days: 90, source: 'default' });
    expect(await text('retention-analytics-days')).toMatch(/^90 days/);
    expect(await text('retention-content-days')).toMatch(/^90 days/);
    expect(await text('retention-source')).toBe('the default (nothing set)');

    // Content longer than the figures: the API refuses it, the page says why, nothing changes.
    await page.fill('[data-testid="retention-analytics"]', '30');
    await page.fill('[data-testid="retention-content"]', '40');
    await page.click('[data-testid="retention-form"] button[type="submit"]');
    await page.locator('[data-testid="retention-result"]', { hasText: 'content_days' }).waitFor();
    expect(await restBody(svc, `/projects/${projectId}/retention`)).toMatchObject({ source: 'default' });

    await page.fill('[data-testid="retention-content"]', '7');
    await page.click('[data-testid="retention-form"] button[type="submit"]');
    await page.locator('[data-testid="retention-source"]', { hasText: "this project's own setting" }).waitFor();
    expect(await restBody(svc, `/projects/${projectId}/retention`)).toMatchObject({ analytics_days: 30, content_days: 7, source: 'project' });
    expect(await text('retention-analytics-days')).toMatch(/^30 days/);
    expect(await text('retention-content-days')).toMatch(/^7 days/);
    await screenshot(page, 'lifecycle-01-retention');
  });

  it('lists the deletions with their status, newest first', async () => {
    await expect.poll(async () => (await restBody(svc, `/projects/${projectId}/deletions`)).deletions.every((d: { status: string }) => d.status === 'succeeded'), { timeout: 60_000 }).toBe(true);
    await page.reload();
    await page.locator('[data-testid="deletion-list"]').waitFor();
    const rows = await page.locator('[data-testid="deletion-list"] tbody tr').evaluateAll((trs) =>
      trs.map((tr) => ({ id: tr.getAttribute('data-deletion-id'), cells: [...tr.querySelectorAll('td')].map((td) => td.textContent?.trim() ?? '') })),
    );
    const { deletions } = await restBody(svc, `/projects/${projectId}/deletions`);
    expect(rows.map((r) => r.id)).toEqual(deletions.map((d: { id: string }) => d.id));
    expect(rows.map((r) => r.id)).toEqual(deletionIds);
    expect(rows.map((r) => [r.cells[1], r.cells[2], r.cells[3]])).toEqual([
      ['thread conversation-4711', 'succeeded', '0'],
      ['1 trace(s)', 'succeeded', '0'],
    ]);

    await page.setViewportSize({ width: 390, height: 844 });
    await expectNoSidewaysScroll(page);
    await screenshot(page, 'lifecycle-02-phone', { fullPage: true });
    expect(browser.consoleErrors.filter((e) => !/status of 400|favicon/.test(e))).toEqual([]);
  });
});
