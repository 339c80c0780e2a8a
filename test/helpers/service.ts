import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { pino } from 'pino';
import { loadConfig } from '../../src/app/config.js';
import type { HarnessOptions } from '../../src/app/harness-options.js';
import { startService, type RunningService } from '../../src/app/service.js';
import { projectRoot } from '../../src/app/project-root.js';
import type { ClickHouseStore } from '../../src/platform/clickhouse/clickhouse.js';
import { connectPostgres, embeddedPostgresUrl, type Sql } from '../../src/platform/postgres/postgres.js';
import type { PostgresStatementStats } from '../../src/platform/postgres/postgres-statement-stats.js';
import { testComputeWorkerFile } from './compute-worker-bundle.js';
import { copyMigratedStores } from './migrated-stores.js';
import { serverEnv } from './test-clickhouse.js';
import { tempDataDir } from './temp-dir.js';

export const SYSTEM_KEY = 'lk_system_test_key';
export const BOOTSTRAP_KEY = 'lk_bootstrap_test_key_0123456789';

export interface TestService {
  url: string;
  api: string;
  adminKey: string;
  dataDir: string;
  service: RunningService;
  /** fetch against /api with a bearer key (defaults to the bootstrap admin key); JSON bodies are serialized. */
  call(method: string, apiPath: string, options?: { key?: string | null; body?: unknown; rawBody?: string; headers?: Record<string, string> }): Promise<{ status: number; body: any; headers: Headers }>;
  /** A new tenant (through the operator route) with its admin key. */
  newTenant(name?: string): Promise<{ tenantId: string; adminKey: string }>;
  /** A project of the bootstrap tenant (or the tenant of `key`). */
  newProject(name?: string, key?: string): Promise<{ id: string; name: string }>;
  newKey(scope: 'read' | 'admin' | 'ingest', options?: { key?: string; projectId?: string | null }): Promise<string>;
  /** `127.0.0.1:PORT` of the OTLP/gRPC listener (started with `otlpGrpc: true`); throws when it is off. */
  grpcAddress(): string;
  /** The service's PostgreSQL URL (DATABASE_URL, else the running embedded server's). */
  postgresUrl(): string;
  /** A pool of its own on the service's PostgreSQL (what another process would have); ended by stop(). */
  postgresPool(options: { max: number; stats?: PostgresStatementStats }): Sql;
  stop(): Promise<void>;
}

/**
 * Starts the real service in this process on embedded stores in a fresh DATA_DIR, on a free port.
 * OTLP/gRPC is off unless `options.otlpGrpc` asks for it, on a free port of its own (services run
 * side by side, and 4317 can be held only once): `grpcAddress()` gives it. `options.harness`: what
 * only tests set (a shorter webhook backoff), passed to the service, not through the environment.
 */
export async function startTestService(
  env: Record<string, string> = {},
  dataDir = tempDataDir(),
  options: { clickhouse?: ClickHouseStore; otlpGrpc?: boolean; harness?: HarnessOptions } = {},
): Promise<TestService> {
  const loaded = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    OTLP_GRPC_PORT: '0',
    DATA_DIR: dataDir,
    LOOKOUT_BOOTSTRAP_KEY: BOOTSTRAP_KEY,
    LOOKOUT_SYSTEM_KEY: SYSTEM_KEY,
    LOG_LEVEL: 'silent',
    TRACE_SETTLE_MS: '200',
    // A loaded 2-core runner can take longer than the 5 s default to store a first batch; suites
    // expecting 200 must not see the store-failure answer for slowness. The fault tests set their own.
    INGEST_TIMEOUT_MS: '30000',
    // Likewise decoding may wait for the compute worker there past the 2 s default bound.
    INGEST_MAX_QUEUE_MS: '30000',
    // No metrics listener unless a test asks for one: services of parallel tests would share 9464.
    METRICS_PORT: '0',
    // One compute worker for both lines (~0.4 s of CPU to start from the run's bundle, and a run
    // starts ~180 services). Services spawned as processes (spawnService) run the default, a worker
    // per line on the tsx shim, and compute-pool.test.ts holds the lines to their own workers.
    COMPUTE_THREADS: '1',
    ...(process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : {}),
    // The `server` project: the run's ClickHouse server, with databases of this data directory's own.
    ...serverEnv(dataDir),
    // The vitest project "server-params" runs the injection suites with server-side parameters on chdb too.
    ...(process.env.CLICKHOUSE_PARAM_BINDING ? { CLICKHOUSE_PARAM_BINDING: process.env.CLICKHOUSE_PARAM_BINDING } : {}),
    // COMPUTE_HEAP_MB=N runs a suite with capped compute workers (what a deployment with the cap serves).
    ...(process.env.COMPUTE_HEAP_MB ? { COMPUTE_HEAP_MB: process.env.COMPUTE_HEAP_MB } : {}),
    ...env,
  });
  const config = options.otlpGrpc ? { ...loaded, otlpGrpc: { port: 0, host: loaded.host } } : loaded;
  await copyMigratedStores(dataDir, {
    postgres: !config.databaseUrl,
    clickhouse: !config.clickhouse.url && !options.clickhouse && !config.clickhouse.cluster && config.clickhouse.database === 'lookout',
  });
  const harness = { computeWorkerFile: testComputeWorkerFile(), ...options.harness };
  const service = await startService(config, { logger: pino({ level: config.logLevel }), clickhouse: options.clickhouse, harness });
  const api = `${service.url}/api`;
  const call: TestService['call'] = async (method, apiPath, options = {}) => {
    const headers: Record<string, string> = { ...(options.headers ?? {}) };
    const key = options.key === undefined ? BOOTSTRAP_KEY : options.key;
    if (key) headers.authorization = `Bearer ${key}`;
    let body: string | undefined;
    if (options.rawBody !== undefined) body = options.rawBody;
    else if (options.body !== undefined) body = JSON.stringify(options.body);
    if (body !== undefined && !headers['content-type']) headers['content-type'] = 'application/json';
    const response = await fetch(`${api}${apiPath}`, { method, headers, body });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON: keep the text
    }
    return { status: response.status, body: parsed, headers: response.headers };
  };
  const pools: Sql[] = [];
  const postgresUrl = () => process.env.DATABASE_URL ?? embeddedPostgresUrl(dataDir)!;
  const test: TestService = {
    url: service.url,
    api,
    adminKey: BOOTSTRAP_KEY,
    dataDir,
    service,
    call,
    async newTenant(name = 'other') {
      const res = await call('POST', '/tenants', { key: SYSTEM_KEY, body: { name } });
      if (res.status !== 201) throw new Error(`tenant create failed: ${res.status} ${JSON.stringify(res.body)}`);
      return { tenantId: res.body.tenant.id, adminKey: res.body.admin_key };
    },
    async newProject(name = 'project', key = BOOTSTRAP_KEY) {
      const res = await call('POST', '/projects', { key, body: { name } });
      if (res.status !== 201) throw new Error(`project create failed: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body;
    },
    async newKey(scope, options = {}) {
      const res = await call('POST', '/api-keys', { key: options.key ?? BOOTSTRAP_KEY, body: { name: `${scope} key`, scope, project_id: options.projectId ?? null } });
      if (res.status !== 201) throw new Error(`key create failed: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body.key;
    },
    grpcAddress() {
      const listener = service.listeners.find((l) => l.name === 'otlp-grpc');
      if (!listener) throw new Error('OTLP/gRPC is off in this test service (start it with { otlpGrpc: true })');
      return `127.0.0.1:${listener.port}`;
    },
    postgresUrl,
    postgresPool(options) {
      const sql = connectPostgres(postgresUrl(), options);
      pools.push(sql);
      return sql;
    },
    async stop() {
      for (const sql of pools.splice(0)) await sql.end({ timeout: 5 });
      await service.stop();
    },
  };
  return test;
}

export interface SpawnedService {
  url: string;
  child: ChildProcess;
  output: () => string;
  /** SIGTERM and wait for exit. */
  stop(): Promise<number | null>;
  kill(): Promise<void>;
}

/**
 * Runs the service as a child process (through tsx, from source) — for crash and restart tests that
 * need a real process to kill. Resolves once it logs that it listens. With `harness` it runs
 * service-main.ts, which hands those options to the service; without, src/main.ts itself.
 * `onOutput` is told the output so far each time it grows (a test acting on a log line before the
 * service listens).
 */
export async function spawnService(
  dataDir: string,
  env: Record<string, string> = {},
  harness?: HarnessOptions,
  options: { onOutput?: (output: string) => void } = {},
): Promise<SpawnedService> {
  const entry = harness ? [path.join(projectRoot, 'test', 'helpers', 'service-main.ts'), JSON.stringify(harness)] : [path.join(projectRoot, 'src', 'main.ts')];
  const childEnv: Record<string, string | undefined> = {
    ...process.env,
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    LOOKOUT_BOOTSTRAP_KEY: BOOTSTRAP_KEY,
    LOOKOUT_SYSTEM_KEY: SYSTEM_KEY,
    LOG_LEVEL: 'info',
    ...serverEnv(dataDir),
    // Off unless a test asks for a port: spawned services run side by side, 4317 only once.
    OTLP_GRPC_PORT: '0',
    METRICS_PORT: '0',
    // A loaded runner's compute worker can keep decoding waiting past the 2 s default bound.
    INGEST_MAX_QUEUE_MS: '30000',
    ...env,
  };
  await copyMigratedStores(dataDir, {
    postgres: !childEnv.DATABASE_URL,
    clickhouse: !childEnv.CLICKHOUSE_URL && !childEnv.CLICKHOUSE_CLUSTER && (childEnv.CLICKHOUSE_DATABASE || 'lookout') === 'lookout',
  });
  const child = spawn(process.execPath, ['--import', 'tsx', ...entry], { cwd: projectRoot, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  // A test that fails before stopping its service must not leave it running after the test process ends.
  const reap = () => child.kill('SIGKILL');
  process.once('exit', reap);
  void exited.then(() => process.removeListener('exit', reap));
  const url = await new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      options.onOutput?.(output);
      const match = /"port":(\d+)[^\n]*lookout listening/.exec(output);
      if (match) resolve(`http://127.0.0.1:${match[1]}`);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      options.onOutput?.(output);
    });
    void exited.then((code) => reject(new Error(`service exited with ${code}: ${output}`)));
    setTimeout(() => reject(new Error(`service did not start: ${output}`)), 90_000).unref();
  });
  return {
    url,
    child,
    output: () => output,
    async stop() {
      child.kill('SIGTERM');
      return exited;
    },
    async kill() {
      child.kill('SIGKILL');
      await exited;
    },
  };
}

/** A call to the /api of a spawned service with the bootstrap admin key; JSON bodies both ways (undefined when the answer is not JSON). */
export async function callSpawned(base: string, method: string, apiPath: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${base}/api${apiPath}`, {
    method,
    headers: { authorization: `Bearer ${BOOTSTRAP_KEY}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json().catch(() => undefined) };
}

export function removeDir(dir: string): void {
  fs.rmSync(dir, { recursive: true, force: true });
}
