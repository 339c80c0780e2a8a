import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { NotFoundError, ValidationError } from '../http/errors.js';
import type { ClickHouseStore } from '../stores/clickhouse.js';
import type { Sql } from '../stores/postgres.js';
import type { Principal } from '../tenancy/tenancy-store.js';
import type { TraceHooks } from '../trace-hooks.js';
import { findProject } from '../workspace/projects/project-store.js';
import { deriveSpanEventRows, otlpOrigin, type SpanEventRows } from './event-rows.js';
import { IngestWriter, type TraceNote } from './ingest-writer.js';
import { normalizeExport, type NormalizedSpan } from './normalized-span.js';
import type { DecodedExport } from './otlp-types.js';
import { buildSpanTree } from './span-tree.js';
import { validateExport } from './span-validation.js';
import { TraceSettler } from './trace-settler.js';
import { traceAgentName, type PriceTrace } from './trace-summary.js';

/**
 * Ingestion as a service: validated OTLP spans of an authenticated request → project resolution
 * → normalized spans and their event rows → the group-commit writer (durable before the answer)
 * → the settler, which turns settled traces into trace.processed and trace summary rows.
 */

export interface IngestServiceDeps {
  config: Pick<Config, 'traceSettleMs' | 'traceMaxWaitMs' | 'settleLeaseMs' | 'ingestMaxInflightBytes' | 'ingestFlushMs' | 'ingestBatchRows' | 'ingestMaxFutureSkewMs' | 'roles'>;
  ch: ClickHouseStore;
  sql: Sql;
  logger: Logger;
  hooks: TraceHooks;
  /** The cost module's pricing (src/analytics/cost/ingest-pricing.ts), looked up at each processing. */
  priceTrace?: () => PriceTrace | undefined;
}

export interface IngestResult {
  acceptedSpans: number;
  rejectedSpans: number;
  /** Spans of this request already stored (a retried batch): acknowledged, not written again. */
  duplicateSpans: number;
  errorMessage: string;
}

/** The resource attribute naming the project when neither the key nor the header does (DESIGN.md "Ingestion"). */
export const PROJECT_RESOURCE_ATTRIBUTE = 'lookout.project_id';
export const PROJECT_HEADER = 'x-lookout-project';

const PROJECT_CACHE_MS = 30_000;

export class IngestService {
  readonly writer: IngestWriter;
  readonly settler: TraceSettler;
  private readonly projectCache = new Map<string, number>();

  constructor(private readonly deps: IngestServiceDeps) {
    const { config, ch, logger } = deps;
    this.settler = new TraceSettler({
      ch,
      sql: deps.sql,
      logger,
      leaseMs: config.settleLeaseMs,
      settleMs: config.traceSettleMs,
      maxWaitMs: config.traceMaxWaitMs,
      hooks: deps.hooks,
      get priceTrace() {
        return deps.priceTrace?.();
      },
    });
    this.writer = new IngestWriter({
      ch,
      logger,
      maxInflightBytes: config.ingestMaxInflightBytes,
      flushMs: config.ingestFlushMs,
      batchRows: config.ingestBatchRows,
      record: (traces) => this.settler.record(traces),
    });
  }

  /**
   * Starts settling in a process with the worker role. Nothing to recover: the settle queue is the
   * record of unsettled traces, and whatever a crashed process left there is due for any settler.
   */
  start(): void {
    if (this.deps.config.roles.has('worker')) this.settler.start();
  }

  /** Graceful shutdown: flush every pending write, then settle what this process recorded. */
  async stop(): Promise<void> {
    await this.writer.stop();
    if (this.deps.config.roles.has('worker')) await this.settler.stop();
  }

  /** A project deleted anywhere (src/stores/shared-events.ts) is no longer taken from the cache. */
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
   * The project of each resource: the key's project when it is project-limited (a header naming
   * another project is refused as not found), else the x-lookout-project header, else the
   * resource's lookout.project_id attribute; none is a 400. A project of another tenant is a 404.
   */
  async resolveProjects(principal: Principal, header: string | undefined, decoded: DecodedExport): Promise<string[]> {
    const headerProject = header?.trim() || null;
    let fixed: string | null = null;
    if (principal.projectId) {
      if (headerProject && headerProject !== principal.projectId) throw new NotFoundError('Project not found');
      fixed = principal.projectId;
    } else if (headerProject) {
      fixed = headerProject;
    }
    const projects = decoded.resourceSpans.map((rs) => {
      if (fixed) return fixed;
      const value = rs.resource[PROJECT_RESOURCE_ATTRIBUTE];
      if (typeof value !== 'string' || value === '') {
        throw new ValidationError(
          `No project for the spans: send the ${PROJECT_HEADER} header, set the resource attribute ${PROJECT_RESOURCE_ATTRIBUTE}, or use a project-limited API key`,
        );
      }
      return value;
    });
    for (const projectId of new Set(projects)) {
      if (!(await this.projectExists(principal.tenantId, projectId))) throw new NotFoundError('Project not found');
    }
    return projects;
  }

  /** Validates, resolves projects, derives rows and writes them durably. Throws HttpErrors for 4xx/429/503. */
  async ingest(principal: Principal, projectHeader: string | undefined, decoded: DecodedExport, bytes: number): Promise<IngestResult> {
    const validation = validateExport(decoded, { maxFutureSkewMs: this.deps.config.ingestMaxFutureSkewMs });
    const result: IngestResult = {
      acceptedSpans: validation.acceptedSpans,
      rejectedSpans: validation.rejectedSpans,
      duplicateSpans: 0,
      errorMessage: validation.errorMessage,
    };
    if (validation.acceptedSpans === 0) {
      // Still check the project, so a wrong one is reported even when every span is invalid.
      if (decoded.resourceSpans.length > 0) await this.resolveProjects(principal, projectHeader, decoded);
      return result;
    }
    const projects = await this.resolveProjects(principal, projectHeader, validation.valid);
    const spans: NormalizedSpan[] = [];
    validation.valid.resourceSpans.forEach((rs, i) => {
      spans.push(...normalizeExport({ resourceSpans: [rs] }, { tenantId: principal.tenantId, projectId: projects[i] }));
    });
    const origin = otlpOrigin(principal.keyId, principal.userId ?? '');
    const { rows, traces } = deriveRequestRows(spans, origin);
    const written = await this.writer.write({ rows, traces, bytes });
    result.duplicateSpans = written.duplicates;
    return result;
  }
}

/** Rows for the spans of one request, trace by trace (the tree and fallback agent are per trace). */
export function deriveRequestRows(spans: NormalizedSpan[], origin: ReturnType<typeof otlpOrigin>): { rows: SpanEventRows; traces: TraceNote[] } {
  const byTrace = new Map<string, NormalizedSpan[]>();
  for (const s of spans) {
    const list = byTrace.get(s.traceId);
    if (list) list.push(s);
    else byTrace.set(s.traceId, [s]);
  }
  const rows: SpanEventRows = { spans: [], generations: [], tools: [], errors: [] };
  const traces: TraceNote[] = [];
  for (const traceSpans of byTrace.values()) {
    const tree = buildSpanTree(traceSpans);
    const agent = traceAgentName(tree);
    const derived = deriveSpanEventRows(traceSpans, tree, origin, () => agent);
    rows.spans.push(...derived.spans);
    rows.generations.push(...derived.generations);
    rows.tools.push(...derived.tools);
    rows.errors.push(...derived.errors);
    const first = traceSpans[0];
    traces.push({
      tenantId: first.tenantId,
      projectId: first.projectId,
      traceId: first.traceId,
      hasRoot: tree.roots.length > 0,
      origin,
      spans: traceSpans,
      toolRows: derived.tools,
    });
  }
  return { rows, traces };
}
