import type { Logger } from 'pino';
import type { ClickHouseStore } from '../../platform/clickhouse/clickhouse.js';
import { readWithMutationsOnFly } from '../../platform/clickhouse/mutations-on-fly.js';
import { param, raw, sql, type Fragment } from '../../platform/clickhouse/sql/fragment.js';
import { traceKeysGuard, type TraceKeyLike } from '../../platform/clickhouse/sql/tenant-guard.js';
import { INSERT_COLUMNS, lineOf, PREVIEW_COLUMNS, spanIdOfSpanKey, spanKeyIn, traceKeyOf, traceKeyOfSpanKey, type EncodedLines, type EncodedSpanEventRows, type InsertTable } from './encoded-rows.js';
import { admitRequest, newFlushSpans, requestParts, type FlushSpans } from './flush-spans.js';
import type { PackedToolRow } from './packed-tool-rows.js';
import { readBackBound, traceKeyString } from '../../spans/stored-spans.js';
import type { RegisteredTrace, Registration } from '../settle/stored-traces.js';
import { IngestBudget, OverloadedError, type Reservation } from './ingest-budget.js';
import type { Origin } from '../../spans/origin.js';
import { StoreUnavailableError } from '../../platform/http/errors.js';
import { storeUnavailable } from '../../platform/store-errors.js';
import { removeUnstoredRows, type FlushedSpan } from './unstored-rows.js';

/**
 * The ingest write path:
 *
 * - Group commit: requests hand in their rows and wait; one flush at a time takes everything
 *   pending (up to `batchRows` spans / `batchBytes`), so concurrent requests share large inserts.
 *   A flush starts when a bound is reached or `flushMs` after the first pending request. When
 *   requests are already waiting as a flush ends (a steady stream) and hold fewer than
 *   `flushMinRows` spans, the next flush waits for that many, at most until `flushIntervalMs`
 *   after the previous one started: every insert writes a part to disk at a fixed cost (its files,
 *   then merging it away), so fewer, larger flushes cost less CPU per span. A sender that waits
 *   for its answer before sending again finds nothing waiting behind its own and is never held
 *   back; senders that keep several requests in flight fill the next flush at once.
 * - Catching up: while settling lags (`catchingUp`), a lone request waits up to CATCH_UP_FLUSH_MS
 *   for company, and a steady stream for three times the spans at most twice the interval. Answers
 *   come later (up to about a second), and the engine writes and merges far fewer parts: CPU that
 *   settling needs to catch up. A sender that waits for each answer waits CATCH_UP_FLUSH_MS more
 *   for each while it lasts, not the interval.
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
 *   events, so a re-sent batch writes nothing new. Which traces can have stored spans at all is
 *   answered by the stored-trace registry in PostgreSQL (stored-traces.ts): the flush registers its
 *   traces before any insert, and only traces the registry already held are checked in ClickHouse
 *   (a crash after the registration leaves a row without spans: the retry checks, finds none).
 *   A trace whose registry row knows when its first spans were written (the flush that created it,
 *   stored-traces.ts) is checked only among spans ingested since then, less a minute for clocks, so
 *   the check skips the parts written before (the minmax index on `ingested_at`) and its cost does
 *   not grow with the table; a trace whose history is unknown is read by key alone. Both reads see
 *   every stored span of their traces, so the check stays exact.
 *   The event tables are written before `spans`, so a span found in `spans` always has its events;
 *   a crash in between leaves the batch unacknowledged and the retry completes it (the event
 *   tables collapse repeats on merge).
 * - Span limit: a trace stores at most `maxSpansPerTrace` spans. The count is the trace's spans
 *   already in ClickHouse (the duplicate check reads them anyway; none for a trace the registry just
 *   created) plus those kept earlier in the same flush; flushes run one at a time, so it is exact
 *   across requests within a process. Spans past it are rejected per request (OTLP
 *   partial_success), with their events; the rest is kept.
 * - Back-pressure: each request holds a reservation on the memory budget (ingest-budget.ts),
 *   charged as its body arrives and inflates and released when the request ends; over the bound
 *   the endpoint answers 429 with Retry-After instead of queueing more in memory.
 */

export interface TraceNote {
  tenantId: string;
  projectId: string;
  traceId: string;
  otelTraceId: string;
  hasRoot: boolean;
  origin: Origin;
  /** Where this trace's spans sit in the request's encoded `spans` rows: [start, end). */
  spanRange: [number, number];
  /**
   * The earliest and latest start (epoch ms) of this trace's spans in the request: the stored-trace
   * registry keeps the latest, and trusts a created row only when the earliest is inside its window.
   * Absent: unknown, which the registry treats as outside any window (checked, kept by the lifetime rule).
   */
  spanStartMs?: [number, number];
  /**
   * Set by the writer from spanRange, for the settler to summarize from memory (on the compute
   * pool): the ids and `spans` rows (JSON lines, views into the request's insert body) of the spans it stored.
   */
  spanIds?: string[];
  spanLines?: Uint8Array[];
  /** The tool.called rows the request wrote for them (to rewrite only what the whole trace changes). */
  toolRows: PackedToolRow[];
  /** Where this trace's generation.completed rows sit in the request's encoded rows: [start, end). */
  generationRange?: [number, number];
  /**
   * Set by the writer from generationRange: the span ids and lines (views into the request's insert
   * body) of the generation.completed rows it wrote for spans it stored, so settling from memory
   * rewrites only the rows the whole trace changes.
   */
  generationIds?: string[];
  generationLines?: Uint8Array[];
  /**
   * Set by the writer: how many spans of this trace were already in ClickHouse before this flush.
   * More than the settler holds means the trace is partly elsewhere (an earlier settle, another
   * process, before a restart) and must be read back from ClickHouse. A count, not the ids: the
   * ids of a 100,000-span trace read back at every flush made ingesting it quadratic.
   */
  storedBeforeCount?: number;
  /**
   * Set by the writer when the stored-trace registry answered: the trace's registrations count after
   * this flush's upsert. The settle cache holds a trace whole only while every registration was its own.
   */
  registeredSeq?: number;
  /**
   * Set by the writer when the (complete) stored-trace registry created the trace in this flush (the
   * epoch ms, on this process's clock, taken before the registration) or its row knew when the
   * trace's first spans were written (stored-traces.ts storedSince): every span of the trace is
   * written after it (settle-queue.ts QueueRecord.storedSinceMs). Absent: unknown.
   */
  storedSinceMs?: number;
}

export interface PreparedWrite {
  /** Rows already serialized (encoded-rows.ts). */
  rows: EncodedSpanEventRows;
  traces: TraceNote[];
  /**
   * The trace list's row of each trace until it settles (trace-preview.ts; line i is traces[i]'s),
   * written by the flush that stores a trace's first spans. Absent: no previews.
   */
  previews?: EncodedLines;
  /** Approximate bytes of the rows (JSON size of the decoded request), for the batch bound. */
  bytes: number;
}

export interface WriteResult {
  written: number;
  duplicates: number;
  /** Spans refused because their trace reached the span limit. */
  rejected: number;
  /** '' when nothing was rejected. */
  rejectMessage: string;
}

export interface IngestWriterOptions {
  ch: ClickHouseStore;
  logger: Logger;
  maxInflightBytes: number;
  flushMs: number;
  /**
   * Under a steady stream, the spans a flush waits for (INGEST_FLUSH_MIN_ROWS), at most until
   * `flushIntervalMs` after the previous flush started (INGEST_FLUSH_INTERVAL_MS); 0: no wait.
   */
  flushMinRows?: number;
  flushIntervalMs?: number;
  /** True while settling lags (INGEST_FLUSH_CATCH_UP_LAG_MS): flushes are paced as "Catching up" above says. Absent: never. */
  catchingUp?: () => boolean;
  /** A lone request's wait for company while catching up; default CATCH_UP_FLUSH_MS (tests lengthen it). */
  catchUpFlushMs?: number;
  batchRows: number;
  batchBytes?: number;
  /** Spans stored per trace at most (TRACE_MAX_SPANS); Infinity: no limit. */
  maxSpansPerTrace?: number;
  /** Records the traces of a flush once their spans are durable (the settle queue); a failure fails the flush. */
  record?: (traces: TraceNote[]) => Promise<void>;
  /**
   * Registers a flush's traces before its inserts (stored-traces.ts registerTraces), `sinceMs` (this
   * process's clock, read before the call) kept on the rows it creates; a failure fails the flush.
   * Absent: every trace is checked in ClickHouse by key.
   */
  register?: (traces: RegisteredTrace[], sinceMs: number) => Promise<Registration>;
  /**
   * INGEST_TIMEOUT_MS: a request not stored within this is answered 503 store_unavailable (the
   * stores are not answering) instead of waiting on; absent: no bound.
   */
  timeoutMs?: number;
  /** True while free space under DATA_DIR is below its floor: requests are refused before the disk fills. */
  diskLow?: () => boolean;
  /** Told how long each step of a flush took, as it ends (the metrics). */
  onPhase?: (phase: FlushPhase, seconds: number) => void;
}

/**
 * The steps of a flush: register (the stored-trace registry, PostgreSQL), check (the duplicate check,
 * ClickHouse), insert (the event and `spans` inserts), record (the settle queue, PostgreSQL).
 */
export type FlushPhase = 'register' | 'check' | 'insert' | 'record';

export { OverloadedError };

/**
 * The pacing while catching up (header, "Catching up"): chosen by measurement — at a fixed 7,500
 * spans/s in requests of 1,500 spans every 200 ms, flushes paced so (200 ms, 6,000 spans, 1 s) cost
 * the service 13 % less CPU per span than the defaults, the engine's merges 28–30 % less (bench/README.md).
 */
export const CATCH_UP_FLUSH_MS = 200;
export const CATCH_UP_ROWS_FACTOR = 3;
export const CATCH_UP_INTERVAL_FACTOR = 2;

interface Pending {
  write: PreparedWrite;
  resolve: (result: WriteResult) => void;
  reject: (error: unknown) => void;
  /** The request's deadline timer (INGEST_TIMEOUT_MS). */
  timer?: NodeJS.Timeout;
}


export class IngestWriter {
  private pending: Pending[] = [];
  private pendingRows = 0;
  private pendingBytes = 0;
  private timer: NodeJS.Timeout | null = null;
  /** The timer waits CATCH_UP_FLUSH_MS (catching up), not flushMs: enough spans, or settling caught up, end it. */
  private catchUpTimer = false;
  /** Ends the flush loop's wait for more spans (enough of them or a bound reached, a stop). */
  private endPace: (() => void) | null = null;
  /** When the flush that the wait in progress (pace) follows started. */
  private paceFrom = 0;
  private flushing: Promise<void> | null = null;
  private stopped = false;
  /** Consecutive failed flushes: while ClickHouse keeps failing, new requests get 503 at once for a while. */
  private failures = 0;
  private lastFailureAt = 0;
  /** The store the last failed flush named (for the 503 of requests refused while it keeps failing). */
  private lastFailure: StoreUnavailableError | null = null;
  /** When the flush in progress started (0: none): a flush older than the deadline means the stores are not answering. */
  private flushStartedAt = 0;
  /** Rows of a failed flush not yet removed (the store was away): removed before the next flush writes. */
  private unstored: FlushedSpan[] = [];
  private readonly batchBytes: number;
  readonly budget: IngestBudget;
  /**
   * Runs between the duplicate check and the inserts of every flush. Only the scale-out tests set
   * it, to widen the window in which two processes both find a span new and both store it.
   */
  afterDuplicateCheck: (() => Promise<void>) | null = null;
  /** Runs after the event inserts and before the `spans` insert; only tests set it, to fail a flush there. */
  beforeSpansInsert: (() => Promise<void>) | null = null;

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
    if (this.stopped) throw new OverloadedError(503, 'Lookout is shutting down; retry shortly', 5, 'shutting_down');
    if (this.failures >= 3 && Date.now() - this.lastFailureAt < 5000) {
      throw this.lastFailure ?? new OverloadedError(503, 'Trace storage is unavailable; retry shortly', 5, 'storage_failing');
    }
    if (this.options.diskLow?.()) {
      throw new StoreUnavailableError('disk', 'Free space under DATA_DIR is below its floor (DATA_DIR_MIN_FREE_MB); retry once space is freed');
    }
    // A flush running past the request deadline: the stores are not answering, and a new request
    // would only wait for the same deadline.
    const timeout = this.options.timeoutMs;
    if (timeout !== undefined && this.flushStartedAt > 0 && Date.now() - this.flushStartedAt > timeout) {
      throw new StoreUnavailableError('stores', `Trace storage has not answered for ${Math.round((Date.now() - this.flushStartedAt) / 1000)} s; retry shortly`);
    }
    return this.budget.open();
  }

  /** Queues rows for the next flush; resolves once they are durable. */
  write(write: PreparedWrite): Promise<WriteResult> {
    if (this.stopped) return Promise.reject(new OverloadedError(503, 'Lookout is shutting down; retry shortly', 5, 'shutting_down'));
    if (write.rows.spans.keys.length === 0) return Promise.resolve({ written: 0, duplicates: 0, rejected: 0, rejectMessage: '' });
    return new Promise<WriteResult>((resolve, reject) => {
      const entry: Pending = { write, resolve, reject };
      const timeout = this.options.timeoutMs;
      if (timeout !== undefined) {
        // Past the deadline the request is answered 503 whatever its flush still does. Still
        // pending: it is withdrawn and never written. Already in a flush: that flush may yet store
        // its spans whole (then the exporter's retry finds them stored), or fail and remove them.
        entry.timer = setTimeout(() => {
          const at = this.pending.indexOf(entry);
          if (at >= 0) {
            this.pending.splice(at, 1);
            this.pendingRows -= write.rows.spans.keys.length;
            this.pendingBytes -= write.bytes;
          }
          reject(new StoreUnavailableError('stores', `The spans could not be stored within ${timeout} ms (INGEST_TIMEOUT_MS); retry shortly`));
        }, timeout);
        entry.timer.unref();
      }
      this.pending.push(entry);
      this.pendingRows += write.rows.spans.keys.length;
      this.pendingBytes += write.bytes;
      if (this.full() || (this.timer && this.catchUpTimer && (this.enough() || !this.catchingUp()))) this.kick();
      else if (this.endPace && this.paceOver()) this.endPace();
      else if (!this.timer && !this.flushing) {
        const catchUpMs = this.options.catchUpFlushMs ?? CATCH_UP_FLUSH_MS;
        this.catchUpTimer = this.catchingUp() && catchUpMs > this.options.flushMs;
        this.timer = setTimeout(() => this.kick(), this.catchUpTimer ? catchUpMs : this.options.flushMs);
      }
    });
  }

  /** Flushes everything pending and refuses new writes (graceful shutdown). */
  async stop(): Promise<void> {
    this.stopped = true;
    this.kick();
    while (this.flushing) await this.flushing;
  }

  private full(): boolean {
    return this.pendingRows >= this.options.batchRows || this.pendingBytes >= this.batchBytes;
  }

  /**
   * Whether the wait after the flush that started at `paceFrom` is over: a stop, enough spans
   * pending, or the interval past — by the pacing in force now, so a wait lengthened for catching
   * up ends at the first write after settling caught up, if the usual pacing is met by then.
   */
  private paceOver(): boolean {
    return this.stopped || this.enough() || performance.now() >= this.paceFrom + this.pacing().intervalMs;
  }

  private catchingUp(): boolean {
    return this.options.catchingUp?.() ?? false;
  }

  /** The pacing in force: the configured one, widened while settling lags. */
  private pacing(): { minRows: number; intervalMs: number } {
    const minRows = this.options.flushMinRows ?? 0;
    const intervalMs = this.options.flushIntervalMs ?? 0;
    return this.catchingUp() ? { minRows: minRows * CATCH_UP_ROWS_FACTOR, intervalMs: intervalMs * CATCH_UP_INTERVAL_FACTOR } : { minRows, intervalMs };
  }

  /** Whether what is pending makes a flush worth its parts without waiting for more. */
  private enough(): boolean {
    return this.pendingRows >= this.pacing().minRows || this.full();
  }

  private kick(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    this.endPace?.();
    if (this.flushing) return;
    this.flushing = this.flushLoop().finally(() => {
      this.flushing = null;
      // A write made after the loop's last look but before this ran (a continuation of a request it
      // just answered) found a flush in progress and set no timer: it must not wait for the next write.
      if (this.pending.length > 0) this.kick();
    });
  }

  private async flushLoop(): Promise<void> {
    while (this.pending.length > 0) {
      let rows = 0;
      let bytes = 0;
      let take = 0;
      while (take < this.pending.length && (take === 0 || (rows < this.options.batchRows && bytes < this.batchBytes))) {
        rows += this.pending[take].write.rows.spans.keys.length;
        bytes += this.pending[take].write.bytes;
        take++;
      }
      const batch = this.pending.splice(0, take);
      this.pendingRows -= rows;
      this.pendingBytes -= bytes;
      const startedAt = performance.now();
      if (await this.flushBatch(batch)) await this.pace(startedAt);
    }
  }

  /** Waits until the pacing is met (paceOver, looked at again by every write); a stop ends the wait. */
  private pace(lastStartedAt: number): Promise<void> {
    this.paceFrom = lastStartedAt;
    if (this.paceOver()) return Promise.resolve();
    const wait = lastStartedAt + this.pacing().intervalMs - performance.now();
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => this.endPace?.(), wait);
      this.endPace = () => {
        clearTimeout(timer);
        this.endPace = null;
        resolve();
      };
    });
  }

  /**
   * For the traces of the batch: how many spans each already has in `spans`, which of the batch's
   * own span ids are among them, and whether a root is stored. One query, and its answer is bounded
   * by the batch, not by the traces' size (all ids of every touched trace was quadratic for a trace
   * sent in many parts). Traces the registry just created have nothing stored and are not read;
   * `known` holds the others when a (complete) registry answered, else null. `registeredFrom`: this
   * process's clock before the registration (kept by the rows it creates).
   */
  private async storedState(
    batch: Pending[],
    registeredFrom: number,
  ): Promise<{
    present: Set<string>;
    counts: Map<string, number>;
    rooted: Set<string>;
    known: Set<string> | null;
    registrations: Map<string, number> | null;
    storedSince: Map<string, number> | null;
  }> {
    const { ch } = this.options;
    let keys: (TraceKeyLike & RegisteredTrace)[] = [];
    for (const p of batch) keys.push(...p.write.traces);
    const registerFrom = performance.now();
    const registration = this.options.register ? await this.options.register(keys, registeredFrom) : null;
    const checkFrom = performance.now();
    this.options.onPhase?.('register', (checkFrom - registerFrom) / 1000);
    const registrations = registration?.complete ? registration.registrations : null;
    const storedSince = registration?.complete ? registration.storedSince : null;
    let known: Set<string> | null = null;
    if (registration?.complete) {
      const created = registration.created;
      known = new Set();
      keys = keys.filter((k) => {
        const key = traceKeyString(k);
        if (created.has(key)) return false;
        known!.add(key);
        return true;
      });
    }
    const present = new Set<string>();
    const counts = new Map<string, number>();
    const rooted = new Set<string>();
    if (keys.length === 0) {
      this.options.onPhase?.('check', 0);
      return { present, counts, rooted, known, registrations, storedSince };
    }
    const spanIds = new Set<string>();
    for (const p of batch) {
      for (const key of p.write.rows.spans.keys) if (!known || known.has(traceKeyOfSpanKey(key))) spanIds.add(spanIdOfSpanKey(key));
    }
    // Traces whose first spans were written after a known time are read among the spans ingested
    // since the earliest of them (one statement, the minmax index on ingested_at skipping older
    // parts); the others by key alone. Two statements: one bound over both would skip nothing.
    const bounded: typeof keys = [];
    const unbounded: typeof keys = [];
    let since = Infinity;
    for (const k of keys) {
      const from = storedSince?.get(traceKeyString(k));
      if (from === undefined) {
        unbounded.push(k);
      } else {
        bounded.push(k);
        since = Math.min(since, from);
      }
    }
    type Row = { tenant_id: string; project_id: string; trace_id: string; stored: number | string; has_root: number | boolean; present: string[] };
    // Ingest lane: never behind the analytics gate. The trace-key guard over-selects when keys mix
    // tenants; rows of traces outside the batch only add entries nobody looks up.
    // Rows a failed flush is deleting (unstored-rows.ts) may still be on disk, their delete not yet
    // applied by the engine: read as if it were, so a re-send of those spans (to this process or
    // any other) is written again rather than taken for a duplicate and then deleted with them.
    const read = (group: typeof keys, after: Fragment) =>
      readWithMutationsOnFly(this.options.logger, 'duplicate check', (settings) =>
        ch.read<Row>(
          sql`SELECT tenant_id, project_id, trace_id, uniqExact(span_id) AS stored, max(parent_span_id = '') AS has_root,
                     groupUniqArrayIf(span_id, span_id IN ${param('Array(String)', [...spanIds])}) AS present
              FROM ${raw(ch.table('spans'))}
              WHERE ${traceKeysGuard(group)}${after}
              GROUP BY tenant_id, project_id, trace_id`,
          { lane: 'ingest', settings },
        ),
      );
    const answers = await Promise.all([
      bounded.length > 0 ? read(bounded, readBackBound(since)) : [],
      unbounded.length > 0 ? read(unbounded, sql``) : [],
    ]);
    // A trace of one group may come back from the other's over-selecting guard, with only part of its
    // spans (the bounded read skips older parts): each trace is taken from its own group's answer.
    const boundedKeys = new Set(bounded.map(traceKeyString));
    const rows = [...answers[0].filter((r) => boundedKeys.has(traceKeyOf(r))), ...answers[1].filter((r) => !boundedKeys.has(traceKeyOf(r)))];
    this.options.onPhase?.('check', (performance.now() - checkFrom) / 1000);
    for (const r of rows) {
      const traceKey = traceKeyOf(r);
      counts.set(traceKey, Number(r.stored));
      // A late span's root may have come earlier (to any process): the trace then settles on the quiet period.
      if (Number(r.has_root) === 1) rooted.add(traceKey);
      for (const spanId of r.present) present.add(spanKeyIn(traceKey, spanId));
    }
    return { present, counts, rooted, known, registrations, storedSince };
  }

  /** Inserts a body encoded on the compute pool (whole request bodies or slices of them; encoded-rows.ts) on the ingest lane. */
  private async insert(table: InsertTable, parts: Uint8Array[]): Promise<void> {
    await this.options.ch.insertBody(this.options.ch.table(table), parts, 'ingest', INSERT_COLUMNS[table]);
  }

  /**
   * The trace list's rows of traces first seen in this flush (trace-preview.ts): JSONCompactEachRow
   * lines of PREVIEW_COLUMNS encoded on the compute pool with the request's other rows, so the event
   * loop neither builds nor joins a string for them. After the spans and the settle queue, so a
   * listed trace always has stored spans, and after the requests are answered: a part's fixed cost
   * (~15 ms idle) that the answer does not depend on. The trace is listed moments after its 200; a
   * failure here fails nothing: the trace is then listed when it settles.
   */
  private async insertPreviews(lines: Uint8Array[]): Promise<void> {
    try {
      await this.options.ch.insertBody(this.options.ch.table('traces'), lines, 'ingest', PREVIEW_COLUMNS);
    } catch (error) {
      this.options.logger.warn({ err: error, traces: lines.length }, 'trace previews not written; those traces are listed once they settle');
    }
  }

  /**
   * Writes a batch and answers its requests. True when other requests were already waiting as it
   * answered (a steady stream): looked at before answering, since a request made by the continuation
   * of an answer (a caller in this process) is not a stream.
   */
  private async flushBatch(batch: Pending[]): Promise<boolean> {
    this.flushStartedAt = Date.now();
    let flushed: FlushSpans | null = null;
    try {
      // A failed flush's leftovers go first: until they are removed nothing new is written, so a
      // retry of those spans is never written and then removed with them.
      if (this.unstored.length > 0) {
        const applied = await removeUnstoredRows(this.options.ch, this.unstored);
        this.options.logger.warn({ spans: this.unstored.length, applied }, 'rows of a failed flush removed');
        this.unstored = [];
      }
      // Before the registration: a trace it creates has no span written before this time.
      const registeredFrom = Date.now();
      const phases = this.options.onPhase;
      const { present: stored, counts: storedCounts, rooted, known, registrations, storedSince } = await this.storedState(batch, registeredFrom);
      if (this.afterDuplicateCheck) await this.afterDuplicateCheck();
      const flush = newFlushSpans(stored, storedCounts, this.options.maxSpansPerTrace ?? Infinity);
      flushed = flush;
      const results: WriteResult[] = [];
      const touchedTraces: TraceNote[] = [];
      const spans: Uint8Array[] = [];
      const generations: Uint8Array[] = [];
      const tools: Uint8Array[] = [];
      const errors: Uint8Array[] = [];
      const previews = new Map<string, Uint8Array>();
      for (const p of batch) {
        const { result, skipped } = admitRequest(flush, p.write);
        results.push(result);
        const parts = requestParts(p.write, skipped);
        spans.push(...parts.spans);
        generations.push(...parts.generations);
        tools.push(...parts.tools);
        errors.push(...parts.errors);
        // Every trace of the request, duplicates included: a retry after a crash between the insert
        // and the queue upsert must still queue its trace.
        const requestPreviews = p.write.previews;
        for (const [i, t] of p.write.traces.entries()) {
          const traceKey = traceKeyString(t);
          // A trace the registry held before may have spans this process does not (another process's
          // insert still on its way, a crash's leftovers): at least 1, so the settle cache never takes
          // it as wholly its own unless it holds stored spans of it. 0 only for a trace created here.
          const before = storedCounts.get(traceKey) ?? 0;
          t.storedBeforeCount = known?.has(traceKey) ? Math.max(before, 1) : before;
          t.registeredSeq = registrations?.get(traceKey);
          // `known` lists every trace of the flush the complete registry did not create; of those, the
          // registry knows when the first spans of some were written.
          if (known && !known.has(traceKey)) t.storedSinceMs = registeredFrom;
          else if (storedSince?.has(traceKey)) t.storedSinceMs = storedSince.get(traceKey);
          if (rooted.has(traceKey)) t.hasRoot = true;
          // Listed from now on: the flush that stores a trace's first spans writes its preview.
          if (requestPreviews && i < requestPreviews.ends.length && t.storedBeforeCount === 0 && !previews.has(traceKey)) previews.set(traceKey, lineOf(requestPreviews, i));
          touchedTraces.push(t);
        }
      }
      // Events first (concurrently), spans last: a span found in `spans` always has its events.
      const insertFrom = performance.now();
      await Promise.all([
        this.insert('event_generation_completed', generations),
        this.insert('event_tool_called', tools),
        this.insert('event_span_errored', errors),
      ]);
      if (this.beforeSpansInsert) await this.beforeSpansInsert();
      await this.insert('spans', spans);
      const recordFrom = performance.now();
      phases?.('insert', (recordFrom - insertFrom) / 1000);
      await this.options.record?.(touchedTraces);
      phases?.('record', (performance.now() - recordFrom) / 1000);
      this.failures = 0;
      this.lastFailure = null;
      const streaming = this.pending.length > 0;
      batch.forEach((p, i) => {
        clearTimeout(p.timer);
        p.resolve(results[i]);
      });
      // Inside the flush (the next one starts after it), but after the answers: the request waits
      // for nothing it does not need.
      if (previews.size > 0) await this.insertPreviews([...previews.values()]);
      return streaming;
    } catch (error) {
      this.failures++;
      this.lastFailureAt = Date.now();
      const unavailable = storeUnavailable(error);
      this.lastFailure = unavailable;
      this.options.logger.error({ err: error, requests: batch.length, store: unavailable?.store ?? null }, 'ingest flush failed');
      // Rows that landed before the failure are removed before anyone is answered (unstored-rows.ts).
      if (flushed) this.unstored.push(...newSpansOf(flushed));
      if (this.unstored.length > 0) {
        try {
          if (!(await removeUnstoredRows(this.options.ch, this.unstored))) {
            this.options.logger.warn({ spans: this.unstored.length }, 'rows of a failed flush deleted, the engine not done applying it yet; they disappear once it is');
          }
          this.unstored = [];
        } catch (cleanupError) {
          this.options.logger.error({ err: cleanupError, spans: this.unstored.length }, 'rows of a failed flush not removed yet; removed before the next flush');
        }
      }
      const failure = unavailable ?? new OverloadedError(503, 'Could not store the spans; retry shortly', 5, 'storage_failing');
      for (const p of batch) {
        clearTimeout(p.timer);
        p.reject(failure);
      }
      return false;
    } finally {
      this.flushStartedAt = 0;
    }
  }
}

/** The spans a flush was writing as new (never those found stored): what a failed flush may have left. */
function newSpansOf(flush: FlushSpans): FlushedSpan[] {
  const spans: FlushedSpan[] = [];
  for (const keys of flush.kept.values()) {
    for (const key of keys) {
      const [tenantId, projectId, traceId, spanId] = key.split('\u0000');
      spans.push({ tenantId, projectId, traceId, spanId });
    }
  }
  return spans;
}
