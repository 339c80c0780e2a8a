import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentRunRequest } from '../../helpers/otlp-json.js';
import { startTestService, type TestService } from '../../helpers/service.js';
import { postOtlp, waitFor } from '../../integration/ingest/otlp-client.js';
import { ago } from '../../../web/src/format.js';
import { launchBrowser, screenshot, type Browser } from './browser.js';
import { buildWebOnce } from './built-web.js';

/**
 * The dashboard says how fresh its figures are: "Updated … ago" from the answers' data_as_of, and a
 * warning while processing lags past the server's bound. The service has no settler at first (no
 * worker role), so the lag grows past SETTLE_MAX_LAG_MS — the run is listed meanwhile, marked as
 * settling; then a settler starts, the warning goes and the run is listed settled.
 */
let svc: TestService;
let browser: Browser & { consoleErrors: string[] };
let page: Page;
let projectId: string;

beforeAll(async () => {
  buildWebOnce();
  svc = await startTestService({ LOOKOUT_ROLES: 'api,ingest', TRACE_SETTLE_MS: '100', SETTLE_MAX_LAG_MS: '1000' });
  projectId = (await svc.newProject('freshness')).id;
  browser = await launchBrowser();
  page = await browser.page();
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await svc?.service.deps.services.ingest?.settler.stop();
  await svc?.stop();
});

const send = () =>
  postOtlp(svc.url, svc.adminKey, agentRunRequest({ start: new Date(), agent: 'fresh-agent', generations: [{ model: 'gpt-4o', input: 3, output: 2 }] }).body, {
    contentType: 'application/json',
    headers: { 'x-lookout-project': projectId },
  });

describe('freshness on the dashboard', () => {
  it('writes ages for people', () => {
    expect(ago(0.4)).toBe('just now');
    expect(ago(12.2)).toBe('12 s ago');
    expect(ago(600)).toBe('10 min ago');
    expect(ago(7200)).toBe('2 h ago');
  });

  it('warns while processing lags past the bound, and stops warning once it caught up', async () => {
    expect((await send()).status).toBe(200);
    await waitFor(async () => {
      const res = await svc.call('GET', `/projects/${projectId}/traces`);
      return res.body.settle_lag_ms > 1000 ? true : undefined;
    }, 30_000, 'the lag past the bound');

    await page.goto(`${svc.url}/`);
    await page.fill('#api-key', svc.adminKey);
    await page.press('#api-key', 'Enter');
    await page.locator('[data-testid="project-list"]').waitFor();
    await page.goto(`${svc.url}/p/${projectId}/traces`);
    const note = page.locator('[data-testid="freshness"]');
    await note.waitFor();
    expect(await note.getAttribute('class')).toContain('freshness-behind');
    expect(await note.innerText()).toMatch(/^Updated (\d+ s ago|just now) · Processing is \d+ s behind/);
    // The run is listed already, marked as still settling, its tokens not known yet.
    const rows = page.locator('[data-testid="traces-table"] tbody tr');
    await rows.first().waitFor();
    expect(await rows.count()).toBe(1);
    expect(await rows.first().locator('[data-testid="trace-settling"]').innerText()).toBe('settling');
    await screenshot(page, 'freshness-behind');

    svc.service.deps.services.ingest!.settler.start();
    await waitFor(async () => {
      const res = await svc.call('GET', `/projects/${projectId}/traces`);
      return res.body.traces.length === 1 && res.body.settle_lag_ms <= 1000 ? true : undefined;
    }, 30_000, 'settling caught up');
    await page.reload();
    await page.locator('[data-testid="traces-table"]').waitFor();
    await note.waitFor();
    expect(await note.getAttribute('class')).toBe('freshness');
    expect(await note.innerText()).toMatch(/^Updated (just now|\d+ s ago)$/);
    expect(await rows.count()).toBe(1);
    expect(await page.locator('[data-testid="trace-settling"]').count()).toBe(0);

    // The overview says it too, from the general view's answer.
    await page.goto(`${svc.url}/p/${projectId}`);
    await page.locator('[data-testid="freshness"]').waitFor();
    expect(await page.locator('[data-testid="freshness"]').innerText()).toMatch(/^Updated /);
    expect(browser.consoleErrors).toEqual([]);
  });
});
