import type { Logger } from 'pino';
import type { ProcessedTrace, TraceHooks } from '../trace-hooks.js';

/**
 * Runs the trace listeners (issue extraction, monitors) off the settling loop, so their database
 * work does not gate how fast traces settle. A settling round's traces are queued in groups of up
 * to `groupSize`: each group goes once to the group listeners (onTracesProcessed: one statement for
 * many traces — one statement per trace was most of PostgreSQL's work at volume), then trace by
 * trace to the per-trace listeners; up to `concurrency` groups run at a time. Bounded: when
 * `maxQueued` traces wait, `enqueue` waits too (the settler slows down instead of memory growing).
 * `drain()` waits for everything queued — graceful shutdown calls it before the stores close.
 * Listeners must be idempotent (src/trace-hooks.ts); a failing one is logged and the others still run.
 */
export class HookRunner {
  private readonly queue: { traces: ProcessedTrace[]; done: () => void }[] = [];
  private queued = 0;
  private active = 0;
  private idle: (() => void)[] = [];
  private space: (() => void)[] = [];

  constructor(
    private readonly hooks: TraceHooks,
    private readonly logger: Logger,
    private readonly concurrency = 4,
    private readonly maxQueued = 5000,
    private readonly groupSize = 100,
  ) {}

  get pending(): number {
    return this.queued + this.active;
  }

  /**
   * Queues traces once there is room; the returned promise (wrapped, so awaiting the call does not
   * wait for it) resolves when every listener has run for all of them — the settler finishes its claims then.
   */
  async enqueue(traces: ProcessedTrace[]): Promise<{ ran: Promise<void> }> {
    if (traces.length === 0 || (this.hooks.onTraceProcessed.length === 0 && this.hooks.onTracesProcessed.length === 0)) {
      return { ran: Promise.resolve() };
    }
    const groups: Promise<void>[] = [];
    for (let i = 0; i < traces.length; i += this.groupSize) {
      const group = traces.slice(i, i + this.groupSize);
      while (this.queued > 0 && this.queued + group.length > this.maxQueued) await new Promise<void>((resolve) => this.space.push(resolve));
      groups.push(new Promise<void>((done) => this.queue.push({ traces: group, done })));
      this.queued += group.length;
      this.pump();
    }
    return { ran: Promise.all(groups).then(() => undefined) };
  }

  async drain(): Promise<void> {
    while (this.pending > 0) await new Promise<void>((resolve) => this.idle.push(resolve));
  }

  private pump(): void {
    while (this.active < this.concurrency && this.queue.length > 0) {
      const { traces, done } = this.queue.shift()!;
      this.queued -= traces.length;
      for (const resolve of this.space.splice(0)) resolve();
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
      } catch (error) {
        this.logger.error({ err: error, traces: traces.length }, 'onTracesProcessed hook failed');
      }
    }
    for (const trace of traces) {
      for (const listener of this.hooks.onTraceProcessed) {
        try {
          await listener(trace);
        } catch (error) {
          this.logger.error({ err: error, traceId: trace.traceId }, 'onTraceProcessed hook failed');
        }
      }
    }
  }
}
