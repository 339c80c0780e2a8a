import type { Logger } from 'pino';
import type { ComputePool } from './compute/compute-pool.js';
import type { Config } from './config.js';
import type { ClickHouseStore } from './stores/clickhouse.js';
import type { Sql } from './stores/postgres.js';
import type { OpenApiDocument } from './http/openapi.js';

/**
 * What every router and service gets: configuration, both stores, the OpenAPI document routes
 * register into, and the logger. Modules that own background work (ingest writer, outbox relay,
 * monitor evaluator) hang their services off `services` so routes and MCP tools share them.
 */
export interface AppDeps {
  config: Config;
  sql: Sql;
  ch: ClickHouseStore;
  openapi: OpenApiDocument;
  logger: Logger;
  /** The worker pool for CPU-heavy work (decoding, summaries, big payloads): the event loop only routes. */
  compute: ComputePool;
  services: Record<string, unknown>;
}
