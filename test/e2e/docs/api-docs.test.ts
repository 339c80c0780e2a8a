import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../../helpers/service.js';
import { launchBrowser, screenshot, type Browser } from '../dashboard/browser.js';

// The API reference at /api/docs: the service's OpenAPI document rendered by Swagger UI from the
// installed package, in a real Chromium, with nothing loaded from another origin.
let svc: TestService;
let browser: Browser & { consoleErrors: string[] };

beforeAll(async () => {
  svc = await startTestService();
  browser = await launchBrowser();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await svc?.stop();
});

describe('/api/docs', () => {
  it('is a same-origin page with a strict Content-Security-Policy, no key needed', async () => {
    const res = await fetch(`${svc.url}/api/docs`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/text\/html/);
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toMatch(/script-src[^;]*unsafe/);
    const html = await res.text();
    // Offline: every script and stylesheet comes from this service.
    expect(html).not.toMatch(/(src|href)="https?:/);
    for (const asset of html.matchAll(/(?:src|href)="(\/api\/docs\/[^"]+)"/g)) {
      const file = await fetch(`${svc.url}${asset[1]}`);
      expect(file.status, asset[1]).toBe(200);
    }
  });

  it('serves only the viewer files, not the rest of the package', async () => {
    expect((await fetch(`${svc.url}/api/docs/swagger-initializer.js`)).status).toBe(404);
    expect((await fetch(`${svc.url}/api/docs/package.json`)).status).toBe(404);
    expect((await fetch(`${svc.url}/api/docs/..%2Fpackage.json`)).status).toBe(404);
  });

  it('renders the service operations in Chromium without errors', async () => {
    const page = await browser.page();
    const foreign: string[] = [];
    page.on('request', (request) => {
      if (!request.url().startsWith(svc.url) && !request.url().startsWith('data:')) foreign.push(request.url());
    });
    await page.goto(`${svc.url}/api/docs`);
    // Paths show relative to the document's server URL (/api).
    await page.locator('.opblock-summary-path', { hasText: '/projects/{project_id}/analytics/query' }).first().waitFor({ timeout: 30_000 });
    const doc = (await svc.call('GET', '/openapi.json', { key: null })).body;
    await expect(page.locator('.info .title').first().innerText()).resolves.toContain(doc.info.title);
    // Every operation of the document is listed.
    const operations = Object.values(doc.paths as Record<string, object>).reduce((n: number, ops) => n + Object.keys(ops).length, 0);
    expect(await page.locator('.opblock').count()).toBe(operations);
    await screenshot(page, 'api-docs', { fullPage: false });
    expect(foreign).toEqual([]);
    expect(browser.consoleErrors).toEqual([]);
  });
});
