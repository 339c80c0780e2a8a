import type { Logger } from 'pino';
import type { ComputePool } from '../platform/compute/compute-pool.js';
import type { Config } from './config.js';
import type { HarnessOptions } from './harness-options.js';
import type { ClickHouseStore } from '../platform/clickhouse/clickhouse.js';
import type { Sql } from '../platform/postgres/postgres.js';
import type { OpenApiDocument } from '../platform/http/openapi.js';
import type { Leader } from '../platform/postgres/leader.js';
import type { Metrics } from '../platform/metrics/metrics.js';
import type { SharedEvents } from '../platform/postgres/shared-events.js';
import type { Readiness } from '../platform/readiness.js';

/**
 * The services modules share, one optional key each. A module declares its key beside the service
 * it creates (`declare module '…/app-deps.js' { interface ServiceRegistry { … } }`), so this file
 * imports no feature module and every read is typed without a cast.
 */
export interface ServiceRegistry {
  /** Cross-process cache invalidation (LISTEN/NOTIFY); set by the service before modules init. */
  events?: SharedEvents;
  /** The periodic-job leader; only in processes with the `worker` role. */
  leader?: Leader;
  /** Store probes and the DATA_DIR free-space floor (/readyz; ingestion refuses below the floor). */
  readiness?: Readiness;
}

/**
 * What every router and service gets: configuration, both stores, the OpenAPI document routes
 * register into, and the logger. Modules that own background work (ingest writer, outbox relay,
 * monitor evaluator) hang their services off `services` so routes and MCP tools share them.
 */
export interface AppDeps {
  config: Config;
  /** What the test or benchmark that started this service set (empty in production). */
  harness: HarnessOptions;
  sql: Sql;
  ch: ClickHouseStore;
  openapi: OpenApiDocument;
  logger: Logger;
  /** The worker pool for CPU-heavy work (decoding, summaries, big payloads): the event loop only routes. */
  compute: ComputePool;
  /** The Prometheus metrics (src/platform/metrics/metrics.ts): counters where things happen, levels read on scrape. */
  metrics: Metrics;
  services: ServiceRegistry;
}
