/**
 * A gated lane's admission. Two lanes have one each: `analytics` (the
 * query DSL, preset views, MCP, dashboard) and `interactive` (cheap bounded reads: trace detail,
 * trace lists, lookups by id), so a trace read never queues behind heavy analytics of its own
 * tenant. Statements run at most `maxConcurrency` at a time process-wide and `maxPerTenant` per
 * tenant; others wait in one FIFO queue of at most `maxQueue`. Ingest writes and settling never
 * pass through a gate, so they never wait behind reads.
 *
 * Waiting counts inside the statement's time limit: a waiter whose deadline passes leaves the queue
 * with QueryTimeoutError (504), and the statement that does start gets only the time that is left.
 * A statement that finds the queue full is refused at once with RateLimitedError (429 + Retry-After).
 */
import { QueryTimeoutError, RateLimitedError } from '../../http/errors.js';

export interface GateLimits {
  maxConcurrency: number;
  maxPerTenant: number;
  maxQueue: number;
}

export const DEFAULT_GATE_LIMITS: GateLimits = { maxConcurrency: 4, maxPerTenant: 2, maxQueue: 64 };
/** The interactive lane: few slots suffice, each statement is small (INTERACTIVE_MAX_*). */
export const DEFAULT_INTERACTIVE_LIMITS: GateLimits = { maxConcurrency: 2, maxPerTenant: 2, maxQueue: 64 };

interface Waiter {
  tenantId: string;
  admit(): void;
}

export class AnalyticsGate {
  private running = 0;
  private readonly perTenant = new Map<string, number>();
  private readonly queue: Waiter[] = [];

  /** `what` names the statements in the 429 detail ("analytics queries", "trace reads"). */
  constructor(
    private readonly limits: GateLimits = DEFAULT_GATE_LIMITS,
    private readonly what = 'analytics queries',
    /** The lane's name, for the metrics' reason (`<lane>_queue`). */
    private readonly lane = 'analytics',
  ) {
    if (limits.maxConcurrency < 1 || limits.maxPerTenant < 1) throw new Error(`concurrency limits of ${what} must be at least 1`);
  }

  /** Statements running and waiting now (for tests and the health of the lane). */
  get load(): { running: number; queued: number } {
    return { running: this.running, queued: this.queue.length };
  }

  /**
   * Waits for a slot until `deadline` (epoch ms). Resolves with the release function, which the
   * caller must call exactly once when its statement ends.
   */
  async acquire(tenantId: string, deadline: number, timeoutSeconds: number): Promise<() => void> {
    // Every waiter left in the queue is blocked (admitWaiting runs on every release), so a statement
    // that fits now skips no one who could run: a busy tenant's queue never holds up other tenants.
    if (this.fits(tenantId)) return this.take(tenantId);
    if (this.queue.length >= this.limits.maxQueue) {
      throw new RateLimitedError(`Too many ${this.what} are running or waiting; retry shortly`, this.retryAfterSeconds(), `${this.lane}_queue`);
    }
    return new Promise<() => void>((resolve, reject) => {
      const waiter: Waiter = {
        tenantId,
        admit: () => {
          clearTimeout(timer);
          resolve(this.take(tenantId));
        },
      };
      const timer = setTimeout(() => {
        const index = this.queue.indexOf(waiter);
        if (index >= 0) this.queue.splice(index, 1);
        reject(new QueryTimeoutError(timeoutSeconds));
        // A waiter at the head may have blocked others of an eligible tenant behind it.
        this.admitWaiting();
      }, Math.max(0, deadline - Date.now()));
      this.queue.push(waiter);
    });
  }

  private fits(tenantId: string): boolean {
    return this.running < this.limits.maxConcurrency && (this.perTenant.get(tenantId) ?? 0) < this.limits.maxPerTenant;
  }

  private take(tenantId: string): () => void {
    this.running++;
    this.perTenant.set(tenantId, (this.perTenant.get(tenantId) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.running--;
      const left = (this.perTenant.get(tenantId) ?? 1) - 1;
      if (left === 0) this.perTenant.delete(tenantId);
      else this.perTenant.set(tenantId, left);
      this.admitWaiting();
    };
  }

  /** Admits waiters in queue order, skipping those whose tenant is at its own limit. */
  private admitWaiting(): void {
    for (let i = 0; i < this.queue.length && this.running < this.limits.maxConcurrency; ) {
      const waiter = this.queue[i];
      if (this.fits(waiter.tenantId)) {
        this.queue.splice(i, 1);
        waiter.admit();
      } else {
        i++;
      }
    }
  }

  /** A hint, not a promise: about one statement's time per queued round. */
  private retryAfterSeconds(): number {
    return Math.max(1, Math.ceil(this.queue.length / Math.max(1, this.limits.maxConcurrency)));
  }
}
