import type { Logger } from 'pino';
import type { ClickHouseStore } from '../../platform/clickhouse/clickhouse.js';
import type { Sql } from '../../platform/postgres/postgres.js';
import { WokenPollLoop } from '../../platform/woken-poll-loop.js';
import { eventIssueRow, type OutboxRow } from './issue-event-outbox.js';

export interface OutboxRelayOptions {
  /** How often the loop looks for unrelayed rows when nobody kicks it. */
  pollMs?: number;
  batchSize?: number;
  /** Relayed rows are kept this long (for audit and re-relay), then pruned. */
  retainRelayedMs?: number;
}

/**
 * Copies issue.* events from the PostgreSQL outbox to ClickHouse `event_issue`.
 *
 * Exactly once: a batch is claimed with `FOR NO KEY UPDATE SKIP LOCKED` (several service processes can run
 * relays side by side), inserted into ClickHouse, then marked relayed in the same PostgreSQL
 * transaction. A crash after the ClickHouse insert but before the commit leaves the rows unrelayed;
 * the next relay (in this or any process) inserts the very same rows again and ReplacingMergeTree
 * keeps one (readers use FINAL, as for every event table). A crash before the insert loses nothing:
 * the rows were committed with the change they describe. The webhook fan-out reads the same rows
 * with FOR KEY SHARE, which this lock does not conflict with, so neither reader skips the other.
 */
export class OutboxRelay {
  private readonly batchSize: number;
  private readonly retainRelayedMs: number;
  private readonly loop: WokenPollLoop;
  private lastPrune = 0;

  constructor(
    private readonly sql: Sql,
    private readonly ch: ClickHouseStore,
    private readonly logger: Logger,
    options: OutboxRelayOptions = {},
  ) {
    this.batchSize = options.batchSize ?? 500;
    this.retainRelayedMs = options.retainRelayedMs ?? 7 * 24 * 3600 * 1000;
    // Back off on repeated failures (a ClickHouse outage), up to 30 s between attempts.
    this.loop = new WokenPollLoop({
      pollMs: options.pollMs ?? 500,
      round: async () => {
        await this.drain();
        await this.pruneRelayed();
      },
      onError: (error) => this.logger.error({ err: error }, 'issue event relay failed; will retry'),
    });
  }

  get isRunning(): boolean {
    return this.loop.isRunning;
  }

  /** Relays one batch; returns how many events it relayed. */
  async relayOnce(): Promise<number> {
    return this.sql.begin(async (tx) => {
      const rows = await tx<OutboxRow[]>`
        select id::text as id, event_id, tenant_id, project_id, issue_id, name, occurred_at, actor, surface, user_id, api_key_id, created_at
        from issue_event_outbox where relayed_at is null
        order by id limit ${this.batchSize}
        for no key update skip locked`;
      if (rows.length === 0) return 0;
      await this.ch.insert(this.ch.table('event_issue'), rows.map(eventIssueRow), 'system');
      await tx`update issue_event_outbox set relayed_at = now() where id = any(${rows.map((r) => r.id)}::bigint[])`;
      return rows.length;
    });
  }

  /**
   * Relays until the outbox is empty (or a batch fails). Rows another reader holds for an instant
   * (the webhook fan-out marking them dispatched, another process's relay) are skipped by a batch,
   * so drain looks again for up to a second before it returns with rows still unrelayed. It asks
   * whether anything waits before it opens a transaction: most rounds (the timer's, or a kick for
   * rows another process relayed) find nothing, and that costs one statement instead of four.
   */
  async drain(): Promise<number> {
    let total = 0;
    for (let waits = 0, left = await this.anyUnrelayed(); left; ) {
      const n = await this.relayOnce();
      total += n;
      if (n === this.batchSize) continue;
      left = await this.anyUnrelayed();
      if (!left || waits++ >= 20) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return total;
  }

  private async anyUnrelayed(): Promise<boolean> {
    const [{ left }] = await this.sql<{ left: boolean }[]>`select exists (select 1 from issue_event_outbox where relayed_at is null) as left`;
    return left;
  }

  /** Wakes the loop now, e.g. right after a transaction that wrote events commits. */
  kick(): void {
    this.loop.kick();
  }

  start(): void {
    this.loop.start();
  }

  /** Stops the loop after its current batch. Unrelayed events stay in the outbox for the next start. */
  stop(): Promise<void> {
    return this.loop.stop();
  }

  private async pruneRelayed(): Promise<void> {
    if (Date.now() - this.lastPrune < 60_000) return;
    this.lastPrune = Date.now();
    const cutoff = new Date(Date.now() - this.retainRelayedMs);
    // A row also stays until the webhook fan-out has read it (webhooks/webhook-fanout.ts).
    await this.sql`delete from issue_event_outbox where relayed_at is not null and relayed_at < ${cutoff} and webhooks_dispatched_at is not null`;
  }
}
