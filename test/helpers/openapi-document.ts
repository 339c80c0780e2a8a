import type { AppDeps } from '../../src/app/app-deps.js';
import { loadConfig } from '../../src/app/config.js';
import { modules } from '../../src/app/modules.js';
import { OpenApiDocument } from '../../src/platform/http/openapi.js';

/** A store no route may touch while the routers are only being built: any use throws. */
function untouchable(name: string): never {
  return new Proxy(
    {},
    {
      get(_target, property) {
        throw new Error(`${name}.${String(property)} used while building the routers`);
      },
    },
  ) as never;
}

/**
 * The OpenAPI document exactly as the service assembles it (every module's API router built in
 * start order, as src/app/app.ts mounts them), without stores: building a router registers its
 * operations and schemas and compiles its validators, and touches no store.
 */
export function buildOpenApiDocument(): OpenApiDocument {
  const openapi = new OpenApiDocument();
  const deps = {
    config: loadConfig({}),
    sql: untouchable('sql'),
    ch: untouchable('ch'),
    compute: untouchable('compute'),
    metrics: untouchable('metrics'),
    logger: untouchable('logger'),
    openapi,
    services: {},
  } as unknown as AppDeps;
  for (const module of modules) module.api?.(deps);
  return openapi;
}
