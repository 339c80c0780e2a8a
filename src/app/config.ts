/**
 * The service's configuration: the environment read through the schema (config-schema.ts), then
 * shaped the way the code uses it (grouped per store, units converted, defaults that follow other
 * settings filled in) and checked across variables. Invalid values stop the start with a message
 * naming each variable at fault.
 */
import os from 'node:os';
import path from 'node:path';
import { ConfigError, readSettings, type SettingValues } from '../platform/settings/setting.js';
import { CONFIG_SCHEMA, type Role } from './config-schema.js';

export { ROLES, type Role } from './config-schema.js';
export { ConfigError } from '../platform/settings/setting.js';

export type Settings = SettingValues<typeof CONFIG_SCHEMA>;

/** One compute thread per core but one (the event loop's), at least two: one for decoding, one for settling and reads. */
export function defaultComputeThreads(): number {
  return Math.max(2, os.availableParallelism() - 1);
}

/**
 * The settle cache's default bound: twice the ingest budget, between 4 and 256 MiB. An operator who
 * bounds ingest memory tightly gets a cache of the same order, not a fixed few hundred MiB beside it.
 */
export function defaultSettleCacheBytes(inflightBytes: number): number {
  const MiB = 1024 * 1024;
  return Math.min(256 * MiB, Math.max(4 * MiB, 2 * inflightBytes));
}

/**
 * What the cluster variables say together. Without replication nothing coordinates DDL across
 * nodes (ON CLUSTER needs Keeper), so migrations need every node's address; with replication they
 * run ON CLUSTER, which also gives each rebuilt table one UUID, and so one Keeper path, on every
 * replica.
 */
function clusterProblems(s: Settings): string[] {
  const replicated = s.CLICKHOUSE_CLUSTER_REPLICATED;
  const nodes = s.CLICKHOUSE_CLUSTER_NODES ?? [];
  if (!s.CLICKHOUSE_CLUSTER && (nodes.length > 0 || !replicated)) return ['CLICKHOUSE_CLUSTER_NODES and CLICKHOUSE_CLUSTER_REPLICATED need CLICKHOUSE_CLUSTER'];
  if (!replicated && nodes.length === 0) return ['CLICKHOUSE_CLUSTER_REPLICATED=off needs CLICKHOUSE_CLUSTER_NODES (every node, so migrations reach each)'];
  if (replicated && nodes.length > 0) return ['CLICKHOUSE_CLUSTER_NODES is for clusters without replication (CLICKHOUSE_CLUSTER_REPLICATED=off); a replicated cluster migrates ON CLUSTER'];
  return [];
}

/** The ClickHouse server `workload` of each lane that names one. */
function workloads(s: Settings): { analytics?: string; interactive?: string; ingest?: string; system?: string } {
  return {
    ...(s.CLICKHOUSE_WORKLOAD_ANALYTICS !== null ? { analytics: s.CLICKHOUSE_WORKLOAD_ANALYTICS } : {}),
    ...(s.CLICKHOUSE_WORKLOAD_INTERACTIVE !== null ? { interactive: s.CLICKHOUSE_WORKLOAD_INTERACTIVE } : {}),
    ...(s.CLICKHOUSE_WORKLOAD_INGEST !== null ? { ingest: s.CLICKHOUSE_WORKLOAD_INGEST } : {}),
  };
}

function shape(s: Settings) {
  const queryTimeoutSeconds = s.QUERY_TIMEOUT_SECONDS;
  return {
    roles: new Set(s.LOOKOUT_ROLES) as ReadonlySet<Role>,
    port: s.PORT,
    host: s.HOST,
    metricsPort: s.METRICS_PORT,
    metricsHost: s.METRICS_HOST,
    dataDir: path.resolve(s.DATA_DIR),
    databaseUrl: s.DATABASE_URL,
    clickhouse: {
      url: s.CLICKHOUSE_URL,
      user: s.CLICKHOUSE_USER,
      password: s.CLICKHOUSE_PASSWORD,
      database: s.CLICKHOUSE_DATABASE,
      cluster: s.CLICKHOUSE_CLUSTER,
      insertQuorum: s.CLICKHOUSE_INSERT_QUORUM,
      replicated: s.CLICKHOUSE_CLUSTER_REPLICATED,
      nodes: s.CLICKHOUSE_CLUSTER_NODES ?? [],
      /** null: by backend (src/platform/clickhouse/sql/compile.ts). */
      paramBinding: s.CLICKHOUSE_PARAM_BINDING,
      analytics: { maxConcurrency: s.ANALYTICS_MAX_CONCURRENCY, maxPerTenant: s.ANALYTICS_MAX_PER_TENANT, maxQueue: s.ANALYTICS_MAX_QUEUE },
      interactive: { maxConcurrency: s.INTERACTIVE_MAX_CONCURRENCY, maxPerTenant: s.INTERACTIVE_MAX_PER_TENANT, maxQueue: s.INTERACTIVE_MAX_QUEUE },
      controls: { workloads: workloads(s), analyticsNice: s.ANALYTICS_NICE },
    },
    migrateOnStart: s.LOOKOUT_MIGRATE,
    bootstrapKey: s.LOOKOUT_BOOTSTRAP_KEY,
    systemKey: s.LOOKOUT_SYSTEM_KEY,
    logLevel: s.LOG_LEVEL,
    jsonBodyLimit: s.JSON_BODY_LIMIT,
    otlpMaxBytes: s.OTLP_MAX_BYTES,
    /**
     * The OTLP/gRPC listener of `ingest` processes; null when OTLP_GRPC_PORT=0 turns it off. A port
     * of 0 here, which the environment cannot ask for, takes any free port (tests run many
     * services side by side).
     */
    otlpGrpc: s.OTLP_GRPC_PORT === 0 ? null : ({ port: s.OTLP_GRPC_PORT, host: s.OTLP_GRPC_HOST ?? s.HOST } as { port: number; host: string } | null),
    traceSettleMs: s.TRACE_SETTLE_MS,
    traceMaxWaitMs: s.TRACE_MAX_WAIT_MS,
    settleLeaseMs: s.SETTLE_LEASE_MS,
    deletionLeaseMs: s.DELETION_LEASE_MS,
    settleMaxLagMs: s.SETTLE_MAX_LAG_MS,
    ingestMaxInflightBytes: s.INGEST_MAX_INFLIGHT_BYTES,
    ingestMaxQueueMs: s.INGEST_MAX_QUEUE_MS,
    settleCacheMaxBytes: s.SETTLE_CACHE_MAX_BYTES ?? defaultSettleCacheBytes(s.INGEST_MAX_INFLIGHT_BYTES),
    ingestFlushMs: s.INGEST_FLUSH_MS,
    ingestFlushMinRows: s.INGEST_FLUSH_MIN_ROWS,
    ingestFlushIntervalMs: s.INGEST_FLUSH_INTERVAL_MS,
    ingestFlushCatchUpLagMs: s.INGEST_FLUSH_CATCH_UP_LAG_MS,
    ingestBatchRows: s.INGEST_BATCH_ROWS,
    computeThreads: s.COMPUTE_THREADS ?? defaultComputeThreads(),
    computeHeapMb: s.COMPUTE_HEAP_MB,
    traceMaxSpans: s.TRACE_MAX_SPANS,
    ingestMaxFutureSkewMs: s.INGEST_MAX_FUTURE_SKEW_MS,
    /** null: the spans' lifetime, exact for every trace (docs/settling.md "Which traces have spans"). */
    traceRegistryWindowMs: s.TRACE_REGISTRY_WINDOW_HOURS === null ? null : s.TRACE_REGISTRY_WINDOW_HOURS * 3_600_000,
    queryTimeoutSeconds,
    exportTimeoutSeconds: s.EXPORT_TIMEOUT_SECONDS,
    /** Bounds of a store that does not answer (docs/operations.md "When a store fails"). */
    faults: {
      postgresStatementTimeoutMs: s.POSTGRES_STATEMENT_TIMEOUT_MS,
      ingestTimeoutMs: s.INGEST_TIMEOUT_MS,
      requestTimeoutSeconds: s.REQUEST_TIMEOUT_SECONDS ?? queryTimeoutSeconds + 10,
      readyProbeTimeoutMs: s.READY_PROBE_TIMEOUT_MS,
      dataDirMinFreeBytes: s.DATA_DIR_MIN_FREE_MB * 1024 * 1024,
      keyCacheSeconds: s.KEY_CACHE_SECONDS,
      shutdownTimeoutMs: s.SHUTDOWN_TIMEOUT_MS,
      /** Used with DATABASE_URL only: the embedded server is started, not waited for. */
      postgresStartupWaitMs: s.POSTGRES_STARTUP_WAIT_MS,
      /** Used with CLICKHOUSE_URL only: the embedded engine is opened, not waited for. */
      clickhouseStartupWaitMs: s.CLICKHOUSE_STARTUP_WAIT_MS,
    },
    monitorLearningMinTraces: s.MONITOR_LEARNING_MIN_TRACES,
    pricesRefreshUrl: s.PRICES_REFRESH_URL,
    linearApiUrl: s.LINEAR_API_URL,
    codeHostApiUrl: s.CODE_HOST_API_URL,
    secretKey: s.LOOKOUT_SECRET_KEY,
    /** Without trailing slashes: links are built by appending a path. */
    publicUrl: s.LOOKOUT_PUBLIC_URL?.replace(/\/+$/, '') ?? null,
    webhooks: { allowPrivate: s.LOOKOUT_WEBHOOK_ALLOW_PRIVATE, concurrencyPerEndpoint: s.LOOKOUT_WEBHOOK_CONCURRENCY },
  };
}

/** Every environment variable the service reads, parsed once at start-up (field by field: see `shape`). */
export type Config = ReturnType<typeof shape>;

/** The Config of settings already read: the checks across variables, then the shape. */
export function configFromSettings(settings: Settings): Config {
  const problems = clusterProblems(settings);
  if (problems.length > 0) throw new ConfigError(problems);
  return shape(settings);
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  return configFromSettings(readSettings(CONFIG_SCHEMA, env));
}
