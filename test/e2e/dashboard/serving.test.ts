import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dashboardRoutes, isReservedPath } from '../../../src/dashboard/dashboard-routes.js';
import type { AppDeps } from '../../../src/app/app-deps.js';

// The dashboard router on its own, in front of a stand-in API router, over a hand-made asset
// directory: which requests get the app, which get assets, and which are left to the API.
let server: http.Server;
let base: string;
let webDir: string;

function start(dir: string): Promise<{ server: http.Server; base: string }> {
  const app = express();
  app.use(dashboardRoutes({} as AppDeps, dir));
  app.use('/api', (_req, res) => res.status(404).json({ detail: 'api', code: 'not_found' }));
  app.use((_req, res) => res.status(404).json({ detail: 'fallthrough', code: 'not_found' }));
  return new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve({ server: s, base: `http://127.0.0.1:${(s.address() as { port: number }).port}` }));
  });
}

beforeAll(async () => {
  webDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lookout-web-'));
  fs.mkdirSync(path.join(webDir, 'assets'));
  fs.writeFileSync(path.join(webDir, 'index.html'), '<!doctype html><title>app</title><div id="app"></div>');
  fs.writeFileSync(path.join(webDir, 'assets', 'main-ABC.js'), 'console.log(1)');
  ({ server, base } = await start(webDir));
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  fs.rmSync(webDir, { recursive: true, force: true });
});

const html = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' };

describe('dashboard serving', () => {
  it('answers / with the app and page security headers', async () => {
    const res = await fetch(`${base}/`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/text\/html/);
    expect(res.headers.get('cache-control')).toBe('no-cache');
    expect(res.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    expect(await res.text()).toContain('<div id="app">');
  });

  it('answers a browser navigation to a deep link with the app (History API routing)', async () => {
    const res = await fetch(`${base}/p/123/traces?agent_name=x`, { headers: html });
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('<div id="app">');
  });

  it('leaves non-HTML requests for unknown paths to the 404 handler', async () => {
    const res = await fetch(`${base}/p/123/traces`, { headers: { accept: '*/*' } });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ detail: 'fallthrough', code: 'not_found' });
    const post = await fetch(`${base}/p/123`, { method: 'POST', headers: html });
    expect(post.status).toBe(404);
  });

  it('never answers /api, /v1 or /mcp paths, even for a browser', async () => {
    for (const p of ['/api/nope', '/api', '/v1/traces', '/mcp', '/healthz']) {
      const res = await fetch(`${base}${p}`, { headers: html });
      expect(res.status, p).toBe(404);
      expect(res.headers.get('content-type'), p).toMatch(/application\/json/);
    }
    expect(isReservedPath('/api')).toBe(true);
    expect(isReservedPath('/apis')).toBe(false);
    expect(isReservedPath('/v1/traces')).toBe(true);
    expect(isReservedPath('/mcp/x')).toBe(true);
    expect(isReservedPath('/p/1')).toBe(false);
  });

  it('serves hashed assets with a long cache life and 404s a missing one as JSON', async () => {
    const res = await fetch(`${base}/assets/main-ABC.js`);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toContain('immutable');
    expect(res.headers.get('content-type')).toMatch(/javascript/);
    const missing = await fetch(`${base}/assets/main-NOPE.js`, { headers: html });
    expect(missing.status).toBe(404);
    expect((await missing.json()).code).toBe('not_found');
  });

  it('explains how to build when the assets are missing', async () => {
    const empty = fs.mkdtempSync(path.join(os.tmpdir(), 'lookout-web-empty-'));
    const other = await start(empty);
    try {
      const res = await fetch(`${other.base}/`, { headers: html });
      expect(res.status).toBe(503);
      expect(await res.text()).toContain('npm run build');
    } finally {
      await new Promise((resolve) => other.server.close(resolve));
      fs.rmSync(empty, { recursive: true, force: true });
    }
  });
});
