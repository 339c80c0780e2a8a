import type { AppDeps } from '../app/app-deps.js';
import type { LookoutModule } from '../app/module.js';
import { traceHooks } from './trace-hook-registry.js';
import { PROJECT_DELETED_TOPIC } from '../tenancy/project-store.js';
import { IngestService } from './ingest-service.js';
import type { SettleLag } from './settle/settle-lag.js';
import { createOtlpRouter } from './otlp/otlp-router.js';
import { registryWindowMs, scheduleStoredTraceJobs } from './settle/stored-traces-jobs.js';
import { scheduleLoggedProjectsBackfill } from './settle/logged-projects.js';

declare module '../app/app-deps.js' {
  interface ServiceRegistry {
    ingest?: IngestService;
    /** The settle lag shared by the process's requests: back-pressure and the freshness of answers. */
    settleLag?: SettleLag;
  }
}

/**
 * The ingest module: POST /v1/traces and /v1/logs at the root, OTLP/gRPC on its own port (OTLP_GRPC_PORT), the
 * writer and the settler as background work.
 * Processed traces are priced with the cost module's book (`deps.services.priceBook`, set in its
 * init, which runs before this one: src/app/modules.ts lists cost first), on the compute pool
 * (src/spans/trace-pricing.ts TracePricing).
 * List it after the modules that listen to trace hooks: modules stop in reverse, and ingestion's
 * stop flushes and settles, which calls those hooks.
 */
export function ingestService(deps: AppDeps): IngestService {
  const service = deps.services.ingest;
  if (!service) throw new Error('ingest module not initialised');
  return service;
}

export const ingestModule: LookoutModule = {
  name: 'ingest',
  init(deps) {
    const service = new IngestService({
      config: deps.config,
      ch: deps.ch,
      compute: deps.compute,
      sql: deps.sql,
      logger: deps.logger.child({ module: 'ingest' }),
      hooks: traceHooks(deps),
      pricing: deps.services.priceBook,
      diskLow: () => deps.services.readiness?.diskLow ?? false,
      metrics: deps.metrics,
    });
    deps.services.ingest = service;
    deps.services.settleLag = service.lag;
    deps.services.events?.on(PROJECT_DELETED_TOPIC, (data) => {
      service.forgetProject(String(data.tenant_id), String(data.project_id));
    });
  },
  root: (deps) => createOtlpRouter(deps, ingestService(deps)),
  // The gRPC library loads only when OTLP/gRPC listens (OTLP_GRPC_PORT): a start without it skips its load.
  listen: async (deps) => {
    if (!deps.config.otlpGrpc) return null;
    const { startOtlpGrpcServer } = await import('./otlp/otlp-grpc-server.js');
    return startOtlpGrpcServer(deps, ingestService(deps));
  },
  // /v1/traces, /v1/logs and OTLP/gRPC in `ingest` processes; start/stop in all (the settler runs only with `worker`).
  roles: { root: 'ingest', listen: 'ingest', background: 'any' },
  async start(deps) {
    await ingestService(deps).start();
    // The stored-trace registry's backfill and retention run on the leader (worker processes).
    // So does the marking of projects whose log records were stored before marks existed.
    const leader = deps.services.leader;
    if (leader) {
      const logger = deps.logger.child({ module: 'ingest' });
      scheduleStoredTraceJobs(leader, { sql: deps.sql, ch: deps.ch, logger, maxFutureSkewMs: deps.config.ingestMaxFutureSkewMs, windowMs: registryWindowMs(deps.config) });
      scheduleLoggedProjectsBackfill(leader, { sql: deps.sql, ch: deps.ch, logger });
    }
  },
  stop: (deps) => ingestService(deps).stop(),
};
