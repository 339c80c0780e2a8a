import os from 'node:os';
import path from 'node:path';

/** What a process does (LOOKOUT_ROLES): serve the API, accept spans, run background work. */
export type Role = 'api' | 'ingest' | 'worker';
export const ROLES: readonly Role[] = ['api', 'ingest', 'worker'];

/** Every environment variable the service reads, parsed once at start-up. */
export interface Config {
  /** LOOKOUT_ROLES, default all three: one process does everything. */
  roles: ReadonlySet<Role>;
  port: number;
  host: string;
  /** METRICS_PORT: the Prometheus listener's port (0: no listener). */
  metricsPort: number;
  /** METRICS_HOST: the address the metrics listener binds (loopback by default). */
  metricsHost: string;
  dataDir: string;
  databaseUrl: string | null;
  clickhouse: {
    url: string | null;
    user: string;
    password: string;
    database: string;
    cluster: string | null;
    /** insert_quorum of every insert on a cluster ('auto' = a majority of the shard's replicas; '0' none). */
    insertQuorum: string;
    /**
     * CLICKHOUSE_CLUSTER_REPLICATED (default true): Replicated `_local` tables and ON CLUSTER DDL.
     * False: plain MergeTree-family `_local` tables (shards without replicas, no Keeper needed).
     */
    replicated: boolean;
    /** CLICKHOUSE_CLUSTER_NODES: every node's HTTP URL; migrations apply each statement to each of them. */
    nodes: string[];
    /** How statement values are bound (src/platform/clickhouse/sql/compile.ts); null = by backend. */
    paramBinding: 'literal' | 'server' | null;
    /** The analytics lane's bounds (src/platform/clickhouse/sql/analytics-gate.ts). */
    analytics: { maxConcurrency: number; maxPerTenant: number; maxQueue: number };
    /** The interactive lane's bounds: trace detail, trace lists, lookups by id (INTERACTIVE_MAX_*). */
    interactive: { maxConcurrency: number; maxPerTenant: number; maxQueue: number };
    /** ClickHouse server `workload` per lane, when the server defines workloads. */
    controls: { workloads: { analytics?: string; interactive?: string; ingest?: string; system?: string } };
    /** ENGINE_STATS_FILE: where the store writes its statements per kind and the engine's counters on close (the ingest benchmark reads it); null: nowhere. */
    statsFile: string | null;
  };
  /** LOOKOUT_MIGRATE: apply pending migrations at start (default), or only check that none are pending. */
  migrateOnStart: boolean;
  bootstrapKey: string | null;
  systemKey: string | null;
  logLevel: string;
  jsonBodyLimit: string;
  otlpMaxBytes: number;
  /**
   * The OTLP/gRPC listener of `ingest` processes: OTLP_GRPC_PORT (default 4317) on OTLP_GRPC_HOST
   * (default HOST); null when OTLP_GRPC_PORT=0 turns it off. A port of 0 here, which the
   * environment cannot ask for, takes any free port (tests run many services side by side).
   */
  otlpGrpc: { port: number; host: string } | null;
  traceSettleMs: number;
  traceMaxWaitMs: number;
  /** How long a settle claim stays with a settler that stopped renewing it (a crashed process). */
  settleLeaseMs: number;
  /** DELETION_LEASE_MS: how long a deletion job stays with a runner that stopped renewing its claim (a crashed process). */
  deletionLeaseMs: number;
  /**
   * SETTLE_MAX_LAG_MS: past this age of the oldest due, unsettled trace ingestion answers 503 with
   * Retry-After until settling catches up (src/ingest/settle/settle-lag.ts); 0: no bound.
   */
  settleMaxLagMs: number;
  ingestMaxInflightBytes: number;
  /** Bytes of span rows the settler keeps for open traces (SETTLE_CACHE_MAX_BYTES); past it they are read back from ClickHouse. */
  settleCacheMaxBytes: number;
  ingestFlushMs: number;
  ingestBatchRows: number;
  /** Worker threads of the compute pool (COMPUTE_THREADS); 0 runs that work on the event loop. */
  computeThreads: number;
  /** COMPUTE_STATS_FILE: where the compute pool writes its CPU per task on close (the ingest benchmark reads it); null: nowhere. */
  computeStatsFile: string | null;
  /** POSTGRES_STATS_FILE: where the PostgreSQL store writes its statements per kind on close (the ingest benchmark reads it); null: nowhere. */
  postgresStatsFile: string | null;
  /** Old-generation heap cap of each compute worker in MB (COMPUTE_HEAP_MB); 0 leaves V8's default. */
  computeHeapMb: number;
  /** Spans stored per trace at most (TRACE_MAX_SPANS); later spans are rejected through partial_success. */
  traceMaxSpans: number;
  /** How far past the server clock a span may start; later starts are rejected (partial success). */
  ingestMaxFutureSkewMs: number;
  /**
   * TRACE_REGISTRY_WINDOW_HOURS in ms: how long the stored-trace registry keeps a trace's row after
   * its last flush and its latest span (docs/settling.md "Which traces have spans"); null (unset):
   * the spans' lifetime, exact for every trace.
   */
  traceRegistryWindowMs: number | null;
  queryTimeoutSeconds: number;
  /** Bounds of a store that does not answer (docs/operations.md "When a store fails"). */
  faults: {
    /** POSTGRES_STATEMENT_TIMEOUT_MS: statement_timeout of the service's PostgreSQL pool. */
    postgresStatementTimeoutMs: number;
    /** INGEST_TIMEOUT_MS: an OTLP request not stored within this is answered 503 store_unavailable + Retry-After. */
    ingestTimeoutMs: number;
    /** REQUEST_TIMEOUT_SECONDS: any other request not answered within this is answered 503 store_unavailable. */
    requestTimeoutSeconds: number;
    /** READY_PROBE_TIMEOUT_MS: each store's readiness probe. */
    readyProbeTimeoutMs: number;
    /** DATA_DIR_MIN_FREE_MB in bytes: below this much free space under DATA_DIR, not ready and ingest refused. */
    dataDirMinFreeBytes: number;
    /** KEY_CACHE_SECONDS: how long a key checked against PostgreSQL still verifies while PostgreSQL is away. */
    keyCacheSeconds: number;
    /** SHUTDOWN_TIMEOUT_MS: the whole graceful shutdown, request drain included. */
    shutdownTimeoutMs: number;
    /** DATABASE_URL only: how long start-up retries a PostgreSQL that does not answer yet. */
    postgresStartupWaitMs: number;
  };
  monitorLearningMinTraces: number;
  pricesRefreshUrl: string | null;
  linearApiUrl: string;
  codeHostApiUrl: string;
  secretKey: string | null;
  /** Where people reach the dashboard; webhook payloads link to it. Unset: links are null. */
  publicUrl: string | null;
  webhooks: {
    /** LOOKOUT_WEBHOOK_ALLOW_PRIVATE=1: endpoints may be loopback, private or link-local (self-hosted receivers, tests). */
    allowPrivate: boolean;
    /** The first retry delay; the whole schedule (and the 24 h give-up window) scales with it. Lowered only by tests. */
    backoffBaseMs: number;
    /** Attempts in flight per endpoint, counted across processes. */
    concurrencyPerEndpoint: number;
  };
}

/** One compute thread per core but one (the event loop's), at least one. */
export function defaultComputeThreads(): number {
  return Math.max(1, os.availableParallelism() - 1);
}

function int(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a non-negative number, got ${raw}`);
  return value;
}

/** A window in hours, at least one; unset or empty: null. */
function hoursOrNull(env: NodeJS.ProcessEnv, name: string): number | null {
  const raw = str(env, name);
  if (raw === null) return null;
  const hours = Number(raw);
  if (!Number.isFinite(hours) || hours < 1) throw new Error(`${name} must be a number of hours, at least 1, got ${raw}`);
  return hours * 3_600_000;
}

function bool(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === undefined || raw === '') return fallback;
  if (['1', 'on', 'true', 'yes'].includes(raw)) return true;
  if (['0', 'off', 'false', 'no'].includes(raw)) return false;
  throw new Error(`${name} must be on or off (1/0, true/false), got ${env[name]}`);
}

function roles(raw: string | undefined): ReadonlySet<Role> {
  if (raw === undefined || raw.trim() === '') return new Set(ROLES);
  const named = raw.split(',').map((r) => r.trim()).filter(Boolean);
  const unknown = named.filter((r) => !(ROLES as readonly string[]).includes(r));
  if (unknown.length > 0 || named.length === 0) throw new Error(`LOOKOUT_ROLES must be a comma-separated list of ${ROLES.join(', ')}; got ${raw}`);
  return new Set(named as Role[]);
}

function str(env: NodeJS.ProcessEnv, name: string): string | null {
  const raw = env[name];
  return raw === undefined || raw === '' ? null : raw;
}

function binding(env: NodeJS.ProcessEnv): 'literal' | 'server' | null {
  const raw = str(env, 'CLICKHOUSE_PARAM_BINDING');
  if (raw === null) return null;
  if (raw !== 'literal' && raw !== 'server') throw new Error(`CLICKHOUSE_PARAM_BINDING must be literal or server, got ${raw}`);
  return raw;
}

/**
 * The settle cache's default bound: twice the ingest budget, between 4 and 256 MiB. An operator who
 * bounds ingest memory tightly gets a cache of the same order, not a fixed few hundred MiB beside it.
 */
export function defaultSettleCacheBytes(inflightBytes: number): number {
  const MiB = 1024 * 1024;
  return Math.min(256 * MiB, Math.max(4 * MiB, 2 * inflightBytes));
}

/** ClickHouse names we splice into statements (database, cluster, workloads): plain identifiers only. */
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

function workload(env: NodeJS.ProcessEnv, name: string): string {
  const raw = env[name] as string;
  if (!IDENTIFIER.test(raw)) throw new Error(`${name} must be a plain identifier`);
  return raw;
}

function otlpGrpc(env: NodeJS.ProcessEnv, host: string): Config['otlpGrpc'] {
  const port = int(env, 'OTLP_GRPC_PORT', 4317);
  if (!Number.isInteger(port) || port > 65535) throw new Error(`OTLP_GRPC_PORT must be a TCP port (0 turns OTLP/gRPC off), got ${env.OTLP_GRPC_PORT}`);
  return port === 0 ? null : { port, host: str(env, 'OTLP_GRPC_HOST') ?? host };
}

/**
 * The cluster layout's options. Without replication nothing coordinates DDL across nodes (ON CLUSTER
 * needs Keeper), so migrations need every node's address; with replication they run ON CLUSTER,
 * which also gives each rebuilt table one UUID, and so one Keeper path, on every replica.
 */
function clusterNodes(env: NodeJS.ProcessEnv): { replicated: boolean; nodes: string[] } {
  const replicated = bool(env, 'CLICKHOUSE_CLUSTER_REPLICATED', true);
  const nodes = (env.CLICKHOUSE_CLUSTER_NODES ?? '').split(',').map((n) => n.trim()).filter(Boolean);
  for (const node of nodes) if (!/^https?:\/\/[^\s/]+\/?$/.test(node)) throw new Error(`CLICKHOUSE_CLUSTER_NODES: not an http(s) URL of a node: ${node}`);
  if (!env.CLICKHOUSE_CLUSTER && (nodes.length > 0 || !replicated)) throw new Error('CLICKHOUSE_CLUSTER_NODES and CLICKHOUSE_CLUSTER_REPLICATED need CLICKHOUSE_CLUSTER');
  if (!replicated && nodes.length === 0) throw new Error('CLICKHOUSE_CLUSTER_REPLICATED=false needs CLICKHOUSE_CLUSTER_NODES (every node, so migrations reach each)');
  if (replicated && nodes.length > 0) throw new Error('CLICKHOUSE_CLUSTER_NODES is for clusters without replication (CLICKHOUSE_CLUSTER_REPLICATED=false); a replicated cluster migrates ON CLUSTER');
  return { replicated, nodes };
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const database = env.CLICKHOUSE_DATABASE || 'lookout';
  if (!IDENTIFIER.test(database)) throw new Error('CLICKHOUSE_DATABASE must be a plain identifier');
  if (env.CLICKHOUSE_CLUSTER && !IDENTIFIER.test(env.CLICKHOUSE_CLUSTER)) throw new Error('CLICKHOUSE_CLUSTER must be a plain identifier');
  const insertQuorum = env.CLICKHOUSE_INSERT_QUORUM || 'auto';
  if (!/^(auto|\d+)$/.test(insertQuorum)) throw new Error('CLICKHOUSE_INSERT_QUORUM must be auto or a number of replicas');
  const cluster = clusterNodes(env);
  const inflightBytes = int(env, 'INGEST_MAX_INFLIGHT_BYTES', 256 * 1024 * 1024);
  const publicUrl = str(env, 'LOOKOUT_PUBLIC_URL');
  const host = env.HOST || '0.0.0.0';
  const queryTimeoutSeconds = int(env, 'QUERY_TIMEOUT_SECONDS', 15);
  if (publicUrl && !/^https?:\/\/[^\s/]+/.test(publicUrl)) throw new Error('LOOKOUT_PUBLIC_URL must be an http(s) URL');
  return {
    roles: roles(env.LOOKOUT_ROLES),
    port: int(env, 'PORT', 8080),
    host,
    metricsPort: int(env, 'METRICS_PORT', 9464),
    metricsHost: env.METRICS_HOST || '127.0.0.1',
    dataDir: path.resolve(env.DATA_DIR || './.data'),
    databaseUrl: str(env, 'DATABASE_URL'),
    clickhouse: {
      url: str(env, 'CLICKHOUSE_URL'),
      user: env.CLICKHOUSE_USER || 'default',
      password: env.CLICKHOUSE_PASSWORD || '',
      database,
      cluster: str(env, 'CLICKHOUSE_CLUSTER'),
      insertQuorum,
      ...cluster,
      paramBinding: binding(env),
      statsFile: str(env, 'ENGINE_STATS_FILE'),
      analytics: {
        maxConcurrency: Math.max(1, int(env, 'ANALYTICS_MAX_CONCURRENCY', 4)),
        maxPerTenant: Math.max(1, int(env, 'ANALYTICS_MAX_PER_TENANT', 2)),
        maxQueue: int(env, 'ANALYTICS_MAX_QUEUE', 64),
      },
      interactive: {
        maxConcurrency: Math.max(1, int(env, 'INTERACTIVE_MAX_CONCURRENCY', 2)),
        maxPerTenant: Math.max(1, int(env, 'INTERACTIVE_MAX_PER_TENANT', 2)),
        maxQueue: int(env, 'INTERACTIVE_MAX_QUEUE', 64),
      },
      controls: {
        workloads: {
          ...(str(env, 'CLICKHOUSE_WORKLOAD_ANALYTICS') ? { analytics: workload(env, 'CLICKHOUSE_WORKLOAD_ANALYTICS') } : {}),
          ...(str(env, 'CLICKHOUSE_WORKLOAD_INTERACTIVE') ? { interactive: workload(env, 'CLICKHOUSE_WORKLOAD_INTERACTIVE') } : {}),
          ...(str(env, 'CLICKHOUSE_WORKLOAD_INGEST') ? { ingest: workload(env, 'CLICKHOUSE_WORKLOAD_INGEST') } : {}),
        },
      },
    },
    migrateOnStart: bool(env, 'LOOKOUT_MIGRATE', true),
    bootstrapKey: str(env, 'LOOKOUT_BOOTSTRAP_KEY'),
    systemKey: str(env, 'LOOKOUT_SYSTEM_KEY'),
    logLevel: env.LOG_LEVEL || 'info',
    jsonBodyLimit: env.JSON_BODY_LIMIT || '1mb',
    otlpMaxBytes: int(env, 'OTLP_MAX_BYTES', 20 * 1024 * 1024),
    otlpGrpc: otlpGrpc(env, host),
    traceSettleMs: int(env, 'TRACE_SETTLE_MS', 3000),
    traceMaxWaitMs: int(env, 'TRACE_MAX_WAIT_MS', 60000),
    settleLeaseMs: int(env, 'SETTLE_LEASE_MS', 60000),
    deletionLeaseMs: Math.max(1000, int(env, 'DELETION_LEASE_MS', 60000)),
    settleMaxLagMs: int(env, 'SETTLE_MAX_LAG_MS', 30000),
    ingestMaxInflightBytes: inflightBytes,
    settleCacheMaxBytes: int(env, 'SETTLE_CACHE_MAX_BYTES', defaultSettleCacheBytes(inflightBytes)),
    ingestFlushMs: int(env, 'INGEST_FLUSH_MS', 20),
    ingestBatchRows: int(env, 'INGEST_BATCH_ROWS', 50000),
    computeThreads: int(env, 'COMPUTE_THREADS', defaultComputeThreads()),
    computeStatsFile: str(env, 'COMPUTE_STATS_FILE'),
    postgresStatsFile: str(env, 'POSTGRES_STATS_FILE'),
    computeHeapMb: int(env, 'COMPUTE_HEAP_MB', 0),
    traceMaxSpans: int(env, 'TRACE_MAX_SPANS', 100_000),
    ingestMaxFutureSkewMs: int(env, 'INGEST_MAX_FUTURE_SKEW_MS', 24 * 3_600_000),
    traceRegistryWindowMs: hoursOrNull(env, 'TRACE_REGISTRY_WINDOW_HOURS'),
    queryTimeoutSeconds,
    faults: {
      postgresStatementTimeoutMs: Math.max(100, int(env, 'POSTGRES_STATEMENT_TIMEOUT_MS', 15_000)),
      ingestTimeoutMs: Math.max(100, int(env, 'INGEST_TIMEOUT_MS', 5_000)),
      requestTimeoutSeconds: Math.max(1, int(env, 'REQUEST_TIMEOUT_SECONDS', queryTimeoutSeconds + 10)),
      readyProbeTimeoutMs: Math.max(100, int(env, 'READY_PROBE_TIMEOUT_MS', 2_000)),
      dataDirMinFreeBytes: int(env, 'DATA_DIR_MIN_FREE_MB', 512) * 1024 * 1024,
      keyCacheSeconds: int(env, 'KEY_CACHE_SECONDS', 60),
      shutdownTimeoutMs: Math.max(1_000, int(env, 'SHUTDOWN_TIMEOUT_MS', 10_000)),
      postgresStartupWaitMs: int(env, 'POSTGRES_STARTUP_WAIT_MS', 30_000),
    },
    monitorLearningMinTraces: int(env, 'MONITOR_LEARNING_MIN_TRACES', 50),
    pricesRefreshUrl: str(env, 'PRICES_REFRESH_URL'),
    linearApiUrl: env.LINEAR_API_URL || 'https://api.linear.app/graphql',
    codeHostApiUrl: env.CODE_HOST_API_URL || 'https://api.github.com',
    secretKey: str(env, 'LOOKOUT_SECRET_KEY'),
    publicUrl: publicUrl?.replace(/\/+$/, '') ?? null,
    webhooks: {
      allowPrivate: env.LOOKOUT_WEBHOOK_ALLOW_PRIVATE === '1',
      backoffBaseMs: Math.max(1, int(env, 'LOOKOUT_WEBHOOK_BACKOFF_BASE_MS', 30_000)),
      concurrencyPerEndpoint: Math.max(1, int(env, 'LOOKOUT_WEBHOOK_CONCURRENCY', 4)),
    },
  };
}
