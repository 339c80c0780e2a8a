import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

/** Debian's chromium package (installed by .ci/run); Playwright's own browser downloads are not used. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface Browser {
  context: BrowserContext;
  page(viewport?: { width: number; height: number }): Promise<Page>;
  close(): Promise<void>;
}

/**
 * Headless Chromium with a fresh profile directory (launchPersistentContext is how Playwright takes
 * a --user-data-dir). Console errors and failed page loads are collected so a test can assert none.
 */
export async function launchBrowser(options: { timezoneId?: string } = {}): Promise<Browser & { consoleErrors: string[] }> {
  const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lookout-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: ARGS,
    viewport: { width: 1280, height: 800 },
    // The browser's own zone (what "local time" means on the page), e.g. America/Los_Angeles.
    ...(options.timezoneId ? { timezoneId: options.timezoneId, env: { ...process.env, TZ: options.timezoneId } } : {}),
  });
  const consoleErrors: string[] = [];
  const watch = (page: Page) => {
    page.on('console', (message) => {
      if (message.type() === 'error') consoleErrors.push(message.text());
    });
    page.on('pageerror', (error) => consoleErrors.push(String(error)));
  };
  context.pages().forEach(watch);
  context.on('page', watch);
  return {
    context,
    consoleErrors,
    async page(viewport) {
      const page = context.pages()[0] && context.pages()[0].url() === 'about:blank' ? context.pages()[0] : await context.newPage();
      if (viewport) await page.setViewportSize(viewport);
      return page;
    },
    async close() {
      await context.close();
      fs.rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}

export const ARTIFACTS = path.resolve('test-artifacts', 'dashboard');

export async function screenshot(page: Page, name: string, options: { fullPage?: boolean } = {}): Promise<string> {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  const file = path.join(ARTIFACTS, `${name}.png`);
  await page.screenshot({ path: file, fullPage: options.fullPage ?? true });
  return file;
}
