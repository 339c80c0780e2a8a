import { Piscina } from 'piscina';
import type { ComputeTaskMessage, ComputeTaskTable } from './compute-task.js';
import { osThreadId, threadCpuNs } from './thread-cpu.js';
import { HeapRoomError } from './heap-room.js';

/**
 * What a worker answers: the task's output, how long it ran on the worker (wall time), and, when
 * the pool measures, the thread CPU it took; or, for a task refused a step its heap could not hold
 * (heap-room.ts), `noHeapRoom` and no output.
 */
export interface ComputeWorkerReply {
  out: unknown;
  runMs: number;
  cpuNs: number;
  tid: number;
  noHeapRoom?: true;
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
    const started = performance.now();
    const before = measureCpu ? threadCpuNs() : 0;
    const cpuNs = () => (measureCpu ? threadCpuNs() - before : 0);
    try {
      const out = tasks.run(message.name, message.input);
      return { out, runMs: performance.now() - started, cpuNs: cpuNs(), tid };
    } catch (error) {
      // An error object crosses the thread boundary without its class, so the refusal is a reply.
      if (error instanceof HeapRoomError) return { out: null, runMs: performance.now() - started, cpuNs: cpuNs(), tid, noHeapRoom: true };
      throw error;
    }
  };
}
