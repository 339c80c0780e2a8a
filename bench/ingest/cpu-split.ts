/**
 * Where the CPU of the service under benchmark goes: the bench reads /proc for every thread of the
 * service process and for the embedded PostgreSQL processes it started, and the compute pool
 * reports its CPU per task (`statsFiles.compute`, src/platform/compute/thread-cpu.ts).
 */
import fs from 'node:fs';

const TICK_NS = 1e9 / 100; // clock ticks of /proc/PID/stat (100 per second on Linux)

function read(file: string): string | null {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return null;
  }
}

/** Fields of /proc/…/stat after the command name (field 3 is index 0). */
function statFields(text: string): string[] {
  return text.slice(text.lastIndexOf(')') + 2).split(' ');
}

/**
 * CPU nanoseconds per thread id of a process (exact on-CPU time from schedstat), and each thread's
 * current name: chdb's pools name the thread for the job it runs (QueryPipelineEx, MergeMutate,
 * ChunkParser, …), and a pooled thread is renamed when it takes another pool's job.
 */
export function threadCpu(pid: number): { cpu: Map<number, number>; names: Map<number, string> } {
  const cpu = new Map<number, number>();
  const names = new Map<number, string>();
  let tids: string[];
  try {
    tids = fs.readdirSync(`/proc/${pid}/task`);
  } catch {
    return { cpu, names };
  }
  for (const tid of tids) {
    const text = read(`/proc/${pid}/task/${tid}/schedstat`);
    if (!text) continue;
    cpu.set(Number(tid), Number(text.slice(0, text.indexOf(' '))));
    names.set(Number(tid), poolOf((read(`/proc/${pid}/task/${tid}/comm`) ?? '?').trim()));
  }
  return { cpu, names };
}

/** A thread's pool: its name without the number some pools append. */
const poolOf = (name: string) => name.replace(/[\s_:-]*\d+$/, '') || name;

/**
 * CPU nanoseconds of every process below `pid` (the embedded PostgreSQL server and its backends),
 * children they already reaped included.
 */
export function descendantsCpu(pid: number): number {
  const parents = new Map<number, number>();
  const stats = new Map<number, string[]>();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const text = read(`/proc/${entry}/stat`);
    if (!text) continue;
    const fields = statFields(text);
    parents.set(Number(entry), Number(fields[1]));
    stats.set(Number(entry), fields);
  }
  let ticks = 0;
  for (const [child, fields] of stats) {
    let p = parents.get(child);
    while (p !== undefined && p !== pid && p > 1) p = parents.get(p);
    if (p !== pid) continue;
    ticks += Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]); // utime stime cutime cstime
  }
  return ticks * TICK_NS;
}

export interface CpuSnapshot {
  threads: Map<number, number>;
  /**
   * CPU nanoseconds per thread and name, summed over the sampler's 100 ms steps (each step's CPU
   * goes to the name the thread had at its end): which engine pools the time went to.
   */
  byName: Map<number, Map<string, number>>;
  postgresNs: number;
  at: number;
}

export interface ComputeStats {
  msByTask: Record<string, number>;
  threadIds: number[];
}

/** Where the CPU between two snapshots went, in milliseconds. */
export interface CpuSplit {
  total: number;
  eventLoop: number;
  compute: number;
  engine: number;
  /** CPU by thread name of threads other than the event loop and the compute pool (ms). */
  engineByName: Map<string, number>;
  postgres: number;
}

export function cpuBetween(a: CpuSnapshot, b: CpuSnapshot, pid: number, computeTids: number[]): CpuSplit {
  const split: CpuSplit = { total: 0, eventLoop: 0, compute: 0, engine: 0, engineByName: new Map(), postgres: (b.postgresNs - a.postgresNs) / 1e6 };
  const compute = new Set(computeTids);
  for (const [tid, ns] of b.threads) {
    const ms = (ns - (a.threads.get(tid) ?? 0)) / 1e6;
    split.total += ms;
    if (tid === pid) split.eventLoop += ms;
    else if (compute.has(tid)) split.compute += ms;
    else split.engine += ms;
  }
  for (const [tid, names] of b.byName) {
    if (tid === pid || compute.has(tid)) continue;
    for (const [name, ns] of names) {
      const ms = (ns - (a.byName.get(tid)?.get(name) ?? 0)) / 1e6;
      if (ms > 0) split.engineByName.set(name, (split.engineByName.get(name) ?? 0) + ms);
    }
  }
  return split;
}

/**
 * Node names none of its own threads, so they all read "node". Node 20 starts them in a fixed order
 * before any script runs: the V8 platform's delayed-task thread and its 4 workers (garbage
 * collection, JIT compilation — for the event loop and the compute workers alike), one idle
 * thread, then the 4 libuv pool threads (where chdb runs each statement's own work: parsing an
 * insert body, writing the part, a query's main pipeline). Labelled by that order (a heuristic:
 * checked against `perf` per thread, bench/README.md).
 */
function nodeRuntimeThreads(pid: number, names: Map<number, string>): Map<number, string> {
  const early = [...names].filter(([tid, name]) => tid !== pid && name === 'node').map(([tid]) => tid).sort((a, b) => a - b);
  const labels = new Map<number, string>();
  early.slice(0, 5).forEach((tid) => labels.set(tid, 'V8 platform (GC, JIT)'));
  early.slice(6, 10).forEach((tid) => labels.set(tid, 'libuv pool (chdb statements)'));
  return labels;
}

export interface CpuSampler {
  /** A snapshot now (also a step of the by-name sums). */
  snapshot(): CpuSnapshot;
  /** The last snapshot taken while the process was alive (after its shutdown's work). */
  last(): CpuSnapshot;
  stop(): void;
}

/**
 * Snapshots every 100 ms, so the last one before the process exits is known, summing each step's
 * CPU per thread by the thread's name at the step's end.
 */
export function cpuSampler(pid: number): CpuSampler {
  const byName = new Map<number, Map<string, number>>();
  let previous = new Map<number, number>();
  let nodeThreads: Map<number, string> | null = null;
  const take = (): CpuSnapshot => {
    const { cpu, names } = threadCpu(pid);
    nodeThreads ??= nodeRuntimeThreads(pid, names);
    for (const [tid, ns] of cpu) {
      const name = nodeThreads.get(tid) ?? names.get(tid) ?? '?';
      const sums = byName.get(tid) ?? new Map<string, number>();
      sums.set(name, (sums.get(name) ?? 0) + ns - (previous.get(tid) ?? 0));
      byName.set(tid, sums);
    }
    if (cpu.size > 0) previous = cpu;
    const copy = new Map([...byName].map(([tid, sums]) => [tid, new Map(sums)]));
    return { threads: cpu, byName: copy, postgresNs: descendantsCpu(pid), at: Date.now() };
  };
  let last = take();
  const timer = setInterval(() => {
    const now = take();
    if (now.threads.size > 0) last = now;
  }, 100);
  return {
    snapshot: () => {
      const now = take();
      if (now.threads.size > 0) last = now;
      return now;
    },
    last: () => last,
    stop: () => clearInterval(timer),
  };
}

/** The compute pool's totals, written by the service on close (`statsFiles.compute`). */
export function readComputeStats(file: string): ComputeStats {
  const text = read(file);
  return text ? (JSON.parse(text) as ComputeStats) : { msByTask: {}, threadIds: [] };
}
