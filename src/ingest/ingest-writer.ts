import type { Logger } from 'pino';
import type { ClickHouseStore } from '../stores/clickhouse.js';
import { raw, sql } from '../stores/clickhouse-sql/fragment.js';
import { traceKeysGuard } from '../stores/clickhouse-sql/tenant-guard.js';
import type { EventOrigin, SpanEventRows, ToolCalledRow } from './event-rows.js';
import { IngestBudget, OverloadedError, type Reservation } from './ingest-budget.js';
import type { NormalizedSpan } from './normalized-span.js';

/**
 * The ingest write path (DESIGN.md "Ingestion"):
 *
 * - Group commit: requests hand in their rows and wait; one flush at a time takes everything
 *   pending (up to `batchRows` spans / `batchBytes`), so concurrent requests share large inserts.
 *   A flush starts when a bound is reached, `flushMs` after the first pending request, or as soon
 *   as the previous flush ends.
 * - Durability: a request's promise resolves only after ClickHouse acknowledged every insert that
 *   holds its rows; the endpoint answers 200 only then. On failure every waiting request fails
 *   (503, the exporter retries) — nothing is acknowledged that was not written.
 * - Settle queue: after ClickHouse acknowledged a flush, its traces are recorded in the settle
 *   queue in PostgreSQL (one upsert per flush) before any request of it is answered. A crash or a
 *   PostgreSQL failure between the two leaves spans in ClickHouse that no queue row names, but the
 *   requests were not answered 200: the exporter's retry finds the spans stored, and a trace whose
 *   spans were all duplicates is still recorded — so every acknowledged span's trace is queued.
 *   Recording before the insert instead would let a settler claim and finish the trace before the
 *   insert lands, losing those spans from the summary for good.
 * - Idempotence: spans already stored (same tenant, project, trace, span) are skipped with their
 *   events, so a re-sent batch writes nothing new. The event tables are written before `spans`,
 *   so a span found in `spans` always has its events; a crash in between leaves the batch
 *   unacknowledged and the retry completes it (the event tables collapse repeats on merge).
 * - Back-pressure: each request holds a reservation on the memory budget (ingest-budget.ts),
 *   charged as its body arrives and inflates and released when the request ends; over the bound
 *   the endpoint answers 429 with Retry-After instead of queueing more in memory.
 */

export interface TraceNote {
  tenantId: string;
  projectId: string;
  traceId: string;
  hasRoot: boolean;
  origin: EventOrigin;
  /** The request's spans of this trace, so the settler can summarize from memory. */
  spans: NormalizedSpan[];
  /** The tool.called rows the request wrote for them (to rewrite only what the whole trace changes). */
  toolRows: ToolCalledRow[];
  /**
   * Set by the writer: span ids of this trace that were already in ClickHouse before this write.
   * Spans the settler does not hold mean the trace is partly elsewhere (an earlier settle, another
   * process, before a restart) and must be read back from ClickHouse.
   */
  storedBefore?: Set<string>;
}

export interface PreparedWrite {
  rows: SpanEventRows;
  traces: TraceNote[];
  /** Approximate bytes of the rows (JSON size of the decoded request), for the batch bound. */
  bytes: number;
}

export interface WriteResult {
  written: number;
  duplicates: number;
}

export interface IngestWriterOptions {
  ch: ClickHouseStore;
  logger: Logger;
  maxInflightBytes: number;
  flushMs: number;
  batchRows: number;
  batchBytes?: number;
  /** Records the traces of a flush once their spans are durable (the settle queue); a failure fails the flush. */
  record?: (traces: TraceNote[]) => Promise<void>;
}

export { OverloadedError };

interface Pending {
  write: PreparedWrite;
  resolve: (result: WriteResult) => void;
  reject: (error: unknown) => void;
}

const spanKey = (r: { tenant_id: string; project_id: string; trace_id: string; span_id: string }) =>
  `${r.tenant_id}\u0000${r.project_id}\u0000${r.trace_id}\u0000${r.span_id}`;

export class IngestWriter {
  private pending: Pending[] = [];
  private pendingRows = 0;
  private pendingBytes = 0;
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> | null = null;
  private stopped = false;
  /** Consecutive failed flushes: while ClickHouse keeps failing, new requests get 503 at once for a while. */
  private failures = 0;
  private lastFailureAt = 0;
  private readonly batchBytes: number;
  readonly budget: IngestBudget;
  /**
   * Runs between the duplicate check and the inserts of every flush. Only the scale-out tests set
   * it, to widen the window in which two processes both find a span new and both store it.
   */
  afterDuplicateCheck: (() => Promise<void>) | null = null;

  constructor(private readonly options: IngestWriterOptions) {
    this.batchBytes = options.batchBytes ?? 64 * 1024 * 1024;
    this.budget = new IngestBudget(options.maxInflightBytes);
  }

  get stats() {
    return { inflightBytes: this.budget.inflightBytes, pendingRows: this.pendingRows, failures: this.failures };
  }

  /**
   * Opens a request's reservation on the memory budget, charged as the request reads and inflates
   * its body; throws 503 with Retry-After while stopping or while storage keeps failing.
   */
  admit(): Reservation {
    if (this.stopped) throw new OverloadedError(503, 'Lookout is shutting down; retry shortly', 5);
    if (this.failures >= 3 && Date.now() - this.lastFailureAt < 5000) {
      throw new OverloadedError(503, 'Trace storage is unavailable; retry shortly', 5);
    }
    return this.budget.open();
  }

  /** Queues rows for the next flush; resolves once they are durable. */
  write(write: PreparedWrite): Promise<WriteResult> {
    if (this.stopped) return Promise.reject(new OverloadedError(503, 'Lookout is shutting down; retry shortly', 5));
    if (write.rows.spans.length === 0) return Promise.resolve({ written: 0, duplicates: 0 });
    return new Promise<WriteResult>((resolve, reject) => {
      this.pending.push({ write, resolve, reject });
      this.pendingRows += write.rows.spans.length;
      this.pendingBytes += write.bytes;
      if (this.pendingRows >= this.options.batchRows || this.pendingBytes >= this.batchBytes) this.kick();
      else if (!this.timer && !this.flushing) this.timer = setTimeout(() => this.kick(), this.options.flushMs);
    });
  }

  /** Flushes everything pending and refuses new writes (graceful shutdown). */
  async stop(): Promise<void> {
    this.stopped = true;
    this.kick();
    while (this.flushing) await this.flushing;
  }

  private kick(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    if (this.flushing) return;
    this.flushing = this.flushLoop().finally(() => {
      this.flushing = null;
    });
  }

  private async flushLoop(): Promise<void> {
    while (this.pending.length > 0) {
      let rows = 0;
      let bytes = 0;
      let take = 0;
      while (take < this.pending.length && (take === 0 || (rows < this.options.batchRows && bytes < this.batchBytes))) {
        rows += this.pending[take].write.rows.spans.length;
        bytes += this.pending[take].write.bytes;
        take++;
      }
      const batch = this.pending.splice(0, take);
      this.pendingRows -= rows;
      this.pendingBytes -= bytes;
      await this.flushBatch(batch);
    }
  }

  /** Keys of all spans already in `spans` for the traces of the batch (one query for the whole batch). */
  private async storedKeys(rows: SpanEventRows['spans']): Promise<{ keys: Set<string>; byTrace: Map<string, Set<string>>; rooted: Set<string> }> {
    const { ch } = this.options;
    const found = await ch.read<{ tenant_id: string; project_id: string; trace_id: string; span_id: string; is_root: number | boolean }>(
      sql`SELECT tenant_id, project_id, trace_id, span_id, parent_span_id = '' AS is_root FROM ${raw(ch.table('spans'))}
              WHERE ${traceKeysGuard(rows.map((r) => ({ tenantId: r.tenant_id, projectId: r.project_id, traceId: r.trace_id })))}`,
      { lane: 'ingest' },
    );
    const keys = new Set<string>();
    const byTrace = new Map<string, Set<string>>();
    const rooted = new Set<string>();
    for (const r of found) {
      keys.add(spanKey(r));
      const traceKey = `${r.tenant_id}\u0000${r.project_id}\u0000${r.trace_id}`;
      // A late span's root may have come earlier (to any process): the trace then settles on the quiet period.
      if (Number(r.is_root) === 1) rooted.add(traceKey);
      let ids = byTrace.get(traceKey);
      if (!ids) byTrace.set(traceKey, (ids = new Set()));
      ids.add(r.span_id);
    }
    return { keys, byTrace, rooted };
  }

  private async insert(table: string, values: object[]): Promise<void> {
    await this.options.ch.insert(this.options.ch.table(table), values, 'ingest');
  }

  private async flushBatch(batch: Pending[]): Promise<void> {
    try {
      const all: SpanEventRows = { spans: [], generations: [], tools: [], errors: [] };
      for (const p of batch) {
        for (const r of p.write.rows.spans) all.spans.push(r);
      }
      const { keys: stored, byTrace: storedByTrace, rooted } = await this.storedKeys(all.spans);
      if (this.afterDuplicateCheck) await this.afterDuplicateCheck();
      // Skip stored spans and repeats inside the batch (the same span sent by two requests).
      const keep = new Set<string>();
      const results: WriteResult[] = [];
      const touchedTraces: TraceNote[] = [];
      const spans: SpanEventRows['spans'] = [];
      for (const p of batch) {
        let written = 0;
        let duplicates = 0;
        for (const r of p.write.rows.spans) {
          const key = spanKey(r);
          if (stored.has(key) || keep.has(key)) {
            duplicates++;
            continue;
          }
          keep.add(key);
          spans.push(r);
          written++;
        }
        results.push({ written, duplicates });
        // Every trace of the request, duplicates included: a retry after a crash between the insert
        // and the queue upsert must still queue its trace.
        for (const t of p.write.traces) {
          const traceKey = `${t.tenantId}\u0000${t.projectId}\u0000${t.traceId}`;
          t.storedBefore = storedByTrace.get(traceKey) ?? new Set();
          if (rooted.has(traceKey)) t.hasRoot = true;
          touchedTraces.push(t);
        }
      }
      const fresh = <T extends { tenant_id: string; project_id: string; trace_id: string; span_id: string }>(rows: T[]) =>
        rows.filter((r) => keep.has(spanKey(r)));
      const generations = batch.flatMap((p) => fresh(p.write.rows.generations));
      const tools = batch.flatMap((p) => fresh(p.write.rows.tools));
      const errors = batch.flatMap((p) => fresh(p.write.rows.errors));
      // Events first (concurrently), spans last: a span found in `spans` always has its events.
      await Promise.all([
        this.insert('event_generation_completed', generations),
        this.insert('event_tool_called', tools),
        this.insert('event_span_errored', errors),
      ]);
      await this.insert('spans', spans);
      await this.options.record?.(touchedTraces);
      this.failures = 0;
      batch.forEach((p, i) => p.resolve(results[i]));
    } catch (error) {
      this.failures++;
      this.lastFailureAt = Date.now();
      this.options.logger.error({ err: error, requests: batch.length }, 'ingest flush failed');
      const failure = new OverloadedError(503, 'Could not store the spans; retry shortly', 5);
      for (const p of batch) p.reject(failure);
    }
  }
}
