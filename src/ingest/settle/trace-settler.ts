import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { ComputePool } from '../../platform/compute/compute-pool.js';
import { shareValue } from '../../platform/compute/shared-value.js';
import { unpackHook } from './packed-hook.js';
import type { ClickHouseStore } from '../../platform/clickhouse/clickhouse.js';
import type { Sql } from '../../platform/postgres/postgres.js';
import type { ProcessedTrace, TraceHooks } from '../trace-hooks.js';
import { msToDateTime64 } from '../../platform/clickhouse/clickhouse-time.js';
import { HookRunner } from './hook-runner.js';
import type { TraceNote } from '../write/ingest-writer.js';
import { SettleCache, type CachedTrace, type ReadBackReason } from './settle-cache.js';
import { claimDue, extendLease, finishClaims, heldClaims, recordTraces, releaseClaims, type Claim, type ClaimOptions, type ClaimRound } from './settle-queue.js';
import type { SettledRound, SettleTraceInput } from './settle-summaries.js';
import { SETTLE_COLUMNS, type SettleTable } from '../write/encoded-rows.js';
import { readTraceSpansBytes, traceKeyString } from '../../spans/stored-spans.js';
import { readTraceLogsBytes } from '../../spans/stored-log-records.js';
import type { TracePricing } from '../../spans/trace-pricing.js';
import type { Origin } from '../../spans/origin.js';
import { settleSummariesTask } from './settle-summaries.js';
import { removeStaleCallRows } from './stale-call-rows.js';
import type { Metrics, SettlePhase } from '../../platform/metrics/metrics.js';
import type { LoggedProjects } from './logged-projects.js';
import { UnendedClaims } from './unended-claims.js';

/**
 * The settle round's trace_content insert on the embedded engine leaves the text index out: it is
 * built when the engine merges the part (as for every merged part anyway), so the round does not
 * pay for it — building it was most of that insert's engine CPU (bench/settle-cost). Search stays
 * exact: the index only narrows which rows are read and every match is checked with LIKE
 * (search-sql.ts), so a part without it is read whole — a fresh part is one round's rows, and merges
 * soon. A ClickHouse server keeps building it on insert: one that predates the setting would refuse
 * the statement.
 */
export const EMBEDDED_CONTENT_INSERT = { exclude_materialize_skip_indexes_on_insert: 'text_norm_bigrams' } as const;

/** Traces one settle round claims at most (the default of `chunkSize`): the largest round a deployment runs. */
export const SETTLE_ROUND_TRACES = 5000;

/** After a failed attempt the next waits the tick interval × 2^failures, at most this: a failing store is not hammered, and a store back is met within seconds. */
export const SETTLE_RETRY_MAX_MS = 5000;

/**
 * Trace settling (docs/settling.md): a trace is processed — one trace.processed row, one traces
 * row, its tool.called and generation.completed rows corrected with the whole trace known — once its root span is stored
 * and no span came for TRACE_SETTLE_MS, or TRACE_MAX_WAIT_MS after its first span. A span arriving
 * later opens the trace again and it is processed again; the newer rows replace the older ones.
 *
 * The work is shared through the settle queue in PostgreSQL (settle-queue.ts), so any number of
 * processes can ingest and settle: the writer records each flush's traces, any settler claims
 * due ones, reads their spans back from ClickHouse (or from this process's memory when it provably
 * holds them all, settle-cache.ts), writes the rows with the claim's version from PostgreSQL, runs
 * the hooks, and only then finishes the claim — which fails if a newer span was recorded meanwhile.
 * A round that fails releases its claims at once, so they are settled again soon under a newer
 * version (by this process after a short back-off, or by another); a release or finish that fails is
 * tried again at the next attempts (unended-claims.ts). Only a round whose process died or hung
 * leaves its claims to the lease. Hooks run once per settle version, and a finished trace's hooks have run.
 *
 * CPU work runs on the compute pool (summarize(), settle-summaries.ts): traces held in memory go
 * as their rows' JSON lines (at most `maxCachedSpansPerTrace` per trace), read-back traces as the
 * bytes ClickHouse returned; pricing (with the catalog shared once per version) and the rows'
 * JSON are done there too.
 */

export interface TraceSettlerOptions {
  ch: ClickHouseStore;
  sql: Sql;
  /** Summaries run on the compute pool (settle-summaries.ts), never on the event loop. */
  compute: ComputePool;
  logger: Logger;
  settleMs: number;
  maxWaitMs: number;
  hooks: TraceHooks;
  /** The cost module's prices, applied on the compute pool; without it costs are `unavailable`. */
  pricing?: TracePricing;
  /** Traces claimed and processed per round (one span read and one insert per table each). */
  chunkSize?: number;
  /** How long a claim stays with its settler without being renewed (a crashed one's run out). */
  leaseMs?: number;
  /** Spans held in memory for open traces; past it, traces are read back from ClickHouse. */
  maxCachedSpans?: number;
  /** Bytes of span rows held in memory for open traces (SETTLE_CACHE_MAX_BYTES); past it, traces are read back. */
  maxCachedBytes?: number;
  /** Rounds, their duration, traces settled and hook outcomes are counted here when given. */
  metrics?: Metrics;
  /** Spans held in memory for one trace; past it, the trace is read back (its rows are copied to a worker at settling, a read-back is one string). */
  maxCachedSpansPerTrace?: number;
  /** Projects that received log records: a round reads span_logs for their traces only. Absent: for every trace. */
  loggedProjects?: LoggedProjects;
}

export class TraceSettler {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopped = false;
  private readonly hookRunner: HookRunner;
  private readonly cache: SettleCache;
  /** Rounds whose rows are written and whose hooks run before their claims finish. */
  private readonly finishing = new Set<Promise<void>>();
  private readonly leaseMs: number;
  /** Rounds whose release or finish failed, ended at the next attempts instead of waiting for the lease. */
  private readonly unended: UnendedClaims;
  /** Attempts failed in a row, and the time before which none starts (the back-off). */
  private failures = 0;
  private resumeAt = 0;

  constructor(private readonly options: TraceSettlerOptions) {
    const metrics = options.metrics;
    this.hookRunner = new HookRunner(options.hooks, options.logger, {}, metrics ? (ok) => metrics.hookGroups.inc({ outcome: ok ? 'ok' : 'failed' }) : undefined);
    this.cache = new SettleCache(options.maxCachedSpans ?? 200_000, options.maxCachedSpansPerTrace ?? 2000, Date.now, options.maxCachedBytes);
    this.leaseMs = options.leaseMs ?? 60_000;
    this.unended = new UnendedClaims(this.leaseMs);
  }

  /**
   * Called by the writer after ClickHouse acknowledged a flush's spans and before the requests are
   * answered: records every touched trace in the queue with one upsert. A failure fails the flush
   * (503): the exporter's retry finds the spans stored and records the traces then.
   */
  async record(notes: TraceNote[]): Promise<void> {
    if (notes.length === 0) return;
    const { sql, settleMs, maxWaitMs } = this.options;
    const recorded = await recordTraces(
      sql,
      notes.map((n) => ({ tenantId: n.tenantId, projectId: n.projectId, traceId: n.traceId, hasRoot: n.hasRoot, origin: n.origin, storedSinceMs: n.storedSinceMs })),
      { settleMs, maxWaitMs },
    );
    // Without a settler in this process (no worker role) there is nothing to keep spans for.
    if (this.timer) this.cache.add(notes, recorded);
  }

  /** Hooks queued or running in this process, and the bytes of the queued payloads (metrics). */
  get hookLoad(): { pending: number; queuedBytes: number } {
    return { pending: this.hookRunner.pending, queuedBytes: this.hookRunner.queuedPayloadBytes };
  }

  /**
   * Log records stored for these traces (span_logs): each trace is due again like one that got a
   * late span, whether it was settled already or has no span yet. Not added to the span cache: the
   * queue row's count moves past what the cache counted, so such a trace is read back from
   * ClickHouse with its records.
   */
  async recordLogRecords(keys: { tenantId: string; projectId: string; traceId: string; origin: Origin }[]): Promise<void> {
    if (keys.length === 0) return;
    const { sql, settleMs, maxWaitMs } = this.options;
    await recordTraces(sql, keys.map((k) => ({ ...k, hasRoot: false })), { settleMs, maxWaitMs });
  }

  start(): void {
    // How late past due a trace is picked up: at most a sixth of the settle wait (0.5 s by default),
    // which a processed trace's latency carries whole; a busier tick costs one indexed claim
    // statement when nothing is due, and rounds are never run side by side.
    const interval = Math.max(20, Math.min(500, Math.floor(this.options.settleMs / 6)));
    this.timer = setInterval(() => {
      if (!this.running && !this.stopped && Date.now() >= this.resumeAt) this.running = this.tick(interval).finally(() => (this.running = null));
    }, interval);
    this.timer.unref();
  }

  /** Graceful shutdown: settle now what this process recorded, wait for hooks, free every claim. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    while (this.running) await this.running;
    try {
      await this.claimAndProcess({ keys: this.cache.keys() });
    } catch (error) {
      this.options.logger.error({ err: error }, 'settling on shutdown failed; the queue keeps the traces');
    }
    await this.settled();
    // One more try for rounds whose release or finish failed, before the stores close.
    const left = await this.endUnended();
    if (left) this.options.logger.warn({ err: left.error, rounds: this.unended.size }, 'settle claims left to their lease: releasing or finishing them failed');
  }

  private async settled(): Promise<void> {
    while (this.finishing.size > 0) await Promise.allSettled([...this.finishing]);
    await this.hookRunner.drain();
  }

  /**
   * One attempt: end the rounds left unended, then claim and settle what is due. A failure (of either)
   * delays the next attempt: `interval` × 2^failures, at most SETTLE_RETRY_MAX_MS.
   */
  private async tick(interval: number): Promise<void> {
    try {
      const left = await this.endUnended();
      await this.claimAndProcess({});
      this.cache.sweep(2 * this.options.maxWaitMs + this.leaseMs);
      if (left) throw left.error;
      this.failures = 0;
    } catch (error) {
      this.failures++;
      const retryInMs = Math.min(SETTLE_RETRY_MAX_MS, interval * 2 ** Math.min(this.failures, 8));
      this.resumeAt = Date.now() + retryInMs;
      this.options.metrics?.countError(error);
      this.options.logger.error({ err: error, retryInMs }, 'trace settling failed; will retry');
    }
  }

  /** Ends the rounds whose release or finish failed before; the first failure, if any. */
  private async endUnended(): Promise<{ error: unknown } | null> {
    if (this.unended.size === 0) return null;
    const { finished, failure } = await this.unended.end(this.options.sql);
    this.cache.finished(finished);
    return failure;
  }

  /** Runs `step` and counts its time as `phase` (lookout_settle_phase_duration_seconds), failed or not. */
  private async timed<T>(phase: SettlePhase, step: () => Promise<T>): Promise<T> {
    const metrics = this.options.metrics;
    if (!metrics) return step();
    const started = performance.now();
    try {
      return await step();
    } finally {
      metrics.settlePhaseDuration.observe({ phase }, (performance.now() - started) / 1000);
    }
  }

  /** Claims rounds until nothing more is claimable. */
  private async claimAndProcess(select: Pick<ClaimOptions, 'keys'>): Promise<void> {
    const limit = this.options.chunkSize ?? SETTLE_ROUND_TRACES;
    if (select.keys) {
      for (let i = 0; i < select.keys.length; i += limit) {
        const token = randomUUID();
        const round = await this.timed('claim', () => claimDue(this.options.sql, { token, limit, leaseMs: this.leaseMs, keys: select.keys!.slice(i, i + limit) }));
        if (round.claims.length > 0) await this.processRound(token, round);
      }
      return;
    }
    for (;;) {
      const token = randomUUID();
      const round = await this.timed('claim', () => claimDue(this.options.sql, { token, limit, leaseMs: this.leaseMs }));
      if (round.claims.length === 0) return;
      await this.processRound(token, round);
      if (round.claims.length < limit) return;
    }
  }

  private async processRound(token: string, round: ClaimRound): Promise<void> {
    const { sql, logger } = this.options;
    // Renewed while the round works and its hooks run; a process that dies stops renewing.
    // At most one renewal in flight: a beat while the previous one waits (on a row lock) is skipped.
    let renewal: Promise<void> | null = null;
    const heartbeat = setInterval(() => {
      renewal ??= extendLease(sql, token, this.leaseMs)
        .catch((error) => logger.warn({ err: error }, 'settle lease renewal failed'))
        .finally(() => {
          renewal = null;
        });
    }, Math.max(50, Math.floor(this.leaseMs / 3)));
    heartbeat.unref();
    // Stopped, and its last renewal awaited, before the round ends: a renewal locks the round's rows
    // in its own order while finishClaims locks them in key order, and a deadlock between the two
    // would fail the finish — the round would expire and settle again, its hooks with it.
    const stopRenewing = async () => {
      clearInterval(heartbeat);
      await renewal;
    };
    let payloads: { hook: ProcessedTrace; bytes: number }[];
    const metrics = this.options.metrics;
    const started = performance.now();
    try {
      payloads = await this.settleRound(round);
      metrics?.settleRounds.inc({ outcome: 'ok' });
      metrics?.settleRoundDuration.observe((performance.now() - started) / 1000);
    } catch (error) {
      metrics?.settleRounds.inc({ outcome: 'failed' });
      // Released at once: the traces are due again for any settler (this one after its back-off),
      // not a lease later. The round does not go on: its inserts run one after another and stopped
      // at the failure, and its hooks never started. The summaries it did write carry its version,
      // and the next settle of these traces writes a larger one (settle_clock), so they are replaced.
      await stopRenewing();
      await releaseClaims(sql, token).catch(() => this.unended.release(token));
      throw error;
    }
    // Hooks run once per settle version: not for traces another settler took over meanwhile.
    const held = payloads.length > 0 ? await heldClaims(sql, token, round.claims).catch(() => null) : new Set<string>();
    const mine = held ? payloads.filter((p) => held.has(traceKeyString(p.hook))) : payloads;
    const hooksStarted = performance.now();
    const hooksDone = await this.hookRunner.enqueue(
      mine.map((p) => p.hook),
      mine.map((p) => p.bytes),
    );
    const finishing = hooksDone.ran
      .then(() => metrics?.settlePhaseDuration.observe({ phase: 'hooks' }, (performance.now() - hooksStarted) / 1000))
      .then(stopRenewing)
      .then(() => this.timed('finish', () => finishClaims(sql, token, round.claims)))
      .then((finished) => this.cache.finished(finished))
      .catch((error) => {
        logger.error({ err: error }, 'finishing settle claims failed; tried again at the next attempts');
        this.unended.finish(token, round.claims);
      })
      .finally(() => {
        clearInterval(heartbeat);
        this.finishing.delete(finishing);
      });
    this.finishing.add(finishing);
  }

  /**
   * The one place trace summaries are computed: on the compute pool (settle-summaries.ts), never on
   * the event loop. Traces held in memory go as their `spans` rows (JSON lines), in tasks of bounded
   * size (each copy to a worker is one short pause); read-back traces go as the bytes ClickHouse
   * returned (moved, not copied). Free of settler state.
   */
  private async summarize(
    held: { key: string; origin: Origin; trace: CachedTrace }[],
    readBack: { key: string; origin: Origin }[],
    stored: Uint8Array,
    processedAt: string,
    logs: Uint8Array,
    attributesFor: string[] | undefined,
  ): Promise<SettledRound[]> {
    const { compute, pricing } = this.options;
    // Read now, so a round is priced with one catalog; shared with the pool once per catalog.
    const catalog = pricing?.current() ?? null;
    const prices = catalog ? shareValue(catalog) : null;
    const tasks: Promise<SettledRound>[] = [];
    let group: typeof held = [];
    let groupSpans = 0;
    // A group's rows are copied once, into one buffer the worker receives moved (each trace's rows a
    // view of it): a buffer per trace would be copied a second time by the message's serialization.
    const send = () => {
      if (group.length === 0) return;
      let bytes = 0;
      for (const h of group) {
        for (const line of h.trace.rows) bytes += line.byteLength;
        for (const line of h.trace.generationRows) bytes += line.byteLength;
      }
      const packed = new Uint8Array(bytes);
      let at = 0;
      const copy = (lines: Uint8Array[]) => {
        const start = at;
        for (const line of lines) {
          packed.set(line, at);
          at += line.byteLength;
        }
        return packed.subarray(start, at);
      };
      const traces: SettleTraceInput[] = group.map((h) => ({
        key: h.key,
        origin: h.origin,
        rows: copy(h.trace.rows),
        writtenGenerations: copy(h.trace.generationRows),
        writtenTools: [...h.trace.toolRows.values()],
      }));
      // The log records are few next to the spans: each task gets a copy of the round's.
      tasks.push(compute.run(settleSummariesTask, { processedAt, traces, prices, logs: logs.byteLength > 0 ? logs : undefined, attributesFor }, [packed.buffer]));
      group = [];
      groupSpans = 0;
    };
    for (const h of held) {
      group.push(h);
      groupSpans += h.trace.spans;
      if (groupSpans >= 2000) send();
    }
    send();
    if (readBack.length > 0) {
      tasks.push(compute.run(settleSummariesTask, { processedAt, traces: readBack, stored, prices, logs: logs.byteLength > 0 ? logs : undefined, attributesFor }, [stored.buffer as ArrayBuffer]));
    }
    return Promise.all(tasks);
  }

  /**
   * The projects of a round (`tenant\0project`) whose hook payloads carry span attributes, asked of
   * the hooks once per project; undefined when the hooks do not say (every payload carries them).
   */
  private async attributeProjects(claims: Claim[]): Promise<string[] | undefined> {
    const wanted = this.options.hooks.spanAttributesWanted;
    if (!wanted) return undefined;
    const projects = new Map<string, Claim>();
    for (const c of claims) projects.set(`${c.tenantId}\u0000${c.projectId}`, c);
    // A project the hooks cannot answer for (PostgreSQL away) gets them: settling does not wait on it.
    const answers = await Promise.all([...projects.values()].map((c) => wanted(c.tenantId, c.projectId).catch(() => true)));
    return [...projects.keys()].filter((_, i) => answers[i]);
  }

  /** Writes one round's rows, versioned by the claim; returns the hook payloads. */
  private async settleRound(round: ClaimRound): Promise<{ hook: ProcessedTrace; bytes: number }[]> {
    const { ch } = this.options;
    const processedAt = msToDateTime64(round.versionMs);
    const held: { key: string; origin: Origin; trace: CachedTrace }[] = [];
    const toRead: Claim[] = [];
    const readBackReasons = new Map<ReadBackReason, number>();
    for (const claim of round.claims) {
      const trace = this.cache.take(claim);
      if ('readBack' in trace) {
        toRead.push(claim);
        readBackReasons.set(trace.readBack, (readBackReasons.get(trace.readBack) ?? 0) + 1);
      } else held.push({ key: traceKeyString(claim), origin: claim.origin, trace });
    }
    // Traces not provably held here whole are read back (one query for the round, parsed on the
    // pool), and the round's log records (span_logs) for every trace of a project that ever received
    // any (asked now, after the claim: logged-projects.ts): they join their spans whichever came
    // first, so a trace held here whole still gets the records stored by any process.
    const [stored, logs, attributesFor] = await this.timed('read', async () => {
      const logged = this.options.loggedProjects ? await this.options.loggedProjects.withLogs(round.claims) : round.claims;
      return Promise.all([
        toRead.length > 0 ? readTraceSpansBytes(ch, toRead, this.options.logger) : Promise.resolve(new Uint8Array(0)),
        readTraceLogsBytes(ch, logged),
        this.attributeProjects(round.claims),
      ]);
    });
    const settled = await this.timed('summarize', () =>
      this.summarize(
        held,
        toRead.map((c) => ({ key: traceKeyString(c), origin: c.origin })),
        stored,
        processedAt,
        logs,
        attributesFor,
      ),
    );
    // Each table's bodies from every task, in one statement; empty ones are not sent.
    const insert = (table: SettleTable) =>
      ch.insertBody(ch.table(table), settled.map((s) => s.bodies[table]), 'ingest', SETTLE_COLUMNS[table], table === 'trace_content' && ch.embedded ? EMBEDDED_CONTENT_INSERT : undefined);
    await this.timed('write', async () => {
      await insert('event_tool_called');
      await insert('event_generation_completed');
      // After the holders' rows: a call is never without its row.
      await removeStaleCallRows(ch, settled.flatMap((s) => s.innerCalls), this.options.logger);
      await insert('event_trace_processed');
      await insert('traces');
      // After the summary: a trace is listed (and so searched) from its traces row, and its content
      // rows written in the same round complete it; a failure here retries the whole round.
      await insert('trace_content');
    });
    this.options.metrics?.tracesSettled.inc({ source: 'memory' }, held.length);
    this.options.metrics?.tracesSettled.inc({ source: 'read_back' }, toRead.length);
    for (const [reason, n] of readBackReasons) this.options.metrics?.settleReadBacks.inc({ reason }, n);
    return settled.flatMap((s) => s.traces.map((t) => ({ hook: unpackHook(t.hook), bytes: t.hookBytes })));
  }
}
