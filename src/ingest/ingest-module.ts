import type { AppDeps } from '../app-deps.js';
import type { LookoutModule } from '../module.js';
import type { SharedEvents } from '../stores/shared-events.js';
import { traceHooks } from '../trace-hooks.js';
import { PROJECT_DELETED_TOPIC } from '../workspace/projects/project-store.js';
import { IngestService } from './ingest-service.js';
import { createOtlpRouter } from './otlp-router.js';
import type { PriceTrace } from './trace-summary.js';

/**
 * The ingest module: POST /v1/traces at the root, the writer and the settler as background work.
 * The cost module prices processed traces by putting its PriceTrace function on
 * `deps.services.priceTrace` (read at each processing, so the order of module init does not matter).
 * List it after the modules that listen to trace hooks: modules stop in reverse, and ingestion's
 * stop flushes and settles, which calls those hooks.
 */
export function ingestService(deps: AppDeps): IngestService {
  const service = deps.services.ingest as IngestService | undefined;
  if (!service) throw new Error('ingest module not initialised');
  return service;
}

export const ingestModule: LookoutModule = {
  name: 'ingest',
  init(deps) {
    const service = new IngestService({
      config: deps.config,
      ch: deps.ch,
      sql: deps.sql,
      logger: deps.logger.child({ module: 'ingest' }),
      hooks: traceHooks(deps),
      priceTrace: () => deps.services.priceTrace as PriceTrace | undefined,
    });
    deps.services.ingest = service;
    (deps.services.events as SharedEvents | undefined)?.on(PROJECT_DELETED_TOPIC, (data) => {
      service.forgetProject(String(data.tenant_id), String(data.project_id));
    });
  },
  root: (deps) => createOtlpRouter(deps, ingestService(deps)),
  // /v1/traces in `ingest` processes; start/stop in all (the settler runs only with `worker`).
  roles: { root: 'ingest', background: 'any' },
  start: (deps) => ingestService(deps).start(),
  stop: (deps) => ingestService(deps).stop(),
};
