import express, { type Express } from 'express';
import { pinoHttp } from 'pino-http';
import type { AppDeps } from './app-deps.js';
import type { LookoutModule } from './module.js';
import { apiDocsRouter } from '../platform/http/api-docs.js';
import { responseCompression } from '../platform/http/compression.js';
import { errorHandler, notFoundHandler } from '../platform/http/error-handler.js';
import { requestDeadline } from '../platform/http/request-deadline.js';

/**
 * The middleware chain: request log (Authorization redacted) → health → compression (dashboard
 * and API answers) → root routers (OTLP, MCP, dashboard; they parse their own bodies) → JSON body
 * limit → API routers → not-found → errors.
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
  // Each store probed with its own short timeout (READY_PROBE_TIMEOUT_MS), so the answer comes within
  // that bound whatever the stores do; `disk` is the DATA_DIR free-space floor.
  app.get('/readyz', async (_req, res) => {
    const readiness = deps.services.readiness;
    const report = readiness
      ? await readiness.check()
      : { ready: false, postgres: false, clickhouse: false, disk: false };
    const failed = [...(report.postgres ? [] : ['postgres']), ...(report.clickhouse ? [] : ['clickhouse']), ...(report.disk ? [] : ['disk'])];
    res.status(report.ready ? 200 : 503).json({
      status: report.ready ? 'ready' : 'unavailable',
      postgres: report.postgres,
      clickhouse: report.clickhouse,
      disk: report.disk,
      ...(failed.length > 0 ? { failed } : {}),
    });
  });
  app.use(requestDeadline(deps.config.faults.requestTimeoutSeconds));
  app.use(responseCompression());

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
