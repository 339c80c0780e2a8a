import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppDeps } from '../../../src/app/app-deps.js';
import { dashboardRoutes } from '../../../src/dashboard/dashboard-routes.js';
import { projectRoot } from '../../../src/app/project-root.js';
import { launchBrowser, type Browser } from './browser.js';

// The dashboard's icon: built by scripts/build-web.mjs, served by name (/favicon.ico, which
// browsers ask for unprompted) and linked from the page; Chromium decodes both forms.
let webDir: string;
let server: http.Server;
let base: string;
let browser: Browser & { consoleErrors: string[] };

beforeAll(async () => {
  webDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lookout-web-icon-'));
  execFileSync(process.execPath, [path.join(projectRoot, 'scripts', 'build-web.mjs'), '--out', webDir], { cwd: projectRoot, stdio: 'pipe' });
  const app = express();
  app.use(dashboardRoutes({} as AppDeps, webDir));
  app.use((_req, res) => res.status(404).json({ detail: 'not found', code: 'not_found' }));
  await new Promise<void>((resolve) => {
    server = app.listen(0, '127.0.0.1', () => resolve());
  });
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  browser = await launchBrowser();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => server?.close(resolve));
  if (webDir) fs.rmSync(webDir, { recursive: true, force: true });
});

describe('favicon', () => {
  it('is served by name as an icon file with one 32×32 image', async () => {
    const ico = await fetch(`${base}/favicon.ico`);
    expect(ico.status).toBe(200);
    expect(ico.headers.get('content-type')).toBe('image/x-icon');
    const bytes = new Uint8Array(await ico.arrayBuffer());
    expect([...bytes.slice(0, 8)]).toEqual([0, 0, 1, 0, 1, 0, 32, 32]); // ICO header: one image, 32×32
    const svg = await fetch(`${base}/favicon.svg`);
    expect(svg.headers.get('content-type')).toMatch(/^image\/svg\+xml/);
  });

  it('is linked from the page, and Chromium decodes both forms', async () => {
    const page = await browser.page();
    await page.goto(`${base}/`);
    const links = await page.locator('link[rel="icon"]').evaluateAll((l) => l.map((x) => x.getAttribute('href')));
    expect(links).toEqual(['/favicon.svg', '/favicon.ico']);
    for (const href of links) {
      const size = await page.evaluate(
        (src) =>
          new Promise<number[]>((resolve, reject) => {
            const img = new Image();
            img.onload = () => resolve([img.naturalWidth, img.naturalHeight]);
            img.onerror = () => reject(new Error(`${src} did not decode`));
            img.src = src;
          }),
        href!,
      );
      expect(size[0]).toBeGreaterThan(0);
    }
  });
});
