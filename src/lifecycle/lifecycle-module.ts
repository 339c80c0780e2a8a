import { Router } from 'express';
import type { AppDeps } from '../app/app-deps.js';
import type { LookoutModule } from '../app/module.js';
import { deletionRoutes } from './deletion-routes.js';
import { DeletionRunner } from './deletion-runner.js';
import { retentionRoutes } from './retention-routes.js';

declare module '../app/app-deps.js' {
  interface ServiceRegistry {
    /** This process's deletion runner; the routes wake it after creating a job. */
    deletionRunner?: DeletionRunner;
  }
}

/**
 * The data lifecycle: retention per project (routes; the engine's TTL enforces it) and deletion jobs
 * (routes, and the runner that works through them in worker processes). docs/data-lifecycle.md.
 */
export const lifecycleModule: LookoutModule = {
  name: 'lifecycle',
  init(deps: AppDeps) {
    deps.services.deletionRunner = new DeletionRunner(deps.sql, deps.ch, deps.logger.child({ component: 'deletions' }), {
      leaseMs: deps.config.deletionLeaseMs,
      // A write accepted for a project just before its deletion lands within INGEST_TIMEOUT_MS (deletion-job.ts).
      job: { projectGraceMs: deps.config.faults.ingestTimeoutMs + 5_000 },
    });
  },
  api(deps: AppDeps) {
    const router = Router();
    deletionRoutes(router, deps);
    retentionRoutes(router, deps);
    return router;
  },
  start(deps: AppDeps) {
    deps.services.deletionRunner?.start();
  },
  async stop(deps: AppDeps) {
    await deps.services.deletionRunner?.stop();
  },
};
