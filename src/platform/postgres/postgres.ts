import path from 'node:path';
import postgres from 'postgres';
import { pino, type Logger } from 'pino';
import { EmbeddedPostgresSupervisor, embeddedUrl, livePostmaster } from './embedded-supervisor.js';
import { PostgresStatementStats } from './postgres-statement-stats.js';

export type Sql = postgres.Sql<Record<string, never>>;
/** A handle that runs SQL: the pool or a transaction, so store functions can join a caller's transaction. */
export type SqlHandle = Sql | postgres.TransactionSql<Record<string, never>>;

export interface PostgresStore {
  sql: Sql;
  /** The connection URL (the embedded server's own when no DATABASE_URL), for other pools on it. */
  url: string;
  /** The embedded server's supervisor; null with DATABASE_URL. */
  embedded: EmbeddedPostgresSupervisor | null;
  close(): Promise<void>;
}

/** The URL of the embedded server running under DATA_DIR `dataRoot`, null when none runs (a second pool: tools, tests). */
export function embeddedPostgresUrl(dataRoot: string): string | null {
  const live = livePostmaster(path.join(dataRoot, 'postgres'));
  return live ? embeddedUrl(live.port) : null;
}

/** Bounds of every pooled connection (docs/operations.md "When a store fails"). */
export const POSTGRES_BOUNDS = {
  /** A connection not made within this fails (the server is down or frozen) instead of waiting 30 s. */
  connectTimeoutSeconds: 5,
  /** An idle connection is closed after this, so a restarted server is met on fresh connections. */
  idleTimeoutSeconds: 60,
  /** statement_timeout of every statement on the pool unless POSTGRES_STATEMENT_TIMEOUT_MS says otherwise. */
  statementTimeoutMs: 15_000,
  /** A pooled connection whose last attempt failed is tried again after at most this long (reconnectBackoffSeconds). */
  reconnectMaxSeconds: 1,
} as const;

/**
 * Seconds before a pooled connection whose attempt failed tries again, by the pool's count of
 * failed attempts since its last success: 50 ms doubling to POSTGRES_BOUNDS.reconnectMaxSeconds,
 * each between half and all of that (so the connections do not retry in step). A query meeting
 * such a connection waits that long before its attempt, and one outage fails every connection of
 * the pool several times: postgres.js's default (3^n / 100 s, up to 20 s) then holds queries for
 * many seconds after the server answers again, while this keeps the wait under a second. An attempt
 * on a server that is down is one refused connection, cheap for both sides.
 */
export function reconnectBackoffSeconds(failures: number): number {
  return (0.5 + Math.random() / 2) * Math.min(0.05 * 2 ** failures, POSTGRES_BOUNDS.reconnectMaxSeconds);
}

/**
 * A pool on `url` as the service configures its own (bigint as BigInt, undefined as null, notices
 * dropped, the bounds above); `stats` counts its statements by kind. Also what tests use for a second "process".
 */
export function connectPostgres(url: string, options: { max: number; stats?: PostgresStatementStats | null; statementTimeoutMs?: number }): Sql {
  return postgres(url, {
    max: options.max,
    connect_timeout: POSTGRES_BOUNDS.connectTimeoutSeconds,
    idle_timeout: POSTGRES_BOUNDS.idleTimeoutSeconds,
    backoff: reconnectBackoffSeconds,
    // Sent as a startup parameter: every session of the pool has it, including after a reconnect.
    connection: { statement_timeout: options.statementTimeoutMs ?? POSTGRES_BOUNDS.statementTimeoutMs },
    onnotice: () => {},
    types: { bigint: postgres.BigInt },
    transform: { undefined: null },
    ...(options.stats ? { debug: options.stats.count } : {}),
  }) as unknown as Sql;
}

/**
 * Opens PostgreSQL: the server at DATABASE_URL, else an embedded one under DATA_DIR, supervised
 * (embedded-supervisor.ts). `statsFile` (benchmarks): the pool's statements are
 * counted by kind and written there on close. A server that is away is met with connection errors
 * (503 to callers) and the pool reconnects by itself once it answers again; the first connection at
 * start-up is retried with back-off for up to `startupWaitMs`.
 */
export async function openPostgres(options: {
  databaseUrl: string | null;
  dataDir: string;
  statsFile?: string | null;
  statementTimeoutMs?: number;
  logger?: Logger;
  startupWaitMs?: number;
}): Promise<PostgresStore> {
  const logger = options.logger;
  const embedded = options.databaseUrl ? null : await EmbeddedPostgresSupervisor.start(options.dataDir, (logger ?? pino({ level: 'silent' })).child({ component: 'embedded-postgres' }));
  const url = options.databaseUrl ?? embedded!.url;
  const stats = options.statsFile ? new PostgresStatementStats(options.statsFile) : null;
  const sql = connectPostgres(url, { max: 10, stats, statementTimeoutMs: options.statementTimeoutMs });
  try {
    await firstConnection(sql, options.startupWaitMs ?? 0, logger);
  } catch (error) {
    await sql.end({ timeout: 1 }).catch(() => {});
    await embedded?.stop();
    throw error;
  }
  return {
    sql,
    url,
    embedded,
    async close() {
      // Bounded: a server that is gone or frozen cannot hold the shutdown.
      await sql.end({ timeout: 2 }).catch(() => {});
      stats?.write();
      await embedded?.stop();
    },
  };
}

/** `select 1` until it answers, with back-off, for up to `waitMs` (DATABASE_URL: a server that starts after Lookout). */
async function firstConnection(sql: Sql, waitMs: number, logger: Logger | undefined): Promise<void> {
  const deadline = Date.now() + waitMs;
  for (let wait = 250; ; wait = Math.min(wait * 2, 5_000)) {
    try {
      await sql`select 1`;
      return;
    } catch (error) {
      if (Date.now() + wait > deadline) throw error;
      logger?.warn({ err: error, retryInMs: wait }, 'PostgreSQL not reachable yet; retrying');
      await new Promise((r) => setTimeout(r, wait));
    }
  }
}
