import fs from 'node:fs';
import { Piscina, queueOptionsSymbol } from 'piscina';
import { HttpError } from '../http/errors.js';
import type { ComputeTask, ComputeTaskTable } from './compute-task.js';
import type { ComputeWorkerReply } from './compute-worker-entry.js';
import { ComputeQueue, type ComputeLine, type ComputeQueueOptions } from './compute-queue.js';
import { HeapRoomError } from './heap-room.js';

/**
 * The worker pool for CPU-heavy work: the event loop only routes. OTLP decoding, normalization, row derivation, trace summaries and big trace payloads
 * run here, so one large request or deep trace never stalls /healthz or another tenant's call.
 *
 * Piscina (a maintained pool over worker_threads): bounded threads with a task queue, transfer
 * lists for request bodies, and tasks as plain module functions, so the same pure functions run
 * inline in tests and in the pool in production.
 *
 * Tasks take and return plain data only (structured clone), chosen to be cheap to copy: request
 * bodies as bytes, stored spans as the JSONEachRow text ClickHouse returns, payloads as JSON text.
 * Copying deep span objects between threads costs more than summarizing them, so none
 * cross.
 *
 * The pool knows no task of its own: features declare task handles (compute-task.ts) and the
 * composition root binds them to implementations and names the worker module. `threads` 0 runs
 * every task inline on the calling thread (for tools and tests that want no threads).
 *
 * With two threads or more the two lines (compute-queue.ts) get workers of their own: decoding half
 * of them (rounded up), settling and reads the rest. Neither then waits behind the other's backlog —
 * with one shared worker decoding waited behind every settle round's summaries, seconds at a time
 * under sustained load near capacity, and intake refused requests while settling kept up. Shared
 * workers that take either kind of task cost more CPU per span than workers that keep to one (each
 * compiles and collects for both: +10–20 % in the ingest benchmark, its V8 helper threads' time
 * nearly doubled); own workers cost none of it (bench/results/2026-11-30.md). With one thread both lines share
 * it, settling and reads first.
 *
 * Each worker reports the thread CPU a task took (thread-cpu.ts); the pool sums it per task name
 * (`cpu`), and with a statistics file (the service's `statsFiles.compute` harness option) writes
 * the sums and its threads' ids there on close, so the ingest benchmark can split the service's CPU
 * into decoding, settling and the rest.
 */

export interface ComputePoolOptions {
  /** The implementations, for running inline (threads 0); the workers load theirs from `workerFile`. */
  tasks: ComputeTaskTable;
  /** A module whose default export is `computeWorker(tasks)` over the same table. */
  workerFile: string;
  /** Worker threads; 0 runs every task inline on the calling thread. */
  threads: number;
  /** Where to write the per-task CPU sums on close; null: CPU is not measured. */
  statsFile?: string | null;
  /**
   * Caps each worker's old generation (0: V8's default). A capped worker that runs out dies
   * alone; its task fails with ComputeOutOfMemoryError and the pool replaces it.
   */
  heapMb?: number;
}

/**
 * Young generation of a worker that takes both kinds of task (one thread; V8 splits it into two
 * semi-spaces and a large-object space, so 96 MB is 32 MB semi-spaces; V8's default is 16 MB
 * semi-spaces, 48 MB in all). A task allocates a request's or a settling group's temporaries —
 * megabytes per 1000 spans — and with small semi-spaces much of it survives two scavenges mid-task
 * and is promoted, to be marked and compacted later. A larger young generation saves a little CPU
 * per task but lifts the peak RSS of the overload benchmark past its 1 GiB bound; 96 MB keeps it
 * under. Workers that keep to one line (two threads or more) get V8's default: measured against
 * 96 MB each, the same CPU per span and 70–130 MiB less at the ingest and overload benchmarks'
 * peaks (bench/results/2026-11-30.md).
 */
const SHARED_WORKER_YOUNG_GENERATION_MB = 96;
const V8_DEFAULT_YOUNG_GENERATION_MB = 48;

/**
 * A worker capped by COMPUTE_HEAP_MB keeps its young generation within a quarter of the cap (at
 * least V8's default): the cap is what an operator sets to bound memory, and 96 MB beside a
 * 48 MB old generation would defeat it.
 */
export function youngGenerationMb(heapMb: number, threads = 1): number {
  const uncapped = threads > 1 ? V8_DEFAULT_YOUNG_GENERATION_MB : SHARED_WORKER_YOUNG_GENERATION_MB;
  return heapMb > 0 ? Math.min(uncapped, Math.max(V8_DEFAULT_YOUNG_GENERATION_MB, Math.floor(heapMb / 4))) : uncapped;
}

export interface ComputeCpu {
  /** Thread CPU milliseconds per task name, summed over the pool's threads. */
  msByTask: Record<string, number>;
  /** OS thread ids of the pool's workers. */
  threadIds: number[];
}

/**
 * A task whose worker ran out of its heap cap — the worker is gone (Piscina starts a new one) — or
 * was refused a step its heap could not hold (heap-room.ts; the worker stays): the task's caller gets
 * this instead of a crash; over HTTP a 503 `overloaded` with Retry-After.
 */
export class ComputeOutOfMemoryError extends HttpError {
  constructor(readonly task: string) {
    super(503, 'overloaded', `The server ran out of memory for this ${task} task; retry later`, { 'Retry-After': '5' });
    this.reason = 'compute_memory';
  }
}

/** Workers for each line out of `threads` (≥ 2): decoding gets half, rounded up; settling and reads the rest. */
export function workersByLine(threads: number): Record<ComputeLine, number> {
  return { intake: Math.ceil(threads / 2), first: Math.floor(threads / 2) };
}

export class ComputePool {
  /** The Piscina pool each line's tasks go to (one pool for both lines with one thread); null inline. */
  private readonly pools: Record<ComputeLine, { piscina: Piscina; queue: ComputeQueue }> | null;
  private readonly tasks: ComputeTaskTable;
  private readonly statsFile: string | null;
  private readonly cpuNs = new Map<string, number>();
  private readonly tids = new Set<number>();
  readonly threads: number;
  readonly heapMb: number;
  /**
   * Hears every task's name, its seconds from run() to its answer, and the part of them before a
   * worker ran it (queued behind other tasks, and the trips to and from the worker; 0 inline): the
   * service's metrics. null: nobody.
   */
  onTask: ((name: string, seconds: number, waitSeconds: number) => void) | null = null;

  constructor(options: ComputePoolOptions) {
    const { threads, workerFile } = options;
    const statsFile = options.statsFile ?? null;
    const heapMb = options.heapMb ?? 0;
    this.tasks = options.tasks;
    this.threads = threads;
    this.statsFile = statsFile;
    this.heapMb = heapMb;
    const workerPool = (workers: number) => {
      const queue = new ComputeQueue();
      const piscina = new Piscina({
        filename: workerFile,
        minThreads: workers,
        maxThreads: workers,
        // Threads stay up: start-up (loading protobufjs and the mapping tables) is the slow part.
        idleTimeout: Infinity,
        // Settling and reads before intake where both lines share the pool (compute-queue.ts); a task
        // taken but not placed goes back to the head of its line, not to the tail (Piscina's
        // default, which moved one waiting task to the back each time a task ended).
        taskQueue: queue,
        stricterFIFO: true,
        workerData: { measureCpu: statsFile !== null },
        resourceLimits: { maxYoungGenerationSizeMb: youngGenerationMb(heapMb, threads), ...(heapMb > 0 ? { maxOldGenerationSizeMb: heapMb } : {}) },
      });
      // A worker lost with no task of ours running is replaced by the pool; nothing to answer, only to note.
      piscina.on('error', (error: unknown) => {
        process.emitWarning(`compute worker failed outside a task: ${error instanceof Error ? error.message : String(error)}`);
      });
      return { piscina, queue };
    };
    if (threads === 0) this.pools = null;
    else if (threads === 1) {
      const shared = workerPool(1);
      this.pools = { first: shared, intake: shared };
    } else {
      const workers = workersByLine(threads);
      this.pools = { first: workerPool(workers.first), intake: workerPool(workers.intake) };
    }
  }

  /** Runs a task; `transfer` lists buffers handed to the worker without a copy (the caller must not use them after). */
  async run<Input, Output>(task: ComputeTask<Input, Output>, input: Input, transfer: ArrayBuffer[] = []): Promise<Output> {
    const { name, line } = task;
    const onTask = this.onTask;
    const started = performance.now();
    if (!this.pools) {
      try {
        return this.tasks.run(name, input) as Output;
      } catch (error) {
        if (error instanceof HeapRoomError) throw new ComputeOutOfMemoryError(name);
        throw error;
      } finally {
        onTask?.(name, (performance.now() - started) / 1000, 0);
      }
    }
    let reply: ComputeWorkerReply;
    try {
      const queued: ComputeQueueOptions = { line, sentAt: started };
      reply = (await this.pools[line].piscina.run({ name, input, [queueOptionsSymbol]: queued }, { transferList: transfer })) as ComputeWorkerReply;
    } catch (error) {
      // A failed task's time on the worker is not known: it is counted as run.
      onTask?.(name, (performance.now() - started) / 1000, 0);
      if ((error as { code?: string }).code === 'ERR_WORKER_OUT_OF_MEMORY') throw new ComputeOutOfMemoryError(name);
      throw error;
    }
    if (onTask) {
      const ms = performance.now() - started;
      onTask(name, ms / 1000, Math.max(0, ms - reply.runMs) / 1000);
    }
    if (this.statsFile) {
      this.cpuNs.set(name, (this.cpuNs.get(name) ?? 0) + reply.cpuNs);
      this.tids.add(reply.tid);
    }
    if (reply.noHeapRoom) throw new ComputeOutOfMemoryError(name);
    return reply.out as Output;
  }

  /** Threads, the share of their time spent on tasks since start (0 to 1), and tasks waiting for a thread. */
  get load(): { threads: number; utilization: number; queued: number } {
    if (!this.pools) return { threads: 0, utilization: 0, queued: 0 };
    const pools = this.distinctPools();
    // Each pool's utilization weighted by its threads: the share of all workers' time.
    const busy = pools.reduce((sum, { piscina }) => sum + piscina.utilization * piscina.threads.length, 0);
    const threads = pools.reduce((sum, { piscina }) => sum + piscina.threads.length, 0);
    return { threads: this.threads, utilization: threads > 0 ? busy / threads : 0, queued: pools.reduce((sum, { piscina }) => sum + piscina.queueSize, 0) };
  }

  /** Milliseconds the longest-waiting intake task has waited for a worker so far (0 inline or none). */
  get intakeWaitMs(): number {
    return this.pools?.intake.queue.intakeWaitMs() ?? 0;
  }

  private distinctPools(): { piscina: Piscina; queue: ComputeQueue }[] {
    return this.pools ? [...new Set([this.pools.first, this.pools.intake])] : [];
  }

  async close(): Promise<void> {
    await Promise.all(this.distinctPools().map(({ piscina }) => piscina.destroy()));
    if (!this.statsFile) return;
    const cpu: ComputeCpu = { msByTask: Object.fromEntries([...this.cpuNs].map(([name, ns]) => [name, ns / 1e6])), threadIds: [...this.tids] };
    fs.writeFileSync(this.statsFile, JSON.stringify(cpu));
  }
}

