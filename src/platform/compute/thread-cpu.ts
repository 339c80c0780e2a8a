import fs from 'node:fs';

/**
 * CPU time of the calling OS thread, for the compute pool's accounting (benchmarks split the
 * service's CPU by task). Linux's /proc/thread-self/schedstat gives the thread's on-CPU time in
 * nanoseconds, exact and cheap to read; elsewhere both functions answer 0 and nothing is counted.
 */

let available = process.platform === 'linux';

export function threadCpuNs(): number {
  if (!available) return 0;
  try {
    const text = fs.readFileSync('/proc/thread-self/schedstat', 'utf8');
    return Number(text.slice(0, text.indexOf(' ')));
  } catch {
    available = false;
    return 0;
  }
}

/** The kernel's id of the calling thread (a row of /proc/PID/task), 0 when unknown. */
export function osThreadId(): number {
  if (!available) return 0;
  try {
    const link = fs.readlinkSync('/proc/thread-self'); // "PID/task/TID"
    return Number(link.slice(link.lastIndexOf('/') + 1));
  } catch {
    return 0;
  }
}
