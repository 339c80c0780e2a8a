import type { Logger } from 'pino';
import type { Config } from './config.js';
import type { ClickHouseStore } from './stores/clickhouse.js';
import type { Sql } from './stores/postgres.js';
import type { OpenApiDocument } from './http/openapi.js';

/**
 * The services modules share, one optional key each. A module declares its key beside the service
 * it creates (`declare module '…/app-deps.js' { interface ServiceRegistry { … } }`), so this file
 * imports no feature module and every read is typed without a cast.
 */
export interface ServiceRegistry {}

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
  services: ServiceRegistry;
}
