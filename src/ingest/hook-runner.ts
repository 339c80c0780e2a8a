import type { Logger } from 'pino';
import type { ProcessedTrace, TraceHooks } from '../trace-hooks.js';

/**
 * Runs the onTraceProcessed listeners (issue extraction, monitors) off the settling loop, a few
 * traces at a time, so their database work does not gate how fast traces settle. Bounded: when
 * `maxQueued` traces wait, `enqueue` waits too (the settler slows down instead of memory growing).
 * `drain()` waits for everything queued — graceful shutdown calls it before the stores close.
 * Listeners must be idempotent (src/trace-hooks.ts); a failing one is logged and the others still run.
 */
export class HookRunner {
  private readonly queue: { trace: ProcessedTrace; done: () => void }[] = [];
  private active = 0;
  private idle: (() => void)[] = [];
  private space: (() => void)[] = [];

  constructor(
    private readonly hooks: TraceHooks,
    private readonly logger: Logger,
    private readonly concurrency = 4,
    private readonly maxQueued = 5000,
  ) {}

  get pending(): number {
    return this.queue.length + this.active;
  }

  /**
   * Queues a trace once there is room; the returned promise (wrapped, so awaiting the call does not
   * wait for it) resolves when every listener has run for it — the settler finishes its claim then.
   */
  async enqueue(trace: ProcessedTrace): Promise<{ ran: Promise<void> }> {
    if (this.hooks.onTraceProcessed.length === 0) return { ran: Promise.resolve() };
    while (this.queue.length >= this.maxQueued) await new Promise<void>((resolve) => this.space.push(resolve));
    let done!: () => void;
    const ran = new Promise<void>((resolve) => (done = resolve));
    this.queue.push({ trace, done });
    this.pump();
    return { ran };
  }

  async drain(): Promise<void> {
    while (this.pending > 0) await new Promise<void>((resolve) => this.idle.push(resolve));
  }

  private pump(): void {
    while (this.active < this.concurrency && this.queue.length > 0) {
      const { trace, done } = this.queue.shift()!;
      this.space.shift()?.();
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
