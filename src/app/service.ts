import http from 'node:http';
import path from 'node:path';
import { pino, type Logger } from 'pino';
import type { AppDeps } from './app-deps.js';
import { createApp } from './app.js';
import { bootstrapTenant } from './bootstrap.js';
import type { Config } from './config.js';
import type { HarnessOptions } from './harness-options.js';
import type { LookoutModule, ModuleListener } from './module.js';
import { modules as allModules } from './modules.js';
import { createComputePool } from './compute-tasks.js';
import { OpenApiDocument } from '../platform/http/openapi.js';
import { projectRoot } from './project-root.js';
import { openClickHouse, type ClickHouseStore } from '../platform/clickhouse/clickhouse.js';
import { migrateStores, pendingMigrations, type MigrateMode, type MigrationDirs, type MigrationResult } from '../platform/migrations.js';
import { openPostgres, type Sql } from '../platform/postgres/postgres.js';
import { Leader } from '../platform/postgres/leader.js';
import { SharedEvents } from '../platform/postgres/shared-events.js';
import { Metrics } from '../platform/metrics/metrics.js';
import { startMetricsServer, type MetricsServer } from '../platform/metrics/metrics-server.js';
import { observePlatform } from '../platform/metrics/platform-metrics.js';
import { Readiness } from '../platform/readiness.js';

/** True when `work` settles within `ms` (its failure counts as finished: it was logged where it happened). */
async function finishesWithin(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([work.then(() => true, () => true), late]);
  } finally {
    clearTimeout(timer);
  }
}

export interface RunningService {
  deps: AppDeps;
  server: http.Server;
  port: number;
  url: string;
  /** The modules' own listeners (OTLP/gRPC), open in this process. */
  listeners: ModuleListener[];
  /** Where Prometheus scrapes this process (METRICS_HOST, METRICS_PORT); null with METRICS_PORT 0. */
  metricsUrl: string | null;
  /** Set when this start created the `default` tenant. */
  bootstrap: { tenantId: string; adminKey: string; generated: boolean } | null;
  /** The migration files this start applied (null with LOOKOUT_MIGRATE off). */
  migrations: MigrationResult | null;
  stop(): Promise<void>;
}

export interface StoresAndDeps {
  deps: AppDeps;
  /** What this open applied; null when migration was turned off (only checked) or left to the caller. */
  migrations: MigrationResult | null;
  /** PostgreSQL's URL (the embedded server's when no DATABASE_URL), for connections outside the pool. */
  postgresUrl: string;
  close(): Promise<void>;
}

/** A listen address as a URL host: the wildcard addresses are reached on loopback, IPv6 in brackets. */
function urlHost(host: string): string {
  if (host === '0.0.0.0' || host === '::' || host === '') return '127.0.0.1';
  return host.includes(':') ? `[${host}]` : host;
}

export const migrationDirs: MigrationDirs = { postgres: path.join(projectRoot, 'sql'), clickhouse: path.join(projectRoot, 'clickhouse') };

async function prepareStores(sql: Sql, ch: ClickHouseStore, mode: MigrateMode): Promise<MigrationResult | null> {
  if (mode === 'apply') return migrateStores(sql, ch, migrationDirs);
  if (mode === 'check') {
    const pending = await pendingMigrations(sql, ch, migrationDirs);
    const names = [...pending.postgres.map((n) => `sql/${n}`), ...pending.clickhouse.map((n) => `clickhouse/${n}`)];
    if (names.length > 0) throw new Error(`Migrations pending (${names.join(', ')}) and LOOKOUT_MIGRATE is off: run \`npm run admin -- migrate\` first`);
  }
  return null;
}

/**
 * Opens both stores and prepares their schema: what the service and the admin CLI share.
 * `clickhouse` is a store opened by the caller and shared (several instances in one process, which
 * the embedded engine needs: it binds one data directory per process); the caller closes it.
 * `migrate` defaults to what LOOKOUT_MIGRATE says; `harness` is what a test or benchmark sets.
 */
export async function openStores(
  config: Config,
  logger: Logger,
  shared: { clickhouse?: ClickHouseStore; migrate?: MigrateMode; metrics?: Metrics; harness?: HarnessOptions } = {},
): Promise<StoresAndDeps> {
  const harness = shared.harness ?? {};
  const pg = await openPostgres({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    statsFile: harness.statsFiles?.postgres ?? null,
    statementTimeoutMs: config.faults.postgresStatementTimeoutMs,
    logger,
    // A PostgreSQL server of one's own may come up after Lookout; the embedded one is started here.
    startupWaitMs: config.databaseUrl ? config.faults.postgresStartupWaitMs : 0,
  });
  let ch: ClickHouseStore;
  try {
    ch = shared.clickhouse ?? (await openClickHouse({
      ...config.clickhouse,
      dataDir: config.dataDir,
      queryTimeoutSeconds: config.queryTimeoutSeconds,
      statsFile: harness.statsFiles?.clickhouse ?? null,
      // A ClickHouse server may come up after Lookout; the embedded engine opens here.
      startupWaitMs: config.faults.clickhouseStartupWaitMs,
      logger: logger.child({ component: 'clickhouse' }),
    }));
  } catch (error) {
    await pg.close();
    throw error;
  }
  const closeClickHouse = () => (shared.clickhouse ? Promise.resolve() : ch.close());
  let migrations: MigrationResult | null;
  try {
    migrations = await prepareStores(pg.sql, ch, shared.migrate ?? (config.migrateOnStart ? 'apply' : 'check'));
  } catch (error) {
    await closeClickHouse();
    await pg.close();
    throw error;
  }
  const compute = createComputePool({ threads: config.computeThreads, statsFile: harness.statsFiles?.compute ?? null, heapMb: config.computeHeapMb, workerFile: harness.computeWorkerFile });
  const metrics = shared.metrics ?? new Metrics({ defaultMetrics: false });
  observePlatform(metrics, ch, compute);
  const deps: AppDeps = { config, harness, sql: pg.sql, ch, openapi: new OpenApiDocument(), logger, compute, metrics, services: {} };
  deps.services.readiness = new Readiness({
    sql: pg.sql,
    ch,
    dataDir: config.dataDir,
    watchDisk: !config.databaseUrl || !config.clickhouse.url,
    minFreeBytes: config.faults.dataDirMinFreeBytes,
    probeTimeoutMs: config.faults.readyProbeTimeoutMs,
    logger: logger.child({ component: 'readiness' }),
  });
  deps.services.readiness.start();
  return {
    deps,
    migrations,
    postgresUrl: pg.url,
    async close() {
      deps.services.readiness?.stop();
      await compute.close();
      await closeClickHouse();
      await pg.close();
    },
  };
}

/**
 * Starts the whole service: stores (`options.clickhouse`: a ClickHouse shared with other instances,
 * which it then never closes; `options.harness`: what a test or benchmark sets), migrations,
 * bootstrap, modules, HTTP. stop() is the graceful shutdown: stop accepting, let in-flight requests
 * finish, stop modules in reverse (the ingest writer flushes and settles), then close both stores.
 */
export async function startService(
  config: Config,
  options: { logger?: Logger; modules?: LookoutModule[]; clickhouse?: ClickHouseStore; harness?: HarnessOptions } = {},
): Promise<RunningService> {
  const logger = options.logger ?? pino({ level: config.logLevel });
  const modules = options.modules ?? allModules;
  // Process metrics (event-loop lag, memory, GC) only where someone can scrape them.
  const stores = await openStores(config, logger, { clickhouse: options.clickhouse, harness: options.harness, metrics: new Metrics({ defaultMetrics: config.metricsPort > 0 }) });
  const { deps } = stores;
  const bootstrap = await bootstrapTenant(deps.sql, config.bootstrapKey);
  // Cross-process cache invalidation (every role) and the periodic-job leader (worker processes).
  const events = new SharedEvents(deps.sql, logger.child({ component: 'shared-events' }));
  await events.start();
  deps.services.events = events;
  const leader = config.roles.has('worker') ? new Leader(stores.postgresUrl, logger.child({ component: 'leader' })) : null;
  if (leader) deps.services.leader = leader;
  for (const module of modules) await module.init?.(deps);
  let metricsServer: MetricsServer | null = null;
  if (config.metricsPort > 0) {
    try {
      metricsServer = await startMetricsServer(deps.metrics, config.metricsHost, config.metricsPort);
    } catch (error) {
      await events.stop();
      await stores.close();
      throw new Error(`METRICS_PORT ${config.metricsPort} on ${config.metricsHost}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    }
  }
  const app = createApp(deps, modules);
  const server = http.createServer(app);
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const listeners: ModuleListener[] = [];
  try {
    for (const module of modules) {
      if (!module.listen || !config.roles.has(module.roles?.listen ?? 'api')) continue;
      const listener = await module.listen(deps);
      if (listener) listeners.push(listener);
    }
  } catch (error) {
    // A port in use fails the start as PORT's would; what already listens is closed first.
    await Promise.all(listeners.map((l) => l.close(0)));
    await new Promise<void>((resolve) => server.close(() => resolve()));
    throw error;
  }
  // Background work runs in the processes whose roles it needs (src/app/module.ts).
  const background = modules.filter((m) => {
    const role = m.roles?.background ?? 'worker';
    return role === 'any' || config.roles.has(role);
  });
  for (const module of background) await module.start?.(deps);
  await leader?.start();

  let stopping: Promise<void> | null = null;
  // The whole shutdown is bounded (SHUTDOWN_TIMEOUT_MS, default 10 s) even with a store that is gone
  // or frozen: requests get the first half to finish, the background work (the writer's last flush,
  // settling, the outbox) what is left; what cannot be done by then stays where it is durable (the
  // settle queue, the outbox, ClickHouse) for the next start. Closing the stores has its own bound.
  const stop = () =>
    (stopping ??= (async () => {
      const started = Date.now();
      const budget = config.faults.shutdownTimeoutMs;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      // In-flight requests get a grace period; connections still busy after it are cut.
      const timer = setTimeout(() => server.closeAllConnections(), budget / 2);
      // The modules' listeners stop taking calls at the same time and drain within the same grace.
      await Promise.all([closed, ...listeners.map((l) => l.close(budget / 2))]);
      clearTimeout(timer);
      const work = (async () => {
        await metricsServer?.close();
        await leader?.stop();
        for (const module of [...background].reverse()) {
          try {
            await module.stop?.(deps);
          } catch (error) {
            logger.error({ err: error, module: module.name }, 'module stop failed');
          }
        }
        await events.stop();
      })();
      const left = Math.max(500, budget - (Date.now() - started));
      if (!(await finishesWithin(work, left))) {
        logger.warn({ waitedMs: Date.now() - started }, 'shutdown: background work not finished in time (a store is not answering); it resumes from the settle queue and outbox at the next start');
      }
      await stores.close();
    })());

  return { deps, server, port, url: `http://127.0.0.1:${port}`, listeners, metricsUrl: metricsServer ? `http://${urlHost(config.metricsHost)}:${metricsServer.port}/metrics` : null, bootstrap, migrations: stores.migrations, stop };
}
