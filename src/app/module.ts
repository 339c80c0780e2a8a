import type { Router } from 'express';
import type { AppDeps } from './app-deps.js';
import type { Role } from './config.js';

/**
 * A feature module: its routers and its background work. src/app/modules.ts lists them; the app mounts
 * `api` routers under /api and `root` routers at /, and the service starts them in order and stops
 * them in reverse (so the ingest writer flushes before the stores close).
 */
export interface LookoutModule {
  name: string;
  /** Create services and put them on deps.services before any router is built. */
  init?(deps: AppDeps): Promise<void> | void;
  api?(deps: AppDeps): Router;
  root?(deps: AppDeps): Router;
  /** Background work that starts after the server listens. */
  start?(deps: AppDeps): Promise<void> | void;
  /** Drain and stop; called on shutdown after the server stops accepting. */
  stop?(deps: AppDeps): Promise<void> | void;
  /**
   * Which LOOKOUT_ROLES mount the routers and run start/stop. Defaults: routers need `api`,
   * background work needs `worker`; `any` runs in every process (it then checks roles itself).
   */
  roles?: { root?: Role; api?: Role; background?: Role | 'any' };
}
