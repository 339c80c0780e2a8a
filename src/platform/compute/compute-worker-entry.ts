import { Piscina } from 'piscina';
import type { ComputeTaskMessage, ComputeTaskTable } from './compute-task.js';
import { osThreadId, threadCpuNs } from './thread-cpu.js';

/** What a worker answers: the task's output and, when the pool measures, the thread CPU it took. */
export interface ComputeWorkerReply {
  out: unknown;
  cpuNs: number;
  tid: number;
}

/**
 * The function a Piscina worker module exports as its default: runs the named task of `tasks`.
 * CPU is read per task only when the pool asked for it (a stats file is set), since reading the
 * thread clock is a system call per task.
 */
export function computeWorker(tasks: ComputeTaskTable): (message: ComputeTaskMessage) => ComputeWorkerReply {
  const measureCpu = (Piscina.workerData as { measureCpu?: boolean } | undefined)?.measureCpu === true;
  const tid = measureCpu ? osThreadId() : 0;
  return (message) => {
    if (!measureCpu) return { out: tasks.run(message.name, message.input), cpuNs: 0, tid };
    const before = threadCpuNs();
    const out = tasks.run(message.name, message.input);
    return { out, cpuNs: threadCpuNs() - before, tid };
  };
}
