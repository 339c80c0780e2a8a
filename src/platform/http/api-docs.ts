import { createRequire } from 'node:module';
import path from 'node:path';
import { Router, type Response } from 'express';

/**
 * The API reference at /api/docs: the service's own OpenAPI document (/api/openapi.json) rendered
 * by Swagger UI, served from the installed swagger-ui-dist package so it works offline (no CDN).
 * Only the viewer's own files are served, by name; the package's sample initializer (which points
 * at a public pet-store document) is never used: ours is /api/docs/init.js.
 */
const require = createRequire(import.meta.url);
const SWAGGER_DIR = path.dirname(require.resolve('swagger-ui-dist/package.json'));
// The stylesheet's source map too: developer tools ask for it by its sourceMappingURL.
const SWAGGER_FILES = ['swagger-ui.css', 'swagger-ui.css.map', 'swagger-ui-bundle.js', 'favicon-16x16.png', 'favicon-32x32.png'];

/**
 * Same-origin only. Swagger UI sets inline style attributes (hence 'unsafe-inline' for styles,
 * never for scripts) and shows schema images as data: URLs; "Try it out" calls our own origin.
 */
const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self' data:",
  "object-src 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
  "form-action 'self'",
].join('; ');

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Lookout API reference</title>
<link rel="stylesheet" href="/api/docs/swagger-ui.css">
<link rel="icon" type="image/png" href="/api/docs/favicon-32x32.png" sizes="32x32">
</head>
<body>
<div id="swagger-ui"></div>
<noscript>The API reference needs JavaScript. The OpenAPI document itself is at /api/openapi.json.</noscript>
<script src="/api/docs/swagger-ui-bundle.js"></script>
<script src="/api/docs/init.js"></script>
</body>
</html>
`;

// "Authorize" takes an API key (Bearer); Swagger UI keeps it in page memory only (persistAuthorization off).
const INIT = `window.ui = SwaggerUIBundle({
  url: '/api/openapi.json',
  dom_id: '#swagger-ui',
  deepLinking: true,
  presets: [SwaggerUIBundle.presets.apis],
  layout: 'BaseLayout',
  persistAuthorization: false,
  tryItOutEnabled: false,
});
`;

function pageHeaders(res: Response): void {
  res.set({
    'Content-Security-Policy': CONTENT_SECURITY_POLICY,
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'no-referrer',
    'X-Frame-Options': 'DENY',
  });
}

export function apiDocsRouter(): Router {
  const router = Router({ strict: false });
  router.get('/', (_req, res) => {
    pageHeaders(res);
    res.set('Cache-Control', 'no-cache').type('html').send(PAGE);
  });
  router.get('/init.js', (_req, res) => {
    res.set({ 'Cache-Control': 'no-cache', 'X-Content-Type-Options': 'nosniff' }).type('js').send(INIT);
  });
  for (const file of SWAGGER_FILES) {
    router.get(`/${file}`, (_req, res, next) => {
      res.set('X-Content-Type-Options', 'nosniff');
      // The package version is in the path on disk, not the URL: revalidate rather than cache for good.
      res.sendFile(path.join(SWAGGER_DIR, file), { maxAge: '1h' }, (error) => {
        if (error) next(error);
      });
    });
  }
  return router;
}
