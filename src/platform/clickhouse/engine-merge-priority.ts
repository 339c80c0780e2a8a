import fs from 'node:fs';
import os from 'node:os';

/**
 * The in-process engine's background merges run at a lower CPU priority than everything else in
 * the process (nice MERGE_THREAD_NICE; Linux only).
 *
 * The engine shares the service's cores. Its merges are background work that can wait a few
 * seconds without harm, while the event loop, the compute workers (decoding requests, summarizing
 * settle rounds) and the engine's insert pipelines are what acknowledgements and settling wait for.
 * At equal priority the scheduler gives each runnable thread its share, so when the cores are
 * taken a large merge of `spans` (tens of seconds of one core) left a settle round's summary step
 * starved: 5–11 s of wall time for ~2 s of CPU (bench/freshness). At a lower priority a merge runs
 * on what the rest leaves — all of a core when the process is not busy — and the parts it has not
 * merged yet wait.
 *
 * The merge threads are found by the name the engine gives them (`MergeMutate`, what a ClickHouse
 * server shows in `top -H`) among this process's threads, on a slow timer: the engine starts them
 * lazily and keeps them. Setting a thread's nice value upwards needs no privilege. A ClickHouse
 * server (CLICKHOUSE_URL) is its own process, scheduled by its operator.
 */
export const MERGE_THREAD_NICE = 10;

const MERGE_THREAD_NAME = /^MergeMutate/;
const LOOK_EVERY_MS = 5000;

/** Lowers the priority of this process's engine merge threads that are not lowered yet; the thread ids lowered now. */
export function lowerMergeThreadPriority(): number[] {
  let tids: string[];
  try {
    tids = fs.readdirSync('/proc/self/task');
  } catch {
    return []; // not Linux: threads keep their priority
  }
  const lowered: number[] = [];
  for (const name of tids) {
    const tid = Number(name);
    try {
      if (!MERGE_THREAD_NAME.test(fs.readFileSync(`/proc/self/task/${name}/comm`, 'utf8'))) continue;
      if (os.getPriority(tid) >= MERGE_THREAD_NICE) continue;
      os.setPriority(tid, MERGE_THREAD_NICE);
      lowered.push(tid);
    } catch {
      // the thread ended between the listing and the read
    }
  }
  return lowered;
}

/** Keeps the engine's merge threads at the lower priority while the store is open; stop() ends it. */
export function keepMergeThreadsLow(): { stop(): void } {
  lowerMergeThreadPriority();
  const timer = setInterval(lowerMergeThreadPriority, LOOK_EVERY_MS);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
