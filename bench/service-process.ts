/**
 * The Lookout service as its own process for the benchmarks that measure it from outside (ingest,
 * isolation): started from source on a free port with a fresh data directory, ready once /readyz
 * answers, with one project to send to; plus what the benchmarks read of a process (CPU seconds,
 * peak and current RSS) and the common command-line flag.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { HarnessOptions } from '../src/app/harness-options.js';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** The bootstrap admin key every benchmark service starts with. */
export const BENCH_KEY = 'lk_bench_bootstrap_key_0123456789';
const READY_TIMEOUT_MS = 120_000;

/** `--name N` from the command line, else `fallback`. */
export function numberArg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
}

export interface ServiceProcess {
  url: string;
  pid: number;
  /** Its DATA_DIR (the embedded stores' files). */
  dataDir: string;
  /** The project created at start ('bench'). */
  project: string;
  /** SIGTERM, wait for the graceful exit, remove the data directory (unless `keepDataDir`: the caller reads it, then removes it). */
  stop(options?: { keepDataDir?: boolean }): Promise<void>;
}

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

/** A process's peak (VmHWM) or current (VmRSS) resident memory in MiB. */
export function memoryMiB(pid: number, field: 'VmHWM' | 'VmRSS'): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Math.round(Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0) / 1024);
}

/**
 * Starts the service with `env` over the defaults and waits until it is ready and has a project.
 * With `harness` (statistics files) it runs service-main.ts, which hands those options to the
 * service; without, src/main.ts itself.
 */
export async function startServiceProcess(name: string, env: Record<string, string> = {}, harness?: HarnessOptions): Promise<ServiceProcess> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `lookout-bench-${name}-`));
  fs.chmodSync(dataDir, 0o755);
  const port = await freePort();
  // BENCH_SERVICE_NODE_ARGS: extra node flags for the service (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof";
  // worker threads inherit them, so the compute pool is profiled too).
  const nodeArgs = (process.env.BENCH_SERVICE_NODE_ARGS ?? '').split(' ').filter(Boolean);
  // BENCH_SERVICE_STDOUT: a file for the service's standard output (what such flags print, e.g. "--trace-gc"); else discarded.
  const stdoutFile = process.env.BENCH_SERVICE_STDOUT ? fs.openSync(process.env.BENCH_SERVICE_STDOUT, 'a') : 'ignore';
  const entry = harness ? [path.join(root, 'bench', 'service-main.ts'), JSON.stringify(harness)] : [path.join(root, 'src', 'main.ts')];
  const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', ...entry], {
    cwd: root,
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, LOOKOUT_BOOTSTRAP_KEY: BENCH_KEY, LOG_LEVEL: 'warn', OTLP_GRPC_PORT: '0', METRICS_PORT: '0', ...env },
    stdio: ['ignore', stdoutFile, 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    try {
      if ((await fetch(`${url}/readyz`)).ok) break;
    } catch {
      // not up yet
    }
    if (Date.now() > deadline || child.exitCode !== null) {
      child.kill('SIGKILL');
      fs.rmSync(dataDir, { recursive: true, force: true });
      throw new Error('service did not start');
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  const created = await fetch(`${url}/api/projects`, {
    method: 'POST',
    headers: { authorization: `Bearer ${BENCH_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'bench' }),
  });
  const project = ((await created.json()) as { id: string }).id;
  const pid = child.pid!;
  return {
    url,
    pid,
    dataDir,
    project,
    async stop(options = {}) {
      child.kill('SIGTERM');
      await exited;
      if (!options.keepDataDir) fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * The ClickHouse server settings of the benchmark's own environment (CLICKHOUSE_URL and its
 * credentials), for benchmarks that build their configuration by hand: unset, the embedded engine.
 */
export function clickHouseServerEnv(): Record<string, string> {
  const names = ['CLICKHOUSE_URL', 'CLICKHOUSE_USER', 'CLICKHOUSE_PASSWORD', 'CLICKHOUSE_DATABASE'];
  return Object.fromEntries(names.filter((n) => process.env[n]).map((n) => [n, process.env[n] as string]));
}
