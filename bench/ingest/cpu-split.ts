/**
 * Where the CPU of the service under benchmark goes: the bench reads /proc for every thread of the
 * service process and for the embedded PostgreSQL processes it started, and the compute pool
 * reports its CPU per task (COMPUTE_STATS_FILE, src/compute/thread-cpu.ts).
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

/** CPU nanoseconds per thread id of a process (exact on-CPU time from schedstat). */
function threadCpu(pid: number): Map<number, number> {
  const out = new Map<number, number>();
  let tids: string[] = [];
  try {
    tids = fs.readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const tid of tids) {
    const text = read(`/proc/${pid}/task/${tid}/schedstat`);
    if (text) out.set(Number(tid), Number(text.slice(0, text.indexOf(' '))));
  }
  return out;
}

/**
 * CPU nanoseconds of every process below `pid` (the embedded PostgreSQL server and its backends),
 * children they already reaped included.
 */
function descendantsCpu(pid: number): number {
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
  postgres: number;
}

export function cpuBetween(a: CpuSnapshot, b: CpuSnapshot, pid: number, computeTids: number[]): CpuSplit {
  const split: CpuSplit = { total: 0, eventLoop: 0, compute: 0, engine: 0, postgres: (b.postgresNs - a.postgresNs) / 1e6 };
  const compute = new Set(computeTids);
  for (const [tid, ns] of b.threads) {
    const ms = (ns - (a.threads.get(tid) ?? 0)) / 1e6;
    split.total += ms;
    if (tid === pid) split.eventLoop += ms;
    else if (compute.has(tid)) split.compute += ms;
    else split.engine += ms;
  }
  return split;
}

export function cpuSnapshot(pid: number): CpuSnapshot {
  return { threads: threadCpu(pid), postgresNs: descendantsCpu(pid), at: Date.now() };
}

/** Snapshots every 100 ms, so the last one before the process exits (after its shutdown's work) is known. */
export function cpuSampler(pid: number): { last(): CpuSnapshot; stop(): void } {
  let last = cpuSnapshot(pid);
  const timer = setInterval(() => {
    const now = cpuSnapshot(pid);
    if (now.threads.size > 0) last = now;
  }, 100);
  return { last: () => last, stop: () => clearInterval(timer) };
}

/** The compute pool's totals, written by the service on close (COMPUTE_STATS_FILE). */
export function readComputeStats(file: string): ComputeStats {
  const text = read(file);
  return text ? (JSON.parse(text) as ComputeStats) : { msByTask: {}, threadIds: [] };
}
