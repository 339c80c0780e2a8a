import { runComputeTask, type ComputeTaskMessage } from './compute-tasks.js';
import { osThreadId, threadCpuNs } from './thread-cpu.js';

const tid = osThreadId();

/** What a worker answers: the task's output, with the thread CPU it took (compute-pool.ts accounts it). */
export interface ComputeWorkerReply {
  out: unknown;
  cpuNs: number;
  tid: number;
}

/** The worker thread's entry (see compute-pool.ts): one dispatcher for every task. */
export default function computeWorker(message: ComputeTaskMessage): ComputeWorkerReply {
  const before = threadCpuNs();
  const out = runComputeTask(message as Parameters<typeof runComputeTask>[0]);
  return { out, cpuNs: threadCpuNs() - before, tid };
}
