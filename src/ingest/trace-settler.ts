import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { ClickHouseStore } from '../stores/clickhouse.js';
import type { Sql } from '../stores/postgres.js';
import type { ProcessedTrace, TraceHooks } from '../trace-hooks.js';
import { msToDateTime64, type EventOrigin, type ToolCalledRow } from './event-rows.js';
import { HookRunner } from './hook-runner.js';
import type { TraceNote } from './ingest-writer.js';
import type { NormalizedSpan } from './normalized-span.js';
import { processedTrace } from './processed-trace.js';
import { SettleCache } from './settle-cache.js';
import { claimDue, extendLease, finishClaims, heldClaims, recordTraces, releaseClaims, type Claim, type ClaimOptions, type ClaimRound } from './settle-queue.js';
import { readTraceSpans, traceKeyString } from './stored-spans.js';
import { summarizeTrace, type PriceTrace, type TraceSummary } from './trace-summary.js';

/**
 * Trace settling (docs/settling.md): a trace is processed — one trace.processed row, one traces
 * row, its tool.called rows corrected with the whole trace known — once its root span is stored
 * and no span came for TRACE_SETTLE_MS, or TRACE_MAX_WAIT_MS after its first span. A span arriving
 * later opens the trace again and it is processed again; the newer rows replace the older ones.
 *
 * The work is shared through the settle queue in PostgreSQL (settle-queue.ts), so any number of
 * processes can ingest and settle: the writer records each flush's traces, any settler claims
 * due ones, reads their spans back from ClickHouse (or from this process's memory when it provably
 * holds them all, settle-cache.ts), writes the rows with the claim's version from PostgreSQL, runs
 * the hooks, and only then finishes the claim — which fails if a newer span was recorded meanwhile.
 * A round that dies anywhere before that leaves its claims to expire and be settled again under a
 * newer version: hooks run once per settle version, and a finished trace's hooks have run.
 */

export interface TraceSettlerOptions {
  ch: ClickHouseStore;
  sql: Sql;
  logger: Logger;
  settleMs: number;
  maxWaitMs: number;
  hooks: TraceHooks;
  priceTrace?: PriceTrace;
  /** Traces claimed and processed per round (one span read and one insert per table each). */
  chunkSize?: number;
  /** How long a claim stays with its settler without being renewed (a crashed one's run out). */
  leaseMs?: number;
  /** Spans held in memory for open traces; past it, traces are read back from ClickHouse. */
  maxCachedSpans?: number;
}

/** Origin of rows written for a trace whose sender is not known (the traces API's ad-hoc summaries). */
export const SYSTEM_ORIGIN: EventOrigin = { actor: 'system', surface: 'system', user_id: '', api_key_id: '' };

export class TraceSettler {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopped = false;
  private readonly hookRunner: HookRunner;
  private readonly cache: SettleCache;
  /** Rounds whose rows are written and whose hooks run before their claims finish. */
  private readonly finishing = new Set<Promise<void>>();
  private readonly leaseMs: number;

  constructor(private readonly options: TraceSettlerOptions) {
    this.hookRunner = new HookRunner(options.hooks, options.logger);
    this.cache = new SettleCache(options.maxCachedSpans ?? 200_000);
    this.leaseMs = options.leaseMs ?? 60_000;
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
      notes.map((n) => ({ tenantId: n.tenantId, projectId: n.projectId, traceId: n.traceId, hasRoot: n.hasRoot, origin: n.origin })),
      { settleMs, maxWaitMs },
    );
    // Without a settler in this process (no worker role) there is nothing to keep spans for.
    if (this.timer) this.cache.add(notes, recorded);
  }

  start(): void {
    const interval = Math.max(20, Math.min(1000, Math.floor(this.options.settleMs / 3)));
    this.timer = setInterval(() => {
      if (!this.running && !this.stopped) this.running = this.tick().finally(() => (this.running = null));
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
  }

  private async settled(): Promise<void> {
    while (this.finishing.size > 0) await Promise.allSettled([...this.finishing]);
    await this.hookRunner.drain();
  }

  private async tick(): Promise<void> {
    try {
      await this.claimAndProcess({});
      this.cache.sweep(2 * this.options.maxWaitMs + this.leaseMs);
    } catch (error) {
      this.options.logger.error({ err: error }, 'trace settling failed; will retry');
    }
  }

  /** Claims rounds until nothing more is claimable. */
  private async claimAndProcess(select: Pick<ClaimOptions, 'keys'>): Promise<void> {
    const limit = this.options.chunkSize ?? 5000;
    if (select.keys) {
      for (let i = 0; i < select.keys.length; i += limit) {
        const token = randomUUID();
        const round = await claimDue(this.options.sql, { token, limit, leaseMs: this.leaseMs, keys: select.keys.slice(i, i + limit) });
        if (round.claims.length > 0) await this.processRound(token, round);
      }
      return;
    }
    for (;;) {
      const token = randomUUID();
      const round = await claimDue(this.options.sql, { token, limit, leaseMs: this.leaseMs });
      if (round.claims.length === 0) return;
      await this.processRound(token, round);
      if (round.claims.length < limit) return;
    }
  }

  private async processRound(token: string, round: ClaimRound): Promise<void> {
    const { sql, logger } = this.options;
    // Renewed while the round works and its hooks run; a process that dies stops renewing.
    const heartbeat = setInterval(() => {
      extendLease(sql, token, this.leaseMs).catch((error) => logger.warn({ err: error }, 'settle lease renewal failed'));
    }, Math.max(50, Math.floor(this.leaseMs / 3)));
    heartbeat.unref();
    let payloads: ProcessedTrace[];
    try {
      payloads = await this.settleRound(round);
    } catch (error) {
      clearInterval(heartbeat);
      await releaseClaims(sql, token).catch(() => {});
      throw error;
    }
    // Hooks run once per settle version: not for traces another settler took over meanwhile.
    const held = payloads.length > 0 ? await heldClaims(sql, token).catch(() => null) : new Set<string>();
    const mine = held ? payloads.filter((p) => held.has(traceKeyString(p))) : payloads;
    const hooksDone = await Promise.all(mine.map((p) => this.hookRunner.enqueue(p)));
    const finishing = Promise.all(hooksDone.map((h) => h.ran))
      .then(() => finishClaims(sql, token, round.claims))
      .then((finished) => this.cache.finished(finished))
      .catch((error) => logger.error({ err: error }, 'finishing settle claims failed; they expire and settle again'))
      .finally(() => {
        clearInterval(heartbeat);
        this.finishing.delete(finishing);
      });
    this.finishing.add(finishing);
  }

  /**
   * The one place a trace summary is computed (the compute work moves it to a worker pool): kept
   * async and free of settler state.
   */
  private async summarize(spans: NormalizedSpan[], origin: EventOrigin, processedAt: string): Promise<TraceSummary> {
    return summarizeTrace(spans, { origin, processedAt, priceTrace: this.options.priceTrace });
  }

  /** Writes one round's rows, versioned by the claim; returns the hook payloads. */
  private async settleRound(round: ClaimRound): Promise<ProcessedTrace[]> {
    const { ch } = this.options;
    const processedAt = msToDateTime64(round.versionMs);
    const fromMemory = new Map<Claim, ReturnType<SettleCache['take']>>();
    const toRead: Claim[] = [];
    for (const claim of round.claims) {
      const held = this.cache.take(claim);
      if (held) fromMemory.set(claim, held);
      else toRead.push(claim);
    }
    // Traces not provably held here whole are read back (one query for the round).
    const spansByTrace = await readTraceSpans(ch, toRead);

    const summaries: { summary: TraceSummary; spans: NormalizedSpan[] }[] = [];
    const toolRewrites: ToolCalledRow[] = [];
    for (const claim of round.claims) {
      const held = fromMemory.get(claim);
      if (held) {
        if (held.spans.length === 0) continue;
        const summary = await this.summarize(held.spans, claim.origin, processedAt);
        summaries.push({ spans: held.spans, summary });
        for (const row of summary.tools) {
          const written = held.toolRows.get(row.span_id);
          // Keep who recorded the call: only the derived fields change.
          if (!written) toolRewrites.push(row);
          else if (written.agent_name !== row.agent_name || written.output_tokens !== row.output_tokens) {
            toolRewrites.push({ ...row, actor: written.actor, surface: written.surface, user_id: written.user_id, api_key_id: written.api_key_id });
          }
        }
        continue;
      }
      const stored = spansByTrace.get(traceKeyString(claim));
      if (!stored || stored.spans.length === 0) continue;
      const summary = await this.summarize(stored.spans, claim.origin, processedAt);
      summaries.push({ spans: stored.spans, summary });
      toolRewrites.push(...toolRowsToRewrite(summary, stored.ingestAgentNames));
    }
    const insert = async (table: string, values: object[]) => {
      await ch.insert(ch.table(table), values, 'ingest');
    };
    await insert('event_tool_called', toolRewrites);
    await insert('event_trace_processed', summaries.map((s) => s.summary.processed));
    await insert('traces', summaries.map((s) => s.summary.trace));
    return summaries.map(({ summary, spans }) => processedTrace(summary, spans));
  }
}

/**
 * tool.called rows the whole trace changes. At ingest a tool span's agent came from its own
 * request (stored as the span's agent_name), falling back to that request's view of the trace when
 * no ancestor was in it; its output tokens from the usage below it in that request. Rewritten here
 * (same key, newer inserted_at replaces the row) when the agent was not resolved at ingest or differs
 * now, or when usage below the tool may have arrived separately.
 */
export function toolRowsToRewrite(summary: TraceSummary, ingestAgentNames: Map<string, string>): ToolCalledRow[] {
  const { tree } = summary;
  return summary.tools.filter((row) => {
    const atIngest = ingestAgentNames.get(row.span_id) ?? '';
    if (atIngest === '' || atIngest !== row.agent_name) return true;
    const span = tree.byId.get(row.span_id);
    return span !== undefined && row.output_tokens !== (span.outputTokens ?? 0);
  });
}

