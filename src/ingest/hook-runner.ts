import type { Logger } from 'pino';
import type { ProcessedTrace, TraceHooks } from '../trace-hooks.js';
import { approximateBytes } from './approximate-bytes.js';

/** Bytes of hook payloads the queue may hold (payloads carry span attributes, tool input and output). */
export const HOOK_QUEUE_MAX_BYTES = 32 * 1024 * 1024;

/**
 * Runs the onTraceProcessed listeners (issue extraction, monitors) off the settling loop, a few
 * traces at a time, so their database work does not gate how fast traces settle. Bounded: when
 * `maxQueued` traces wait, `enqueue` waits too (the settler slows down instead of memory growing).
 * `drain()` waits for everything queued — graceful shutdown calls it before the stores close.
 * Listeners must be idempotent (src/trace-hooks.ts); a failing one is logged and the others still run.
 */
export class HookRunner {
  private readonly queue: { trace: ProcessedTrace; bytes: number; done: () => void }[] = [];
  private queuedBytes = 0;
  private active = 0;
  private idle: (() => void)[] = [];
  private space: (() => void)[] = [];

  constructor(
    private readonly hooks: TraceHooks,
    private readonly logger: Logger,
    private readonly concurrency = 4,
    private readonly maxQueued = 5000,
    private readonly maxQueuedBytes = HOOK_QUEUE_MAX_BYTES,
  ) {}

  /** Bytes (estimated) of the payloads waiting for a listener slot. */
  get queuedPayloadBytes(): number {
    return this.queuedBytes;
  }

  get pending(): number {
    return this.queue.length + this.active;
  }

  /**
   * Queues a trace once there is room; the returned promise (wrapped, so awaiting the call does not
   * wait for it) resolves when every listener has run for it — the settler finishes its claim then.
   */
  /**
   * `bytes`: the payload's estimated size (approximate-bytes.ts); the settler has it from the
   * compute pool, so a big trace is not walked on the event loop.
   */
  async enqueue(trace: ProcessedTrace, bytes = approximateBytes(trace)): Promise<{ ran: Promise<void> }> {
    if (this.hooks.onTraceProcessed.length === 0) return { ran: Promise.resolve() };
    while (this.queue.length >= this.maxQueued || (this.queue.length > 0 && this.queuedBytes + bytes > this.maxQueuedBytes)) {
      await new Promise<void>((resolve) => this.space.push(resolve));
    }
    let done!: () => void;
    const ran = new Promise<void>((resolve) => (done = resolve));
    this.queue.push({ trace, bytes, done });
    this.queuedBytes += bytes;
    this.pump();
    return { ran };
  }

  async drain(): Promise<void> {
    while (this.pending > 0) await new Promise<void>((resolve) => this.idle.push(resolve));
  }

  private pump(): void {
    while (this.active < this.concurrency && this.queue.length > 0) {
      const { trace, bytes, done } = this.queue.shift()!;
      this.queuedBytes -= bytes;
      // Every waiter re-checks: one freed big payload may make room for several small ones.
      for (const wake of this.space.splice(0)) wake();
      this.active++;
      void this.run(trace).finally(() => {
        this.active--;
        done();
        this.pump();
        if (this.pending === 0) for (const resolve of this.idle.splice(0)) resolve();
      });
    }
  }

  private async run(trace: ProcessedTrace): Promise<void> {
    for (const hook of this.hooks.onTraceProcessed) {
      try {
        await hook(trace);
      } catch (error) {
        this.logger.error({ err: error, traceId: trace.traceId }, 'onTraceProcessed hook failed');
      }
    }
  }
}
