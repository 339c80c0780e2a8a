/**
 * The service under benchmark as its own process (as in production), and where its CPU goes: the
 * bench reads /proc for every thread of the service and for the embedded PostgreSQL processes it
 * started, and the compute pool reports its CPU per task (COMPUTE_STATS_FILE, src/compute/thread-cpu.ts).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';

const TICK_NS = 1e9 / 100; // clock ticks of /proc/PID/stat (100 per second on Linux)

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

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

export interface ServiceProcess {
  url: string;
  pid: number;
  snapshot(): CpuSnapshot;
  peakRssMiB(): number;
  /** SIGTERM and wait for the exit; the last snapshot taken before it exited, and the compute pool's stats. */
  stop(): Promise<{ last: CpuSnapshot; compute: ComputeStats }>;
  /** Ends the process if it still runs (after a failed run). */
  kill(): Promise<void>;
}

export async function startService(root: string, dataDir: string, env: Record<string, string>): Promise<ServiceProcess> {
  const port = await freePort();
  const statsFile = path.join(dataDir, 'compute-stats.json');
  // BENCH_SERVICE_NODE_ARGS: extra node flags for the service (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof";
  // worker threads inherit them, so the compute pool is profiled too).
  const extra = (process.env.BENCH_SERVICE_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child = spawn(process.execPath, [...extra, '--import', 'tsx', path.join(root, 'src', 'main.ts')], {
    cwd: root,
    env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, COMPUTE_STATS_FILE: statsFile, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 120_000;
  for (;;) {
    try {
      if ((await fetch(`${url}/readyz`)).ok) break;
    } catch {
      // not up yet
    }
    if (Date.now() > deadline || child.exitCode !== null) throw new Error('service did not start');
    await new Promise((r) => setTimeout(r, 200));
  }
  const pid = child.pid!;
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const snapshot = (): CpuSnapshot => ({ threads: threadCpu(pid), postgresNs: descendantsCpu(pid), at: Date.now() });
  // The last reading before exit, so the shutdown's work (flush, settle, hooks) is counted too.
  let last = snapshot();
  const sampler = setInterval(() => {
    const now = snapshot();
    if (now.threads.size > 0) last = now;
  }, 100);
  return {
    url,
    pid,
    snapshot,
    peakRssMiB: () => Math.round(Number(/VmHWM:\s+(\d+) kB/.exec(read(`/proc/${pid}/status`) ?? '')?.[1] ?? 0) / 1024),
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
      clearInterval(sampler);
      const compute = JSON.parse(read(statsFile) ?? '{"msByTask":{},"threadIds":[]}') as ComputeStats;
      return { last, compute };
    },
    kill: async () => {
      clearInterval(sampler);
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGKILL');
        await exited;
      }
    },
  };
}
