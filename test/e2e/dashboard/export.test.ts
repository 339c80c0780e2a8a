import fs from 'node:fs';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentRunRequest } from '../../helpers/otlp-json.js';
import { startTestService, type TestService } from '../../helpers/service.js';
import { postOtlp, waitFor } from '../../integration/ingest/otlp-client.js';
import { launchBrowser, screenshot, type Browser } from './browser.js';
import { expectNoSidewaysScroll } from './figures.js';
import { buildWebOnce } from './built-web.js';

/**
 * "Export" on the project settings in Chromium, signed in with a read key (held in the tab's
 * sessionStorage, sent as a bearer header): the rows of an event and the traces download as files
 * equal to what the API streams for the same window, and a refused export says why.
 */
let svc: TestService;
let browser: Browser & { consoleErrors: string[] };
let page: Page;
let projectId: string;
let readKey: string;

beforeAll(async () => {
  buildWebOnce();
  svc = await startTestService({ TRACE_SETTLE_MS: '100' });
  projectId = (await svc.newProject('export')).id;
  readKey = await svc.newKey('read');
  for (const agent of ['support-bot', 'billing-bot']) {
    const body = agentRunRequest({ start: new Date(Date.now() - 3_600_000), agent, generations: [{ model: 'gpt-4o', input: 50, output: 20 }, { model: 'gpt-4o-mini', input: 9, output: 3 }], tools: [{ name: 'lookup' }] }).body;
    expect((await postOtlp(svc.url, svc.adminKey, body, { contentType: 'application/json', headers: { 'x-lookout-project': projectId } })).status).toBe(200);
  }
  await waitFor(async () => ((await svc.call('GET', `/projects/${projectId}/traces`)).body.traces?.length === 2 ? true : undefined), 60_000, 'the runs settled');
  browser = await launchBrowser();
  page = await browser.page();
  await page.goto(`${svc.url}/`);
  await page.fill('#api-key', readKey);
  await page.press('#api-key', 'Enter');
  await page.locator('[data-testid="project-list"]').waitFor();
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await svc?.stop();
});

/** Clicks a download button and returns the saved file's name and text, and the window the page showed. */
async function downloaded(button: string): Promise<{ name: string; text: string }> {
  const [download] = await Promise.all([page.waitForEvent('download', { timeout: 60_000 }), page.click(`[data-testid="${button}"]`)]);
  const file = await download.path();
  return { name: download.suggestedFilename(), text: fs.readFileSync(file, 'utf8') };
}

async function apiText(apiPath: string): Promise<string> {
  const res = await fetch(`${svc.api}${apiPath}`, { headers: { authorization: `Bearer ${readKey}` } });
  expect(res.status).toBe(200);
  return res.text();
}

const lines = (text: string) => text.split('\n').filter(Boolean).sort();

describe('dashboard: project settings, export', () => {
  it('downloads an event as CSV and the traces as OTLP lines with the tab\'s read key, equal to the API for the window', async () => {
    await page.goto(`${svc.url}/p/${projectId}/settings?range=7d`);
    const section = page.locator('[data-testid="export-section"]');
    await section.waitFor();
    await page.locator('[data-testid="export-event"] option[value="generation.completed"]').waitFor({ state: 'attached' });
    await page.selectOption('[data-testid="export-event"]', 'generation.completed');
    await page.selectOption('[data-testid="export-format"]', 'csv');

    const csv = await downloaded('export-events');
    expect(csv.name).toMatch(/^lookout-generation-completed-\d{8}T\d{6}Z-\d{8}T\d{6}Z\.csv$/);
    await expect.poll(() => page.locator('[data-testid="export-status"]').textContent()).toBe(`Saved ${csv.name}.`);
    // The window is the page's: the file name carries it, and the API answers the same rows for it.
    const [, start, end] = /-(\d{8}T\d{6}Z)-(\d{8}T\d{6}Z)\.csv$/.exec(csv.name)!;
    const isoOf = (compact: string) => compact.replace(/^(\d{4})(\d\d)(\d\d)T(\d\d)(\d\d)(\d\d)Z$/, '$1-$2-$3T$4:$5:$6Z');
    const window = { start: isoOf(start), end_exclusive: isoOf(end) };
    expect(Date.parse(window.end_exclusive) - Date.parse(window.start)).toBe(7 * 86_400_000);
    expect(csv.text.split('\n')).toHaveLength(1 + 4 + 1);
    expect(lines(csv.text)).toEqual(lines(await apiText(`/projects/${projectId}/export?${new URLSearchParams({ from: 'generation.completed', format: 'csv', ...window })}`)));

    const traces = await downloaded('export-traces');
    expect(traces.name).toMatch(/^lookout-traces-.*\.otlp\.ndjson$/);
    expect(lines(traces.text)).toHaveLength(2);
    expect(lines(traces.text)).toEqual(lines(await apiText(`/projects/${projectId}/export/traces?${new URLSearchParams(window)}`)));
    for (const line of lines(traces.text)) expect(JSON.parse(line).resourceSpans[0].scopeSpans[0].spans.length).toBeGreaterThan(0);
    await screenshot(page, 'settings-export');
  });

  it('says why an export was refused and saves nothing', async () => {
    // A window longer than the 90 days an export may cover.
    await page.goto(`${svc.url}/p/${projectId}/settings?range=custom&from=2026-01-01T00:00:00Z&to=2026-06-01T00:00:00Z`);
    await page.locator('[data-testid="export-section"]').waitFor();
    let downloads = 0;
    page.on('download', () => downloads++);
    await page.click('[data-testid="export-traces"]');
    await expect.poll(() => page.locator('[data-testid="export-status"]').textContent()).toBe('Window exceeds 90 days');
    expect(await page.locator('[data-testid="export-status"]').getAttribute('class')).toBe('field-error');
    expect(downloads).toBe(0);
  });

  it('fits a phone screen', async () => {
    // The same tab: the key lives in its sessionStorage.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${svc.url}/p/${projectId}/settings`);
    await page.locator('[data-testid="export-section"]').waitFor();
    await expectNoSidewaysScroll(page);
    await page.setViewportSize({ width: 1280, height: 800 });
  });
});
