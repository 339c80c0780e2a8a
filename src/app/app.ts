import express, { type Express } from 'express';
import { pinoHttp } from 'pino-http';
import type { AppDeps } from './app-deps.js';
import type { LookoutModule } from './module.js';
import { apiDocsRouter } from '../platform/http/api-docs.js';
import { errorHandler, notFoundHandler } from '../platform/http/error-handler.js';

/**
 * The middleware chain: request log (Authorization redacted) → health → root routers (OTLP, MCP,
 * dashboard; they parse their own bodies) → JSON body limit → API routers → not-found → errors.
 */
export function createApp(deps: AppDeps, modules: LookoutModule[]): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', false);
  app.use(
    pinoHttp({
      logger: deps.logger,
      redact: { paths: ['req.headers.authorization', 'req.headers.cookie', 'req.headers["x-api-key"]'], censor: '[redacted]' },
      customLogLevel: (_req, res, err) => (err || res.statusCode >= 500 ? 'error' : res.statusCode >= 400 ? 'warn' : 'info'),
      autoLogging: { ignore: (req) => req.url === '/healthz' || req.url === '/readyz' },
    }),
  );

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', async (_req, res) => {
    const checks = await Promise.allSettled([deps.sql`select 1`, deps.ch.ping()]);
    const postgres = checks[0].status === 'fulfilled';
    const clickhouse = checks[1].status === 'fulfilled' && checks[1].value === true;
    res.status(postgres && clickhouse ? 200 : 503).json({ status: postgres && clickhouse ? 'ready' : 'unavailable', postgres, clickhouse });
  });

  const { roles } = deps.config;
  for (const module of modules) if (module.root && roles.has(module.roles?.root ?? 'api')) app.use(module.root(deps));

  const api = express.Router();
  api.use(express.json({ limit: deps.config.jsonBodyLimit, strict: true }));
  for (const module of modules) if (module.api && roles.has(module.roles?.api ?? 'api')) api.use(module.api(deps));
  api.get('/openapi.json', (_req, res) => {
    res.json(deps.openapi.toJSON());
  });
  // The API reference page (no key needed: it reads the public OpenAPI document).
  app.use('/api/docs', apiDocsRouter());
  app.use('/api', api);

  app.use(notFoundHandler);
  app.use(errorHandler(deps.metrics));
  return app;
}
