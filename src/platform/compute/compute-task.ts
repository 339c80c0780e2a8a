import type { ComputeLine } from './compute-queue.js';

/**
 * A task the compute pool can run: a name that crosses the thread boundary and the input and output
 * types that both sides agree on. A feature declares its handle beside the function it names and
 * calls `compute.run(handle, input)`, so go-to-definition from a call site lands on the handle and
 * from there on the function; the composition root binds each handle to its implementation once
 * (src/app/compute-tasks.ts), for the worker threads and for the inline pool alike.
 */
export interface ComputeTask<Input, Output> {
  readonly name: string;
  /** Which line it waits in for a worker (compute-queue.ts). */
  readonly line: ComputeLine;
  /** Carries the types only; never set. */
  readonly signature?: (input: Input) => Output;
}

/** A task handle; `line` 'intake' for decoding requests that bring new data, which wait behind the rest. */
export function computeTask<Input, Output>(name: string, line: ComputeLine = 'first'): ComputeTask<Input, Output> {
  return Object.freeze({ name, line });
}

type Implementation = (input: unknown) => unknown;

/** Handles bound to their implementations: what a worker thread (or the inline pool) runs by name. */
export class ComputeTaskTable {
  private readonly byName = new Map<string, Implementation>();

  bind<Input, Output>(task: ComputeTask<Input, Output>, run: (input: Input) => Output): this {
    if (this.byName.has(task.name)) throw new Error(`compute task ${task.name} bound twice`);
    this.byName.set(task.name, run as Implementation);
    return this;
  }

  run(name: string, input: unknown): unknown {
    const implementation = this.byName.get(name);
    if (!implementation) throw new Error(`unknown compute task ${name}`);
    return implementation(input);
  }
}

/** What the pool posts to a worker. */
export interface ComputeTaskMessage {
  name: string;
  input: unknown;
}
