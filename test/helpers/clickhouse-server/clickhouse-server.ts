import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { serverConfigXml, usersXml, type ServerNode } from './server-config.js';

/**
 * Real ClickHouse server processes for tests and local runs, made from the engine library Lookout
 * already ships (`libchdb.so` of @chdb/lib-linux-x64-gnu): its `chdb_query_cmdline` runs
 * clickhouse-local with a full command line, and with listen ports and a query that starts the
 * listeners and then sleeps until signalled, that process serves ClickHouse's HTTP and native TCP
 * interfaces. Each server is its own process (one engine per process). A tiny C launcher, compiled
 * here with `cc` on first use, makes the call.
 *
 * What such a server lacks (so tests must not expect it): Keeper (Replicated tables are read-only),
 * `ON CLUSTER` DDL, and background sends of Distributed tables (foreground inserts work).
 */

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..', '..', '..');

/** Keeps the listeners up: runs until SIGTERM (which stops the process within a few seconds). */
const SERVE_QUERY =
  'SYSTEM START LISTEN HTTP; SYSTEM START LISTEN TCP; ' +
  'SELECT sleepEachRow(1) FROM system.numbers SETTINGS max_block_size = 1, max_execution_time = 0 FORMAT Null';

export interface ClickHouseServer {
  /** http://127.0.0.1:PORT, the HTTP interface (what CLICKHOUSE_URL names). */
  readonly url: string;
  readonly httpPort: number;
  readonly tcpPort: number;
  /** The user Lookout connects as, and its password (CLICKHOUSE_USER / CLICKHOUSE_PASSWORD). */
  readonly user: string;
  readonly password: string;
  /** The data directory (persists across stop/start). */
  readonly dataDir: string;
  /** The running process's id; null while stopped. */
  readonly pid: number | null;
  /** The last output of the process (for failure messages). */
  output(): string;
  /** Starts it again on the same ports and data (after stop or kill). */
  start(): Promise<void>;
  /** SIGTERM, then SIGKILL if it has not exited within 15 s; resolves once it has exited. */
  stop(): Promise<void>;
  /** SIGKILL (a crash); resolves once it has exited. */
  kill(): Promise<void>;
  /** SIGSTOP: the process stays, its sockets accept but nothing answers. */
  freeze(): void;
  /** SIGCONT after freeze(). */
  thaw(): void;
  /** Whether /ping answers now (1 s bound). */
  ping(): Promise<boolean>;
}

export interface StartServersOptions {
  /** One data directory per server is made under it (default: a fresh directory under TMPDIR). */
  baseDir?: string;
  /** Fixed ports, one entry per server (default: free ports). */
  ports?: readonly { http: number; tcp: number }[];
  user?: string;
  password?: string;
  /** The `remote_servers` entry naming every server as one shard (default `lookout_test`). */
  clusterName?: string;
}

/** Starts `count` servers, each its own process, and resolves once every one answers /ping. */
export async function startClickHouseServers(count: number, options: StartServersOptions = {}): Promise<ClickHouseServer[]> {
  const servers = await prepareClickHouseServers(count, options);
  try {
    await Promise.all(servers.map((s) => s.start()));
  } catch (error) {
    await Promise.all(servers.map((s) => s.kill()));
    throw error;
  }
  return servers;
}

/**
 * `count` servers with their ports, configuration and data directories, none started yet (start()
 * each): what a test needs that points Lookout at a server before it is up.
 */
export async function prepareClickHouseServers(count: number, options: StartServersOptions = {}): Promise<ClickHouseServer[]> {
  const launcher = launcherPath();
  const baseDir = options.baseDir ?? fs.mkdtempSync(path.join(process.env.TMPDIR ?? '/tmp', 'ch-server-'));
  const ports = options.ports ?? (await freePortPairs(count));
  if (ports.length !== count) throw new Error(`ports: ${ports.length} given for ${count} servers`);
  const user = options.user ?? 'lookout';
  const password = options.password ?? `pw-${crypto.randomBytes(8).toString('hex')}`;
  const nodes: ServerNode[] = ports.map((p) => ({ host: '127.0.0.1', tcpPort: p.tcp }));
  return ports.map((p, index) => {
    const dataDir = path.join(baseDir, `node-${index + 1}`);
    fs.mkdirSync(dataDir, { recursive: true });
    const usersFile = path.join(dataDir, 'users.xml');
    fs.writeFileSync(usersFile, usersXml(user, password));
    const configFile = path.join(dataDir, 'config.xml');
    fs.writeFileSync(configFile, serverConfigXml({ usersFile, clusterName: options.clusterName ?? 'lookout_test', nodes, user, password, shard: index + 1 }));
    return new ServerProcess(launcher, { httpPort: p.http, tcpPort: p.tcp, dataDir, configFile, user, password });
  });
}

export async function startClickHouseServer(options: StartServersOptions = {}): Promise<ClickHouseServer> {
  return (await startClickHouseServers(1, options))[0];
}

/** Stops a server started elsewhere (another process) by its process id: SIGTERM, then SIGKILL after `graceMs`. */
export async function stopClickHouseServerPid(pid: number, graceMs = 15_000): Promise<void> {
  const alive = () => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  if (!alive()) return;
  process.kill(pid, 'SIGCONT');
  process.kill(pid, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  while (alive() && Date.now() < deadline) await sleep(100);
  if (alive()) process.kill(pid, 'SIGKILL');
  while (alive()) await sleep(50);
}

class ServerProcess implements ClickHouseServer {
  readonly url: string;
  readonly httpPort: number;
  readonly tcpPort: number;
  readonly user: string;
  readonly password: string;
  readonly dataDir: string;
  private child: ChildProcess | null = null;
  private exited: Promise<void> = Promise.resolve();
  private log = '';
  private readonly configFile: string;

  constructor(private readonly launcher: string, spec: { httpPort: number; tcpPort: number; dataDir: string; configFile: string; user: string; password: string }) {
    this.httpPort = spec.httpPort;
    this.tcpPort = spec.tcpPort;
    this.dataDir = spec.dataDir;
    this.configFile = spec.configFile;
    this.user = spec.user;
    this.password = spec.password;
    this.url = `http://127.0.0.1:${spec.httpPort}`;
  }

  get pid(): number | null {
    return this.child?.pid ?? null;
  }

  output(): string {
    return this.log;
  }

  async start(): Promise<void> {
    if (this.child) throw new Error(`server on ${this.url} is already running`);
    const child = spawn(this.launcher, [
      libchdbPath(),
      '--listen_host=127.0.0.1',
      `--http_port=${this.httpPort}`,
      `--tcp_port=${this.tcpPort}`,
      `--path=${path.join(this.dataDir, 'data')}/`,
      `--config-file=${this.configFile}`,
      '--query',
      SERVE_QUERY,
    ], { stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    const keep = (chunk: Buffer) => {
      this.log = (this.log + chunk.toString()).slice(-8000);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    // A test process that ends without stopping its servers must not leave them running.
    const reap = () => child.kill('SIGKILL');
    process.once('exit', reap);
    let gone = false;
    this.exited = new Promise((resolve) => child.once('exit', () => {
      gone = true;
      process.removeListener('exit', reap);
      if (this.child === child) this.child = null;
      resolve();
    }));
    const deadline = Date.now() + 90_000;
    while (!(await this.ping())) {
      if (gone) throw new Error(`ClickHouse server on ${this.url} exited at start: ${this.log}`);
      if (Date.now() > deadline) {
        await this.kill();
        throw new Error(`ClickHouse server on ${this.url} did not answer /ping within 90 s: ${this.log}`);
      }
      await sleep(200);
    }
  }

  async stop(): Promise<void> {
    const child = this.child;
    if (!child) return;
    child.kill('SIGCONT');
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    await this.exited;
    clearTimeout(timer);
  }

  async kill(): Promise<void> {
    if (!this.child) return;
    this.child.kill('SIGKILL');
    await this.exited;
  }

  freeze(): void {
    this.signal('SIGSTOP');
    // The stop reaches each of the server's threads as it next runs: wait (at most 2 s) until the
    // kernel reports them all stopped, so no request sent after freeze() is answered (CI once saw
    // a /ping answered right after the signal).
    const tasks = `/proc/${this.child!.pid}/task`;
    const deadline = Date.now() + 2000;
    const stopped = () => fs.readdirSync(tasks).every((t) => {
      const stat = fs.readFileSync(`${tasks}/${t}/stat`, 'utf8');
      return /^[TtXZ]$/.test(stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3));
    });
    const pause = new Int32Array(new SharedArrayBuffer(4));
    while (!stopped() && Date.now() < deadline) Atomics.wait(pause, 0, 0, 1);
  }

  thaw(): void {
    this.signal('SIGCONT');
  }

  async ping(): Promise<boolean> {
    try {
      const response = await fetch(`${this.url}/ping`, { signal: AbortSignal.timeout(1000) });
      return response.ok && (await response.text()).startsWith('Ok');
    } catch {
      return false;
    }
  }

  private signal(name: NodeJS.Signals): void {
    if (!this.child) throw new Error(`server on ${this.url} is not running`);
    this.child.kill(name);
  }
}

/** The engine library chdb installs (the same one Lookout's in-process engine loads). */
export function libchdbPath(): string {
  const require = createRequire(path.join(root, 'package.json'));
  return path.join(path.dirname(require.resolve('@chdb/lib-linux-x64-gnu/package.json')), 'libchdb.so');
}

/**
 * The launcher binary, compiled with `cc` once per source version into node_modules/.cache (a
 * temporary name renamed into place, so parallel test processes never run a half-written file).
 */
export function launcherPath(): string {
  const source = path.join(here, 'launcher.c');
  const text = fs.readFileSync(source);
  const hash = crypto.createHash('sha256').update(text).digest('hex').slice(0, 12);
  const dir = path.join(root, 'node_modules', '.cache', 'lookout-clickhouse-server');
  const binary = path.join(dir, `launcher-${hash}`);
  if (fs.existsSync(binary)) return binary;
  fs.mkdirSync(dir, { recursive: true });
  const partial = `${binary}.${process.pid}.tmp`;
  try {
    execFileSync(process.env.CC ?? 'cc', ['-O1', '-o', partial, source, '-ldl'], { stdio: 'pipe' });
  } catch (error) {
    const stderr = (error as { stderr?: Buffer }).stderr?.toString() ?? String(error);
    throw new Error(`compiling the ClickHouse server launcher failed (a C compiler, cc, is needed): ${stderr}`, { cause: error });
  }
  fs.renameSync(partial, binary);
  return binary;
}

/** `count` pairs of distinct free ports on 127.0.0.1 (each bound once to learn it, then released). */
export async function freePortPairs(count: number): Promise<{ http: number; tcp: number }[]> {
  const held: net.Server[] = [];
  const take = () => new Promise<number>((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      held.push(server);
      resolve((server.address() as net.AddressInfo).port);
    });
  });
  const pairs: { http: number; tcp: number }[] = [];
  try {
    for (let i = 0; i < count; i++) pairs.push({ http: await take(), tcp: await take() });
  } finally {
    await Promise.all(held.map((s) => new Promise((resolve) => s.close(resolve))));
  }
  return pairs;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
