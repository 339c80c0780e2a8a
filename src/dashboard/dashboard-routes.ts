import fs from 'node:fs';
import path from 'node:path';
import express, { Router, type Request, type Response } from 'express';
import type { AppDeps } from '../app/app-deps.js';
import { projectRoot } from '../app/project-root.js';

/** Where `npm run build` (scripts/build-web.mjs) writes the browser app. */
export function defaultWebDir(): string {
  return path.join(projectRoot, 'dist', 'web');
}

/**
 * Paths the dashboard never answers: they belong to the REST API, OTLP ingestion and MCP, so a typo there gets their JSON 404, never an HTML page.
 */
const RESERVED_PREFIXES = ['/api', '/v1', '/mcp', '/healthz', '/readyz'];

export function isReservedPath(urlPath: string): boolean {
  return RESERVED_PREFIXES.some((prefix) => urlPath === prefix || urlPath.startsWith(`${prefix}/`));
}

/**
 * The page is same-origin only: scripts and styles from our own bundle, API calls to our own origin.
 * 'unsafe-inline' for styles only, because the chart library positions its cursor and legend with
 * inline style attributes.
 */
const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
  "form-action 'self'",
].join('; ');

function setPageHeaders(res: Response): void {
  res.set({
    'Content-Security-Policy': CONTENT_SECURITY_POLICY,
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'no-referrer',
    'X-Frame-Options': 'DENY',
  });
}

/** A browser navigation asks for HTML by name; fetch() and curl send * / * and get the JSON 404 instead. */
function wantsHtml(req: Request): boolean {
  const accept = req.headers.accept ?? '';
  return /(^|,)\s*text\/html\s*(;|,|$)/i.test(accept);
}

const NOT_BUILT_PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Lookout</title></head>
<body><h1>Dashboard not built</h1><p>The dashboard's assets are missing. Run <code>npm run build</code> and restart the service.</p>
<p>The REST API is at <code>/api</code>.</p></body></html>`;

/**
 * Serves the dashboard built into dist/web: hashed assets under /assets (cached for good), and
 * index.html for `/` and for any other GET that a browser navigates to (the app routes with the
 * History API, so a reload of /p/…/traces must return the app). Never touches reserved paths.
 */
export function dashboardRoutes(_deps: AppDeps, webDir: string = defaultWebDir()): Router {
  const router = Router();
  const indexPath = path.join(webDir, 'index.html');

  router.use((req, _res, next) => {
    if (isReservedPath(req.path)) next('router');
    else next();
  });

  router.use(
    '/assets',
    express.static(path.join(webDir, 'assets'), {
      index: false,
      immutable: true,
      maxAge: '365d',
      setHeaders: (res) => res.setHeader('X-Content-Type-Options', 'nosniff'),
    }),
  );

  // The icon browsers ask for by name, beside the app rather than under the hashed /assets.
  for (const [file, type] of [['favicon.ico', 'image/x-icon'], ['favicon.svg', 'image/svg+xml']] as const) {
    router.get(`/${file}`, (_req, res, next) => {
      res.set({ 'X-Content-Type-Options': 'nosniff', 'Content-Type': type });
      res.sendFile(path.join(webDir, file), { maxAge: '1d' }, (error) => {
        if (error) next();
      });
    });
  }

  router.use('/assets', (req, res) => {
    res.status(404).json({ detail: `No dashboard asset ${req.path}`, code: 'not_found' });
  });

  router.use((req, res, next) => {
    if ((req.method !== 'GET' && req.method !== 'HEAD') || (req.path !== '/' && !wantsHtml(req))) {
      next();
      return;
    }
    setPageHeaders(res);
    res.set('Cache-Control', 'no-cache');
    fs.readFile(indexPath, (error, html) => {
      if (error) {
        res.status(503).type('html').send(NOT_BUILT_PAGE);
        return;
      }
      res.status(200).type('html').send(html);
    });
  });

  return router;
}
