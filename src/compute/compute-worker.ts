import { runComputeTask, type ComputeTaskMessage } from './compute-tasks.js';

/** The worker thread's entry (see compute-pool.ts): one dispatcher for every task. */
export default function computeWorker(message: ComputeTaskMessage): unknown {
  return runComputeTask(message as Parameters<typeof runComputeTask>[0]);
}
