import type { Router } from 'express';
import type { AppDeps } from './app-deps.js';
import type { Role } from './config.js';

/** A server a module runs on a port of its own (OTLP/gRPC), beside the HTTP server and closed with it. */
export interface ModuleListener {
  name: string;
  /** The port it listens on (the one the OS gave when asked for any). */
  port: number;
  /** Stops taking calls, lets those in flight finish within `graceMs`, then cuts the rest. */
  close(graceMs: number): Promise<void>;
}

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
  /** A listener of its own, opened after the HTTP server listens; null when configured off. */
  listen?(deps: AppDeps): Promise<ModuleListener | null>;
  /** Background work that starts after the server listens. */
  start?(deps: AppDeps): Promise<void> | void;
  /** Drain and stop; called on shutdown after the server stops accepting. */
  stop?(deps: AppDeps): Promise<void> | void;
  /**
   * Which LOOKOUT_ROLES mount the routers, open the listener and run start/stop. Defaults: routers
   * and listeners need `api`, background work needs `worker`; `any` runs in every process (it then
   * checks roles itself).
   */
  roles?: { root?: Role; api?: Role; listen?: Role; background?: Role | 'any' };
}
