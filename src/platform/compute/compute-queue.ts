import { queueOptionsSymbol, type TaskQueue } from 'piscina';

/** A task as Piscina queues it; what we read of it is the queue options our pool put on it. */
type QueuedTask = Parameters<TaskQueue['push']>[0];

/**
 * Where a task waits for a worker. `first`: work on what the service already holds (settling
 * accepted traces, answering a reader), which keeps the data fresh and a reader answered. `intake`:
 * decoding a request that brings new data, which waits behind every `first` task — its sender is
 * the one party that can wait and retry, and admission refuses it while that wait is long.
 */
export type ComputeLine = 'first' | 'intake';

/** What the pool puts on each task it queues (queueOptionsSymbol). */
export interface ComputeQueueOptions {
  line: ComputeLine;
  /** performance.now() when the pool was asked to run it. */
  sentAt: number;
}

function optionsOf(task: QueuedTask): ComputeQueueOptions {
  return (task[queueOptionsSymbol] as ComputeQueueOptions | null) ?? { line: 'first', sentAt: 0 };
}

/**
 * A compute pool's task queue: two first-in-first-out lines, `first` always served before
 * `intake`. It orders the lines where they share workers (a pool of one thread); from two threads
 * up each line has workers of its own (compute-pool.ts) and each queue holds one line. In a single
 * line a settle round's summary tasks waited behind the decoding of every request admitted before
 * them: under a sustained load near capacity (the freshness benchmark at 0.8× of the burst rate)
 * that was tens of seconds for the one worker, while the settle lag grew to its bound.
 *
 * Piscina hands back a task it took but could not place; the pool runs with `stricterFIFO`, so it
 * comes back through unshift to the head of its own line, keeping the order.
 */
export class ComputeQueue implements TaskQueue {
  private readonly lines: Record<ComputeLine, QueuedTask[]> = { first: [], intake: [] };

  get size(): number {
    return this.lines.first.length + this.lines.intake.length;
  }

  /** Milliseconds the longest-waiting intake task has waited so far (0: none waits). */
  intakeWaitMs(now = performance.now()): number {
    const head = this.lines.intake[0];
    return head ? Math.max(0, now - optionsOf(head).sentAt) : 0;
  }

  shift(): QueuedTask | null {
    return this.lines.first.shift() ?? this.lines.intake.shift() ?? null;
  }

  push(task: QueuedTask): void {
    this.lines[optionsOf(task).line].push(task);
  }

  unshift(task: QueuedTask): void {
    this.lines[optionsOf(task).line].unshift(task);
  }

  remove(task: QueuedTask): void {
    const line = this.lines[optionsOf(task).line];
    const index = line.indexOf(task);
    if (index >= 0) line.splice(index, 1);
  }
}
