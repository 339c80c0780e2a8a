import type { Logger } from 'pino';
import type { Config } from '../app/config.js';
import { NotFoundError, StoreUnavailableError, ValidationError } from '../platform/http/errors.js';
import type { ClickHouseStore } from '../platform/clickhouse/clickhouse.js';
import type { Sql } from '../platform/postgres/postgres.js';
import type { Principal } from '../tenancy/tenancy-store.js';
import type { TraceHooks } from './trace-hooks.js';
import { findProject } from '../tenancy/project-store.js';
import type { ComputePool } from '../platform/compute/compute-pool.js';
import { ownedBytes } from '../platform/compute/owned-bytes.js';
import { otlpOrigin } from '../spans/event-rows.js';
import { PROJECT_RESOURCE_ATTRIBUTE } from './write/ingest-prepare.js';
import { IngestWriter } from './write/ingest-writer.js';
import { OverloadedError } from './write/ingest-budget.js';
import type { OtlpEncoding } from './otlp/otlp-response.js';
import { TraceSettler } from './settle/trace-settler.js';
import { registerTraces } from './settle/stored-traces.js';
import { storedLogCounts } from '../spans/stored-log-records.js';
import { traceKeyString } from '../spans/stored-spans.js';
import { registryWindowMs } from './settle/stored-traces-jobs.js';
import { RegistryWindow } from './settle/stored-traces-window.js';
import type { TracePricing } from '../spans/trace-pricing.js';
import { prepareIngestTask } from './write/ingest-prepare.js';
import type { Metrics } from '../platform/metrics/metrics.js';
import type { Reservation } from './write/ingest-budget.js';
import { queueDepth } from './settle/settle-queue.js';
import { SettleLag } from './settle/settle-lag.js';
import { prepareLogsTask } from './write/logs-prepare.js';
import { LoggedProjects } from './settle/logged-projects.js';

/**
 * Ingestion as a service: the body of an authenticated request → (compute pool) decoded,
 * validated, normalized spans and their rows → project check → the group-commit writer (durable
 * before the answer) → the settler, which turns settled traces into trace.processed and trace
 * summary rows.
 */

export interface IngestServiceDeps {
  config: Pick<
    Config,
    'traceSettleMs' | 'traceMaxWaitMs' | 'settleLeaseMs' | 'settleMaxLagMs' | 'ingestMaxInflightBytes' | 'ingestMaxQueueMs' | 'settleCacheMaxBytes' | 'ingestFlushMs' | 'ingestFlushMinRows' | 'ingestFlushIntervalMs' | 'ingestFlushCatchUpLagMs' | 'ingestBatchRows' | 'ingestMaxFutureSkewMs' | 'roles' | 'traceMaxSpans' | 'traceRegistryWindowMs'
  > & { faults?: Pick<Config['faults'], 'ingestTimeoutMs'> };
  ch: ClickHouseStore;
  compute: ComputePool;
  sql: Sql;
  logger: Logger;
  hooks: TraceHooks;
  /** The cost module's prices (src/spans/trace-pricing.ts); without them processed traces say `unavailable`. */
  pricing?: TracePricing;
  /** True while free space under DATA_DIR is below its floor (src/platform/readiness.ts): ingestion refuses. */
  diskLow?: () => boolean;
  metrics?: Metrics;
}

/** `work`, or 503 store_unavailable when PostgreSQL has not answered within `ms` (the work goes on). */
async function within<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new StoreUnavailableError('postgres', `PostgreSQL did not answer the project check within ${ms} ms; retry shortly`)), ms);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

export interface IngestResult {
  acceptedSpans: number;
  rejectedSpans: number;
  /** Of `rejectedSpans`, those refused because their trace reached TRACE_MAX_SPANS (the others were invalid). */
  rejectedOverLimit: number;
  /** Spans of this request already stored (a retried batch): acknowledged, not written again. */
  duplicateSpans: number;
  errorMessage: string;
}

/** What one ExportLogsServiceRequest came to (ExportLogsServiceResponse's partial_success). */
export interface LogsIngestResult {
  acceptedLogRecords: number;
  rejectedLogRecords: number;
  /** Of `rejectedLogRecords`, those refused because their trace reached its limit (the others were invalid). */
  rejectedOverLimit: number;
  errorMessage: string;
}

export { PROJECT_RESOURCE_ATTRIBUTE };
export const PROJECT_HEADER = 'x-lookout-project';

const PROJECT_CACHE_MS = 30_000;

function noProject(what: string): ValidationError {
  return new ValidationError(
    `No project for the ${what}: send the ${PROJECT_HEADER} header, set the resource attribute ${PROJECT_RESOURCE_ATTRIBUTE}, or use a project-limited API key`,
  );
}

export class IngestService {
  readonly writer: IngestWriter;
  readonly settler: TraceSettler;
  /** The settle lag every request of this process shares (back-pressure, freshness). */
  readonly lag: SettleLag;
  private readonly projectCache = new Map<string, number>();
  /** Projects that received log records (all processes): settle rounds read span_logs only for their traces. */
  private readonly loggedProjects: LoggedProjects;

  constructor(private readonly deps: IngestServiceDeps) {
    const { config, ch, logger } = deps;
    this.loggedProjects = new LoggedProjects(deps.sql);
    // Its own window, or a smaller one the retention job recorded (a window raised, unset, or set elsewhere).
    const registryWindow = new RegistryWindow(registryWindowMs(config));
    this.settler = new TraceSettler({
      ch,
      sql: deps.sql,
      compute: deps.compute,
      logger,
      leaseMs: config.settleLeaseMs,
      settleMs: config.traceSettleMs,
      maxWaitMs: config.traceMaxWaitMs,
      maxCachedBytes: config.settleCacheMaxBytes,
      hooks: deps.hooks,
      pricing: deps.pricing,
      metrics: deps.metrics,
      loggedProjects: this.loggedProjects,
    });
    this.lag = new SettleLag(deps.sql, { maxLagMs: config.settleMaxLagMs, logger });
    this.writer = new IngestWriter({
      ch,
      logger,
      maxInflightBytes: config.ingestMaxInflightBytes,
      flushMs: config.ingestFlushMs,
      flushMinRows: config.ingestFlushMinRows,
      flushIntervalMs: config.ingestFlushIntervalMs,
      catchingUp: () => this.catchingUp(),
      batchRows: config.ingestBatchRows,
      maxSpansPerTrace: config.traceMaxSpans,
      record: (traces) => this.settler.record(traces),
      register: async (traces, sinceMs) => registerTraces(deps.sql, traces, await registryWindow.current(deps.sql), sinceMs),
      timeoutMs: config.faults?.ingestTimeoutMs,
      diskLow: deps.diskLow,
      onPhase: deps.metrics ? (phase, seconds) => deps.metrics!.flushPhaseDuration.observe({ phase }, seconds) : undefined,
    });
  }

  /** Whether settling lags past INGEST_FLUSH_CATCH_UP_LAG_MS (as last read): flushes are then paced to free CPU for it. */
  catchingUp(): boolean {
    const bound = this.deps.config.ingestFlushCatchUpLagMs;
    return bound > 0 && (this.lag.reading?.lagMs ?? 0) > bound;
  }

  /**
   * Starts settling in a process with the worker role. Nothing to recover: the settle queue is the
   * record of unsettled traces, and whatever a crashed process left there is due for any settler.
   */
  async start(): Promise<void> {
    await this.lag.start();
    if (this.deps.config.roles.has('worker')) this.settler.start();
    const metrics = this.deps.metrics;
    if (metrics) {
      const budget = this.writer.budget;
      metrics.sources.ingestBudget = () => ({ inUseBytes: budget.inflightBytes, limitBytes: budget.limit });
      metrics.sources.ingestCatchingUp = () => this.catchingUp();
      metrics.sources.settleQueue = async () => {
        // The lag as the shared poll last read it; the depth counted now (a scrape is rare, the count exact).
        const depth = await queueDepth(this.deps.sql);
        return { depth, oldestDueAgeSeconds: (this.lag.reading?.lagMs ?? 0) / 1000, maxLagSeconds: this.lag.maxLagMs / 1000 };
      };
      metrics.sources.traceHooks = () => this.settler.hookLoad;
    }
  }

  /**
   * Admits an OTLP request: 503 while settling lags past SETTLE_MAX_LAG_MS or storage keeps
   * failing, 429 while decoding is queued past INGEST_MAX_QUEUE_MS, else a reservation on the
   * memory budget (429 when it is full).
   */
  admit(): Reservation {
    this.lag.admit();
    this.admitDecoding();
    return this.writer.admit();
  }

  /**
   * The memory budget bounds the bytes of requests in progress, not how long their decoding waits
   * for a compute worker: with the worker busy settling (which goes first) the same bytes can wait
   * many seconds, past an exporter's own timeout (10 s by default), which then sends the request
   * again. So a request is refused at once while the longest-waiting one has waited past the bound.
   */
  private admitDecoding(): void {
    const max = this.deps.config.ingestMaxQueueMs;
    const waitedMs = this.deps.compute.intakeWaitMs;
    if (max > 0 && waitedMs > max) {
      throw new OverloadedError(429, `Decoding of OTLP requests is queued ${Math.round(waitedMs)} ms (INGEST_MAX_QUEUE_MS=${max}); retry shortly`, 1, 'compute_queue');
    }
  }

  /** Graceful shutdown: flush every pending write, then settle what this process recorded. */
  async stop(): Promise<void> {
    await this.writer.stop();
    if (this.deps.config.roles.has('worker')) await this.settler.stop();
    await this.lag.stop();
  }

  /** A project deleted anywhere (src/platform/postgres/shared-events.ts) is no longer taken from the cache. */
  forgetProject(tenantId: string, projectId: string): void {
    this.projectCache.delete(`${tenantId}\u0000${projectId}`);
  }

  private async projectExists(tenantId: string, projectId: string): Promise<boolean> {
    const key = `${tenantId}\u0000${projectId}`;
    const cachedUntil = this.projectCache.get(key);
    if (cachedUntil !== undefined && cachedUntil > Date.now()) return true;
    const project = await findProject(this.deps.sql, tenantId, projectId);
    if (project) this.projectCache.set(key, Date.now() + PROJECT_CACHE_MS);
    return project !== null;
  }

  /**
   * The fixed project of a request: the key's project when it is project-limited (a header naming
   * another project is refused as not found), else the x-lookout-project header; null when each
   * resource must name its own (resource attribute lookout.project_id, applied on the pool).
   */
  fixedProject(principal: Principal, header: string | undefined): string | null {
    const headerProject = header?.trim().toLowerCase() || null;
    if (principal.projectId) {
      if (headerProject && headerProject !== principal.projectId) throw new NotFoundError('Project not found');
      return principal.projectId;
    }
    return headerProject;
  }

  /**
   * Every project of a request exists in the principal's tenant, else 404 with nothing written. The
   * stores' part of a request is bounded (INGEST_TIMEOUT_MS): this check here, the write after it.
   * Decoding is the compute pool's, not a store's, and is not counted.
   */
  private async requireProjects(tenantId: string, projects: string[]): Promise<void> {
    const timeoutMs = this.deps.config.faults?.ingestTimeoutMs;
    for (const projectId of projects) {
      const exists = this.projectExists(tenantId, projectId);
      if (!(await (timeoutMs === undefined ? exists : within(exists, timeoutMs)))) throw new NotFoundError('Project not found');
    }
  }

  /**
   * One ExportLogsServiceRequest body (any transport: the caller authenticated it and holds its
   * admission reservation): decoded, checked and turned into `span_logs` rows on the compute pool,
   * its projects checked (nothing is written for a project of another tenant), the rows stored, and
   * their traces queued to settle again (the records join their spans there and at every read).
   * Throws HttpErrors for 4xx/503; records without a span context come back as rejected.
   */
  async ingestLogs(principal: Principal, projectHeader: string | undefined, body: Buffer, encoding: OtlpEncoding): Promise<LogsIngestResult> {
    const fixedProject = this.fixedProject(principal, projectHeader);
    const payload = ownedBytes(body);
    const prepared = await this.deps.compute.run(
      prepareLogsTask,
      { body: payload, encoding, tenantId: principal.tenantId, fixedProject, maxFutureSkewMs: this.deps.config.ingestMaxFutureSkewMs },
      [payload.buffer as ArrayBuffer],
    );
    if (prepared.kind === 'undecodable') throw new ValidationError(prepared.message);
    if (prepared.kind === 'no_project') throw noProject('log records');
    await this.requireProjects(principal.tenantId, prepared.projects);
    const result: LogsIngestResult = {
      acceptedLogRecords: prepared.acceptedRecords,
      rejectedLogRecords: prepared.rejectedRecords,
      rejectedOverLimit: 0,
      errorMessage: prepared.errorMessage,
    };
    if (prepared.lines.length === 0) return result;
    const origin = otlpOrigin(principal.keyId, principal.userId ?? '');
    try {
      const { lines, traces } = await this.withinTraceLimit(prepared.lines, prepared.lineTraces, prepared.traces, result);
      if (lines.length === 0) return result;
      // Marked before they are stored (logged-projects.ts: what makes settling read them), durable
      // before the answer, then queued: a failure of any is a 503 the exporter retries (the same
      // records again collapse by record_id).
      await this.loggedProjects.mark(traces);
      await this.deps.ch.insertLines(this.deps.ch.table('span_logs'), lines, 'ingest');
      await this.settler.recordLogRecords(traces.map((t) => ({ ...t, origin })));
    } catch (error) {
      this.deps.logger.error({ err: error }, 'storing log records failed');
      throw new OverloadedError(503, 'Trace storage is unavailable; retry shortly', 5, 'storage_failing');
    }
    return result;
  }

  /**
   * A trace keeps at most TRACE_MAX_SPANS log records, as it keeps at most that many spans (every
   * read of the trace joins them all); records past it are rejected, counted in `result`. Requests
   * racing for the same trace may together pass the limit by what they carry.
   */
  private async withinTraceLimit(lines: string[], lineTraces: number[], traces: { tenantId: string; projectId: string; traceId: string }[], result: LogsIngestResult): Promise<{ lines: string[]; traces: typeof traces }> {
    const limit = this.deps.config.traceMaxSpans;
    const stored = await storedLogCounts(this.deps.ch, traces);
    const counts = traces.map((t) => stored.get(traceKeyString(t)) ?? 0);
    const kept: string[] = [];
    const keptTraces = new Set<number>();
    const full = new Set<number>();
    lines.forEach((line, i) => {
      const t = lineTraces[i];
      if (counts[t] >= limit) {
        full.add(t);
        return;
      }
      counts[t]++;
      keptTraces.add(t);
      kept.push(line);
    });
    const rejected = lines.length - kept.length;
    if (rejected > 0) {
      const named = [...full].slice(0, 3).map((t) => traces[t].traceId);
      const message = `rejected ${rejected} log records: trace ${named.join(', ')}${full.size > 3 ? ` and ${full.size - 3} more` : ''} reached the limit of ${limit} log records per trace (TRACE_MAX_SPANS)`;
      result.acceptedLogRecords -= rejected;
      result.rejectedLogRecords += rejected;
      result.rejectedOverLimit += rejected;
      result.errorMessage = result.errorMessage ? `${result.errorMessage}; ${message}` : message;
    }
    return { lines: kept, traces: [...keptTraces].map((t) => traces[t]) };
  }

  /**
   * One OTLP request body: decoded, validated, normalized and turned into rows on the compute pool
   * (the body is handed over without a copy), its projects checked (a project of another tenant is
   * a 404), then written durably. Throws HttpErrors for 4xx/429/503.
   */
  async ingest(principal: Principal, projectHeader: string | undefined, body: Buffer, encoding: OtlpEncoding): Promise<IngestResult> {
    const fixedProject = this.fixedProject(principal, projectHeader);
    const bytes = body.length;
    // The body moves to the worker without a copy when it owns its memory.
    const payload = ownedBytes(body);
    const prepared = await this.deps.compute.run(
      prepareIngestTask,
      {
        body: payload,
        encoding,
        tenantId: principal.tenantId,
        fixedProject,
        origin: otlpOrigin(principal.keyId, principal.userId ?? ''),
        maxFutureSkewMs: this.deps.config.ingestMaxFutureSkewMs,
      },
      [payload.buffer as ArrayBuffer],
    );
    if (prepared.kind === 'undecodable') throw new ValidationError(prepared.message);
    if (prepared.kind === 'no_project') throw noProject('spans');
    await this.requireProjects(principal.tenantId, prepared.projects);
    const result: IngestResult = {
      acceptedSpans: prepared.acceptedSpans,
      rejectedSpans: prepared.rejectedSpans,
      rejectedOverLimit: 0,
      duplicateSpans: 0,
      errorMessage: prepared.errorMessage,
    };
    if (prepared.acceptedSpans === 0) return result;
    const written = await this.writer.write({ rows: prepared.rows, traces: prepared.traces, previews: prepared.previews, bytes });
    result.duplicateSpans = written.duplicates;
    if (written.rejected > 0) {
      result.acceptedSpans -= written.rejected;
      result.rejectedSpans += written.rejected;
      result.rejectedOverLimit = written.rejected;
      result.errorMessage = result.errorMessage ? `${result.errorMessage}; ${written.rejectMessage}` : written.rejectMessage;
    }
    return result;
  }
}
