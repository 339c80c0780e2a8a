import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentRunRequest } from '../../helpers/otlp-json.js';
import { startTestService, type TestService } from '../../helpers/service.js';
import { postOtlp, waitFor } from '../../integration/ingest/otlp-client.js';
import { snippetParts } from '../../../web/src/snippet-parts.js';
import { launchBrowser, screenshot, type Browser } from './browser.js';
import { expectNoSidewaysScroll } from './figures.js';
import { buildWebOnce } from './built-web.js';

/**
 * The trace list's search box: `/` focuses it, Enter searches (kept in the URL as q), each hit shows
 * where it matched with the searched words marked, and the snippet is rendered as text (an answer's
 * markup is never set as HTML).
 */
let svc: TestService;
let browser: Browser & { consoleErrors: string[] };
let page: Page;
let projectId: string;

beforeAll(async () => {
  buildWebOnce();
  svc = await startTestService({ TRACE_SETTLE_MS: '100' });
  projectId = (await svc.newProject('search')).id;
  const runs = [
    { agent: 'support-bot', tools: [{ name: 'lookup_refund_status' }] },
    { agent: 'support-bot', tools: [{ name: 'weather_forecast' }] },
    { agent: 'billing-bot', tools: [{ name: 'send_invoice' }] },
  ];
  for (const run of runs) {
    const body = agentRunRequest({ start: new Date(Date.now() - 60_000), agent: run.agent, generations: [{ model: 'gpt-4o', input: 5, output: 2 }], tools: run.tools }).body;
    expect((await postOtlp(svc.url, svc.adminKey, body, { contentType: 'application/json', headers: { 'x-lookout-project': projectId } })).status).toBe(200);
  }
  await waitFor(async () => ((await svc.call('GET', `/projects/${projectId}/traces?q=refund`)).body.traces?.length === 1 ? true : undefined), 60_000, 'the runs settled and searchable');
  browser = await launchBrowser();
  page = await browser.page();
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await svc?.stop();
});

describe('searching the trace list', () => {
  it('splits a snippet into text and marked words, unescaping only what the API escapes', () => {
    expect(snippetParts('…ask &lt;b&gt; about <mark>refund</mark>s &amp; <mark>fees</mark>')).toEqual([
      { text: '…ask <b> about ', marked: false },
      { text: 'refund', marked: true },
      { text: 's & ', marked: false },
      { text: 'fees', marked: true },
    ]);
    expect(snippetParts('no hit')).toEqual([{ text: 'no hit', marked: false }]);
  });

  it('finds the trace by its tool, marks the word, keeps the query in the URL, and clears', async () => {
    await page.goto(`${svc.url}/`);
    await page.fill('#api-key', svc.adminKey);
    await page.press('#api-key', 'Enter');
    await page.locator('[data-testid="project-list"]').waitFor();
    await page.goto(`${svc.url}/p/${projectId}/traces`);
    await page.locator('[data-testid="traces-table"] tbody tr').nth(2).waitFor();

    // `/` focuses the search box.
    await page.keyboard.press('/');
    expect(await page.evaluate(() => document.activeElement?.getAttribute('data-testid'))).toBe('filter-search');
    await page.keyboard.type('refund');
    await page.keyboard.press('Enter');
    await page.waitForURL(/[?&]q=refund/);
    const rows = page.locator('[data-testid="traces-table"] tbody tr');
    await waitFor(async () => ((await rows.count()) === 1 ? true : undefined), 15_000, 'one hit');
    const snippet = rows.first().locator('[data-testid="match-snippet"]');
    expect(await snippet.getAttribute('data-field')).toBe('tool');
    expect(await snippet.locator('mark').allInnerTexts()).toEqual(['refund']);
    expect(await snippet.innerText()).toContain('lookup_refund_status');
    await screenshot(page, 'search-hit');

    // A reload keeps the search; a word nobody said finds nothing.
    await page.reload();
    await waitFor(async () => ((await rows.count()) === 1 ? true : undefined), 15_000, 'the hit after a reload');
    expect(await page.inputValue('[data-testid="filter-search"]')).toBe('refund');
    await page.fill('[data-testid="filter-search"]', 'nonexistentword');
    await page.press('[data-testid="filter-search"]', 'Enter');
    await page.getByText('No trace matches these filters.').waitFor();

    // Clearing shows every trace again.
    await page.fill('[data-testid="filter-search"]', '');
    await page.press('[data-testid="filter-search"]', 'Enter');
    await waitFor(async () => ((await rows.count()) === 3 ? true : undefined), 15_000, 'all three traces');
    expect(page.url()).not.toContain('q=');

    // The box fits a phone's width without scrolling the page sideways.
    await page.setViewportSize({ width: 390, height: 844 });
    await expectNoSidewaysScroll(page);
    await page.setViewportSize({ width: 1280, height: 800 });
    expect(browser.consoleErrors).toEqual([]);
  });
});
