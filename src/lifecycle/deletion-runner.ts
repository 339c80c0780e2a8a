/**
 * Runs deletion jobs in the background of worker processes: claims the oldest open job whose lease
 * is free (deletion-store.ts), keeps the lease alive while the job runs (a heartbeat at a third of
 * it), and runs it (deletion-job.ts). A failed attempt records its error and frees the job for a
 * retry after a backoff; a process that stops ends its job at the next step and frees the claim, so
 * the next runner resumes at once; a process that dies lets the lease lapse (DELETION_LEASE_MS).
 */
import crypto from 'node:crypto';
import type { Logger } from 'pino';
import type { ClickHouseStore } from '../platform/clickhouse/clickhouse.js';
import type { Sql } from '../platform/postgres/postgres.js';
import { WokenPollLoop } from '../platform/woken-poll-loop.js';
import { runDeletionJob, DEFAULT_JOB_SETTINGS, LostClaimError, type DeletionJobSettings } from './deletion-job.js';
import { claimDeletion, failDeletion, releaseDeletion, renewDeletion, type ClaimedDeletion } from './deletion-store.js';

export interface DeletionRunnerOptions {
  leaseMs: number;
  pollMs?: number;
  job?: Partial<DeletionJobSettings>;
}

/** The first retry waits this long, doubling per attempt up to MAX_RETRY_MS. */
const RETRY_BASE_MS = 2_000;
const MAX_RETRY_MS = 5 * 60_000;

export class DeletionRunner {
  private readonly loop: WokenPollLoop;
  private aborter = new AbortController();
  private readonly settings: DeletionJobSettings;

  constructor(
    private readonly sql: Sql,
    private readonly ch: ClickHouseStore,
    private readonly logger: Logger,
    private readonly options: DeletionRunnerOptions,
  ) {
    this.settings = { ...DEFAULT_JOB_SETTINGS, ...options.job };
    this.loop = new WokenPollLoop({
      pollMs: options.pollMs ?? 1_000,
      round: () => this.round(),
      onError: (error) => this.logger.error({ err: error }, 'deletion runner round failed; will retry'),
    });
  }

  /** Wakes the runner now: a job was created in this process. */
  kick(): void {
    this.loop.kick();
  }

  start(): void {
    if (this.loop.isRunning) return;
    this.aborter = new AbortController();
    this.loop.start();
  }

  /** Ends the job in progress at its next step and frees its claim. */
  async stop(): Promise<void> {
    this.aborter.abort();
    await this.loop.stop();
  }

  /** Claims and runs one job; asks for the next round at once when it found one. */
  private async round(): Promise<number | void> {
    const claim = await claimDeletion(this.sql, crypto.randomUUID(), this.options.leaseMs);
    if (!claim) return;
    await this.run(claim);
    return 0;
  }

  private async run(claim: ClaimedDeletion): Promise<void> {
    const { leaseMs } = this.options;
    const log = this.logger.child({ deletion_id: claim.row.id });
    // At most one renewal in flight; stopped, and its last renewal awaited, before the claim is
    // released or failed (a late renewal must not extend a lease the job gave up).
    let renewal: Promise<unknown> | null = null;
    const heartbeat = setInterval(() => {
      renewal ??= renewDeletion(this.sql, claim, leaseMs)
        .catch((error) => log.warn({ err: error }, 'deletion lease renewal failed'))
        .finally(() => {
          renewal = null;
        });
    }, Math.max(100, Math.floor(leaseMs / 3)));
    heartbeat.unref();
    const stopRenewing = async () => {
      clearInterval(heartbeat);
      await renewal;
    };
    try {
      await runDeletionJob({ sql: this.sql, ch: this.ch, logger: log, settings: this.settings, signal: this.aborter.signal }, claim);
      log.info('deletion job finished');
    } catch (error) {
      await stopRenewing();
      if (this.aborter.signal.aborted) {
        await releaseDeletion(this.sql, claim).catch((e) => log.warn({ err: e }, 'releasing the deletion claim failed; its lease will lapse'));
      } else if (error instanceof LostClaimError) {
        log.warn('deletion job taken over by another process');
      } else {
        log.error({ err: error }, 'deletion attempt failed; will retry');
        const retryMs = Math.min(MAX_RETRY_MS, RETRY_BASE_MS * 2 ** Math.min(claim.row.attempts, 10));
        await failDeletion(this.sql, claim, error instanceof Error ? error.message : String(error), retryMs);
      }
    } finally {
      await stopRenewing();
    }
  }
}
