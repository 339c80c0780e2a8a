import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONFIG_GROUPS, CONFIG_SCHEMA } from '../../../src/app/config-schema.js';
import { ConfigError, configFromSettings, defaultComputeThreads, loadConfig, type Settings } from '../../../src/app/config.js';
import { readSettings } from '../../../src/platform/settings/setting.js';

const MiB = 1024 * 1024;

describe('loadConfig', () => {
  it('gives the documented defaults for an empty environment', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      port: 8080,
      host: '0.0.0.0',
      metricsPort: 9464,
      metricsHost: '127.0.0.1',
      dataDir: path.resolve('./.data'),
      databaseUrl: null,
      migrateOnStart: true,
      bootstrapKey: null,
      logLevel: 'info',
      jsonBodyLimit: '1mb',
      otlpMaxBytes: 20 * MiB,
      otlpGrpc: { port: 4317, host: '0.0.0.0' },
      traceSettleMs: 3000,
      traceMaxWaitMs: 60_000,
      settleLeaseMs: 60_000,
      settleMaxLagMs: 30_000,
      ingestMaxInflightBytes: 256 * MiB,
      settleCacheMaxBytes: 256 * MiB,
      ingestFlushMs: 20,
      ingestFlushMinRows: 2000,
      ingestFlushIntervalMs: 500,
      ingestBatchRows: 50_000,
      computeThreads: defaultComputeThreads(),
      computeHeapMb: 0,
      traceMaxSpans: 100_000,
      ingestMaxFutureSkewMs: 24 * 3_600_000,
      traceRegistryWindowMs: null,
      queryTimeoutSeconds: 15,
      monitorLearningMinTraces: 50,
      pricesRefreshUrl: null,
      linearApiUrl: 'https://api.linear.app/graphql',
      codeHostApiUrl: 'https://api.github.com',
      publicUrl: null,
      webhooks: { allowPrivate: false, concurrencyPerEndpoint: 4 },
    });
    expect(config.clickhouse).toMatchObject({
      url: null,
      user: 'default',
      password: '',
      database: 'lookout',
      cluster: null,
      insertQuorum: 'auto',
      paramBinding: null,
      analytics: { maxConcurrency: 4, maxPerTenant: 2, maxQueue: 64 },
      interactive: { maxConcurrency: 2, maxPerTenant: 2, maxQueue: 64 },
      controls: { workloads: {} },
    });
    expect(config.faults).toEqual({
      postgresStatementTimeoutMs: 15_000,
      ingestTimeoutMs: 5000,
      requestTimeoutSeconds: 25,
      readyProbeTimeoutMs: 2000,
      dataDirMinFreeBytes: 512 * MiB,
      keyCacheSeconds: 60,
      shutdownTimeoutMs: 10_000,
      postgresStartupWaitMs: 30_000,
      clickhouseStartupWaitMs: 30_000,
    });
  });

  it('derives the defaults that follow another setting', () => {
    expect(loadConfig({ INGEST_MAX_INFLIGHT_BYTES: String(8 * MiB) }).settleCacheMaxBytes).toBe(16 * MiB);
    expect(loadConfig({ INGEST_MAX_INFLIGHT_BYTES: '1000' }).settleCacheMaxBytes).toBe(4 * MiB);
    expect(loadConfig({ INGEST_MAX_INFLIGHT_BYTES: '1000', SETTLE_CACHE_MAX_BYTES: '0' }).settleCacheMaxBytes).toBe(0);
    expect(loadConfig({ QUERY_TIMEOUT_SECONDS: '0.001' }).faults.requestTimeoutSeconds).toBeCloseTo(10.001);
    expect(loadConfig({ QUERY_TIMEOUT_SECONDS: '2', REQUEST_TIMEOUT_SECONDS: '8' }).faults.requestTimeoutSeconds).toBe(8);
    expect(loadConfig({ COMPUTE_THREADS: '0' }).computeThreads).toBe(0);
  });

  it('converts units and shapes values the way the code uses them', () => {
    const config = loadConfig({
      DATA_DIR_MIN_FREE_MB: '2',
      TRACE_REGISTRY_WINDOW_HOURS: '1.5',
      LOOKOUT_PUBLIC_URL: 'https://lookout.example.test//',
      CLICKHOUSE_WORKLOAD_ANALYTICS: 'heavy',
      CLICKHOUSE_WORKLOAD_INGEST: 'writes',
      LOOKOUT_ROLES: 'api, worker',
    });
    expect(config.faults.dataDirMinFreeBytes).toBe(2 * MiB);
    expect(config.traceRegistryWindowMs).toBe(5_400_000);
    expect(config.publicUrl).toBe('https://lookout.example.test');
    expect(config.clickhouse.controls.workloads).toEqual({ analytics: 'heavy', ingest: 'writes' });
    expect([...config.roles].sort()).toEqual(['api', 'worker']);
  });

  it('reads every switch the same way', () => {
    for (const [word, on] of [['1', true], ['true', true], ['ON', true], ['yes', true], ['0', false], ['False', false], ['off', false], ['no', false]] as const) {
      expect(loadConfig({ LOOKOUT_WEBHOOK_ALLOW_PRIVATE: word }).webhooks.allowPrivate, word).toBe(on);
      expect(loadConfig({ LOOKOUT_MIGRATE: word }).migrateOnStart, word).toBe(on);
    }
    for (const name of ['LOOKOUT_WEBHOOK_ALLOW_PRIVATE', 'LOOKOUT_MIGRATE', 'CLICKHOUSE_CLUSTER_REPLICATED']) {
      expect(() => loadConfig({ [name]: 'enabled' }), name).toThrow(new RegExp(`${name} must be on or off \\(on/off, true/false, yes/no, 1/0, any case\\), got "enabled"`));
    }
  });

  it('refuses values outside their bounds instead of raising them quietly', () => {
    const cases: Record<string, RegExp> = {
      ANALYTICS_MAX_CONCURRENCY: /ANALYTICS_MAX_CONCURRENCY must be a whole number, at least 1, got "0"/,
      INTERACTIVE_MAX_PER_TENANT: /INTERACTIVE_MAX_PER_TENANT must be a whole number, at least 1, got "0"/,
      SHUTDOWN_TIMEOUT_MS: /SHUTDOWN_TIMEOUT_MS must be a whole number of milliseconds, at least 1000, got "0"/,
      INGEST_TIMEOUT_MS: /INGEST_TIMEOUT_MS must be a whole number of milliseconds, at least 100, got "0"/,
      LOOKOUT_WEBHOOK_CONCURRENCY: /LOOKOUT_WEBHOOK_CONCURRENCY must be a whole number, at least 1, got "0"/,
    };
    for (const [name, message] of Object.entries(cases)) expect(() => loadConfig({ [name]: '0' }), name).toThrow(message);
    expect(() => loadConfig({ PORT: '8080.5' })).toThrow(/PORT must be a whole number from 0 to 65535, got "8080.5"/);
    expect(() => loadConfig({ LOG_LEVEL: 'verbose' })).toThrow(/LOG_LEVEL must be one of trace, debug, info, warn, error, fatal, silent/);
    expect(() => loadConfig({ CLICKHOUSE_DATABASE: 'look-out' })).toThrow(/CLICKHOUSE_DATABASE must be a plain identifier/);
    expect(() => loadConfig({ LOOKOUT_PUBLIC_URL: 'lookout.example.com' })).toThrow(/LOOKOUT_PUBLIC_URL must be an http\(s\) URL/);
    expect(() => loadConfig({ JSON_BODY_LIMIT: 'a lot' })).toThrow(/JSON_BODY_LIMIT must be a size in bytes/);
  });

  it('names every variable at fault in one error, and never repeats a credential', () => {
    let error: unknown;
    try {
      loadConfig({ PORT: 'http', METRICS_PORT: '99999', DATABASE_URL: 'mysql://lookout:hunter2@db/lookout' });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems.map((p) => p.split(' ')[0])).toEqual(['PORT', 'METRICS_PORT', 'DATABASE_URL']);
    expect((error as ConfigError).message).toMatch(/DATABASE_URL must be a postgres:\/\/ URL/);
    expect((error as ConfigError).message).not.toContain('hunter2');
  });
});

describe('the configuration schema', () => {
  it('is read whole into Config: no variable is declared and then ignored', () => {
    const read = new Set<string>();
    const settings = readSettings(CONFIG_SCHEMA, {});
    const watched = new Proxy(settings, {
      get(target, name: string) {
        read.add(name);
        return target[name as keyof Settings];
      },
    });
    configFromSettings(watched);
    expect([...read].filter((name) => name in CONFIG_SCHEMA).sort()).toEqual(Object.keys(CONFIG_SCHEMA).sort());
  });

  it('puts each variable in exactly one group', () => {
    const grouped = CONFIG_GROUPS.flatMap((group) => Object.keys(group.settings));
    expect(new Set(grouped).size).toBe(grouped.length);
    expect(grouped.sort()).toEqual(Object.keys(CONFIG_SCHEMA).sort());
  });

  it('holds no variable that only tests or benchmarks set: those are options of the service', () => {
    for (const name of ['LOOKOUT_WEBHOOK_BACKOFF_BASE_MS', 'COMPUTE_STATS_FILE', 'ENGINE_STATS_FILE', 'POSTGRES_STATS_FILE']) {
      expect(Object.keys(CONFIG_SCHEMA), name).not.toContain(name);
    }
  });
});
