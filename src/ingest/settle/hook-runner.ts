import type { Logger } from 'pino';
import type { ProcessedTrace, TraceHooks } from '../trace-hooks.js';
import { approximateBytes } from './approximate-bytes.js';

/** Bytes of hook payloads the queue may hold (payloads carry span attributes, tool input and output). */
export const HOOK_QUEUE_MAX_BYTES = 32 * 1024 * 1024;

/** How the queue is bounded; the defaults are production's, tests make them small. */
export interface HookRunnerLimits {
  /** Groups whose listeners run at a time. */
  concurrency: number;
  /** Traces that may wait for a slot. */
  maxQueued: number;
  /** Traces per group handed to a listener at once. */
  groupSize: number;
  /** Payload bytes (estimated) that may wait for a slot. */
  maxQueuedBytes: number;
}

const DEFAULT_LIMITS: HookRunnerLimits = { concurrency: 4, maxQueued: 5000, groupSize: 100, maxQueuedBytes: HOOK_QUEUE_MAX_BYTES };

/**
 * Runs the trace listeners (issue extraction, monitors) off the settling loop, so their database
 * work does not gate how fast traces settle. A settling round's traces are queued in groups of up
 * to `groupSize`, each group going once to every listener (onTracesProcessed: a few statements for
 * many traces — statements per trace were most of PostgreSQL's work at volume); up to
 * `concurrency` groups run at a time. Bounded: when
 * `maxQueued` traces or `maxQueuedBytes` of payload wait, `enqueue` waits too (the settler slows
 * down instead of memory growing); a group bigger than the byte bound still enters an empty queue.
 * `drain()` waits for everything queued — graceful shutdown calls it before the stores close.
 * Listeners must be idempotent (src/ingest/trace-hooks.ts); a failing one is logged and the others still run.
 */
export class HookRunner {
  private readonly queue: { traces: ProcessedTrace[]; bytes: number; done: () => void }[] = [];
  private queued = 0;
  private queuedBytes = 0;
  private active = 0;
  private idle: (() => void)[] = [];
  private space: (() => void)[] = [];

  private readonly concurrency: number;
  private readonly maxQueued: number;
  private readonly groupSize: number;
  private readonly maxQueuedBytes: number;

  constructor(
    private readonly hooks: TraceHooks,
    private readonly logger: Logger,
    limits: Partial<HookRunnerLimits> = {},
    /** Hears each listener's run over a group: whether it succeeded (the metrics). */
    private readonly onRun?: (ok: boolean) => void,
  ) {
    ({ concurrency: this.concurrency, maxQueued: this.maxQueued, groupSize: this.groupSize, maxQueuedBytes: this.maxQueuedBytes } = { ...DEFAULT_LIMITS, ...limits });
  }

  /** Bytes (estimated) of the payloads waiting for a listener slot. */
  get queuedPayloadBytes(): number {
    return this.queuedBytes;
  }

  get pending(): number {
    return this.queued + this.active;
  }

  /**
   * Queues traces once there is room; the returned promise (wrapped, so awaiting the call does not
   * wait for it) resolves when every listener has run for all of them — the settler finishes its claims then.
   */
  async enqueue(traces: ProcessedTrace[], bytes?: readonly number[]): Promise<{ ran: Promise<void> }> {
    if (traces.length === 0 || this.hooks.onTracesProcessed.length === 0) {
      return { ran: Promise.resolve() };
    }
    const groups: Promise<void>[] = [];
    for (let i = 0; i < traces.length; i += this.groupSize) {
      const group = traces.slice(i, i + this.groupSize);
      // `bytes` comes from the compute pool, so a big trace is not walked on the event loop here.
      let groupBytes = 0;
      for (let j = 0; j < group.length; j++) groupBytes += bytes?.[i + j] ?? approximateBytes(group[j]);
      while (this.queued > 0 && (this.queued + group.length > this.maxQueued || this.queuedBytes + groupBytes > this.maxQueuedBytes)) {
        await new Promise<void>((resolve) => this.space.push(resolve));
      }
      groups.push(new Promise<void>((done) => this.queue.push({ traces: group, bytes: groupBytes, done })));
      this.queued += group.length;
      this.queuedBytes += groupBytes;
      this.pump();
    }
    return { ran: Promise.all(groups).then(() => undefined) };
  }

  async drain(): Promise<void> {
    while (this.pending > 0) await new Promise<void>((resolve) => this.idle.push(resolve));
  }

  private pump(): void {
    while (this.active < this.concurrency && this.queue.length > 0) {
      const { traces, bytes, done } = this.queue.shift()!;
      this.queued -= traces.length;
      this.queuedBytes -= bytes;
      // Every waiter re-checks: one freed big group may make room for several small ones.
      for (const wake of this.space.splice(0)) wake();
      this.active++;
      void this.run(traces).finally(() => {
        this.active--;
        done();
        this.pump();
        if (this.pending === 0) for (const resolve of this.idle.splice(0)) resolve();
      });
    }
  }

  private async run(traces: ProcessedTrace[]): Promise<void> {
    for (const listener of this.hooks.onTracesProcessed) {
      try {
        await listener(traces);
        this.onRun?.(true);
      } catch (error) {
        this.onRun?.(false);
        this.logger.error({ err: error, traces: traces.length }, 'onTracesProcessed hook failed');
      }
    }
  }
}
