import { Piscina } from 'piscina';
import { runComputeTask, type ComputeTaskMessage } from './compute-tasks.js';
import { osThreadId, threadCpuNs } from '../platform/compute/thread-cpu.js';

/**
 * Whether the pool accounts CPU per task (only when it writes COMPUTE_STATS_FILE, for the ingest
 * benchmark): reading the thread's CPU is a file read on each side of a task, not for every request.
 */
const measureCpu = (Piscina.workerData as { measureCpu?: boolean } | undefined)?.measureCpu === true;
const tid = measureCpu ? osThreadId() : 0;

/** What a worker answers: the task's output, with the thread CPU it took when measured (compute-pool.ts accounts it). */
export interface ComputeWorkerReply {
  out: unknown;
  cpuNs: number;
  tid: number;
}

/** The worker thread's entry (see compute-pool.ts): one dispatcher for every task. */
export default function computeWorker(message: ComputeTaskMessage): ComputeWorkerReply {
  if (!measureCpu) return { out: runComputeTask(message as Parameters<typeof runComputeTask>[0]), cpuNs: 0, tid };
  const before = threadCpuNs();
  const out = runComputeTask(message as Parameters<typeof runComputeTask>[0]);
  return { out, cpuNs: threadCpuNs() - before, tid };
}
