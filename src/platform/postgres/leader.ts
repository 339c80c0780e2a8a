import type { Logger } from 'pino';
import postgres from 'postgres';
import { POSTGRES_BOUNDS, type Sql } from './postgres.js';

/**
 * Leadership for periodic jobs across Lookout processes: a session-level PostgreSQL advisory lock
 * held on a connection of its own (outside the request pool, which it would otherwise shrink for
 * good). The process holding it is the leader; if it dies, its
 * connection closes and PostgreSQL releases the lock, so another process takes over at its next
 * attempt. Jobs registered with `every` run on every process's timer but do work only on the
 * leader, so a job runs once per interval in the whole deployment, not once per process.
 */

/** Advisory lock keys in use (bootstrap 72818, migrations 72817). */
export const LEADER_LOCK_KEY = 72819;

interface Job {
  name: string;
  intervalMs: number;
  run: () => Promise<void>;
  timer: NodeJS.Timeout | null;
  busy: boolean;
}

export class Leader {
  private connection: Sql | null = null;
  private leading = false;
  private stopped = false;
  private readonly jobs: Job[] = [];
  private retry: NodeJS.Timeout | null = null;
  private attempting = false;

  constructor(
    /** The PostgreSQL URL: the lock lives on one connection opened from it. */
    private readonly url: string,
    private readonly logger: Logger,
    private readonly retryMs = 5000,
  ) {}

  get isLeader(): boolean {
    return this.leading;
  }

  /** Tries for the lock now and then every `retryMs` while another process holds it. */
  async start(): Promise<void> {
    await this.tryLead();
    this.retry = setInterval(() => void this.tryLead(), this.retryMs);
    this.retry.unref();
  }

  private async tryLead(): Promise<void> {
    // One attempt at a time: against a frozen server an attempt waits, and the timer must not pile more behind it.
    if (this.stopped || this.attempting) return;
    this.attempting = true;
    try {
      await this.attemptLead();
    } finally {
      this.attempting = false;
    }
  }

  private async attemptLead(): Promise<void> {
    try {
      if (this.leading) {
        // Still leading only while this session holds the lock: postgres.js reconnects silently
        // after a dropped connection, and the new session holds nothing.
        const [held] = await this.connection!<{ held: boolean }[]>`
          select exists (select 1 from pg_locks where locktype = 'advisory' and classid = 0 and objid = ${LEADER_LOCK_KEY}
                         and objsubid = 1 and granted and pid = pg_backend_pid()) as held`;
        if (held.held) return;
        this.leading = false;
        this.logger.warn('lost the periodic-job leadership (connection dropped)');
      }
      this.connection ??= postgres(this.url, { max: 1, onnotice: () => {}, connect_timeout: POSTGRES_BOUNDS.connectTimeoutSeconds }) as unknown as Sql;
      const [row] = await this.connection<{ locked: boolean }[]>`select pg_try_advisory_lock(${LEADER_LOCK_KEY}) as locked`;
      if (!row.locked || this.stopped) return;
      this.leading = true;
      this.logger.info('this process leads the periodic jobs');
      // A new leader runs every job at once: the previous one may have died before its turn.
      for (const job of this.jobs) void this.runJob(job);
    } catch (error) {
      // A broken connection lost the lock with it: start over on a fresh one.
      this.logger.warn({ err: error }, 'leader lock attempt failed');
      this.leading = false;
      const broken = this.connection;
      this.connection = null;
      await broken?.end({ timeout: 0 }).catch(() => {});
    }
  }

  /** Runs `run` every `intervalMs` while this process leads (and once when it becomes leader). */
  every(name: string, intervalMs: number, run: () => Promise<void>): void {
    const job: Job = { name, intervalMs, run, timer: null, busy: false };
    job.timer = setInterval(() => void this.runJob(job), intervalMs);
    job.timer.unref();
    this.jobs.push(job);
    if (this.leading) void this.runJob(job);
  }

  private async runJob(job: Job): Promise<void> {
    if (!this.leading || job.busy || this.stopped) return;
    job.busy = true;
    try {
      await job.run();
    } catch (error) {
      this.logger.error({ err: error, job: job.name }, 'periodic job failed');
    } finally {
      job.busy = false;
    }
  }

  /** Stops the jobs and gives up leadership (another process takes over at its next attempt). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.retry) clearInterval(this.retry);
    for (const job of this.jobs) if (job.timer) clearInterval(job.timer);
    while (this.jobs.some((j) => j.busy)) await new Promise((r) => setTimeout(r, 20));
    const connection = this.connection;
    this.connection = null;
    if (!connection) return;
    if (this.leading) await connection`select pg_advisory_unlock(${LEADER_LOCK_KEY})`.catch(() => {});
    this.leading = false;
    await connection.end({ timeout: 5 }).catch(() => {});
  }
}
