import type { Logger } from 'pino';
import type { Sql } from '../../platform/postgres/postgres.js';
import type { SecretBox } from '../../platform/secret-box.js';
import { WokenPollLoop } from '../../platform/woken-poll-loop.js';
import { dueAttempts, finishAttempt, inFlightByEndpoint, leaseAttempts, nextDueAt, pruneDeliveries, queueAttempts, releaseLeases, type DueAttempt } from './delivery-store.js';
import { nextAttemptAt } from './retry-schedule.js';
import { slackBody } from './slack-format.js';
import type { WebhookEnvelope } from './webhook-payload.js';
import { fanOutOnce } from './webhook-fanout.js';
import { sendWebhook, DELIVERY_TIMEOUT_MS, type SendOutcome } from './webhook-sender.js';
import { secretAssociation, signatureHeader } from './webhook-signature.js';
import { recordEndpointGiveUp, recordEndpointSuccess } from './webhook-store.js';
import { TEST_EVENT } from './webhook-types.js';

export interface DelivererSettings {
  allowPrivate: boolean;
  backoffBaseMs: number;
  concurrencyPerEndpoint: number;
  publicUrl: string | null;
}

export interface DelivererOptions {
  /** How often the loop looks for work when nobody kicks it. */
  pollMs?: number;
  batchSize?: number;
  /** Attempts in flight in this process, all endpoints together. */
  maxInFlight?: number;
  timeoutMs?: number;
  /** Finished attempts are kept this long. */
  retainMs?: number;
  /** Injectable clock and randomness (tests); every time the deliverer writes comes from `clock`. */
  clock?: () => number;
  random?: () => number;
  /** Hears each attempt's outcome (the metrics): succeeded, retry (failed, queued again), gave_up, failed (a test event). */
  onOutcome?: (outcome: 'succeeded' | 'retry' | 'gave_up' | 'failed') => void;
}

/**
 * Delivers webhooks in the background (docs/webhooks.md): fans outbox events out into queued
 * attempts, claims due attempts, POSTs them signed, and records each outcome with its retry. It
 * never runs on a request path. Concurrency is bounded per endpoint (across processes) and per
 * process, so a slow or dead receiver holds at most `concurrencyPerEndpoint` slots and delays nobody else. An attempt in
 * flight is leased in PostgreSQL for longer than its timeout; if this process dies, the lease lapses
 * and any process sends the attempt again — at-least-once, which is why receivers dedupe by
 * Lookout-Event-Id.
 */
export class WebhookDeliverer {
  private readonly pollMs: number;
  private readonly batchSize: number;
  private readonly maxInFlight: number;
  private readonly timeoutMs: number;
  private readonly retainMs: number;
  private readonly clock: () => number;
  private readonly random: () => number;
  private readonly perEndpoint = new Map<string, number>();
  private readonly inFlight = new Map<string, Promise<void>>();
  private aborter = new AbortController();
  private readonly loop: WokenPollLoop;
  private lastPrune = 0;
  private readonly onOutcome: NonNullable<DelivererOptions['onOutcome']>;

  constructor(
    private readonly sql: Sql,
    private readonly box: SecretBox,
    private readonly settings: DelivererSettings,
    private readonly logger: Logger,
    options: DelivererOptions = {},
  ) {
    this.pollMs = options.pollMs ?? 500;
    this.batchSize = options.batchSize ?? 200;
    this.maxInFlight = options.maxInFlight ?? 32;
    this.timeoutMs = options.timeoutMs ?? DELIVERY_TIMEOUT_MS;
    this.retainMs = options.retainMs ?? 30 * 24 * 3600 * 1000;
    this.clock = options.clock ?? Date.now;
    this.random = options.random ?? Math.random;
    this.onOutcome = options.onOutcome ?? (() => {});
    this.loop = new WokenPollLoop({
      pollMs: this.pollMs,
      round: () => this.round(),
      onError: (error) => this.logger.error({ err: error }, 'webhook delivery loop failed; will retry'),
    });
  }

  get isRunning(): boolean {
    return this.loop.isRunning;
  }

  /** Wakes the loop now: an outbox write committed, an attempt was queued, or a slot came free. */
  kick(): void {
    this.loop.kick();
  }

  start(): void {
    if (this.loop.isRunning) return;
    this.aborter = new AbortController();
    this.loop.start();
  }

  /**
   * Stops claiming, aborts attempts in flight and frees their leases, so another process (or the
   * next start) sends them at once. Queued attempts stay in PostgreSQL.
   */
  async stop(): Promise<void> {
    if (!this.loop.isRunning) return;
    await this.loop.stop();
    const unfinished = [...this.inFlight.keys()];
    this.aborter.abort();
    await Promise.allSettled([...this.inFlight.values()]);
    await releaseLeases(this.sql, unfinished).catch((error) => this.logger.warn({ err: error }, 'releasing webhook leases failed'));
  }

  private async fanOut(): Promise<void> {
    for (;;) {
      const { events } = await fanOutOnce(this.sql, { batchSize: this.batchSize, publicUrl: this.settings.publicUrl, now: new Date(this.clock()) });
      if (events < this.batchSize) return;
    }
  }

  /**
   * Claims due attempts up to the free slots and starts them. The per-endpoint bound counts the
   * attempts leased in every process; claims take turns on one transaction-scoped advisory lock
   * (a claim is a few milliseconds), so two processes never both fill the same endpoint's slots.
   * The process bound is this process's own.
   */
  private async claimAndSend(): Promise<number> {
    const free = this.maxInFlight - this.inFlight.size;
    if (free <= 0) return 0;
    const limit = this.settings.concurrencyPerEndpoint;
    const now = this.clock();
    const picked = await this.sql.begin(async (tx) => {
      await tx`select pg_advisory_xact_lock(hashtext('lookout:webhook-claim'))`;
      const counts = await inFlightByEndpoint(tx, new Date(now));
      // This process's own tally, should it be ahead of what is committed.
      for (const [id, n] of this.perEndpoint) counts.set(id, Math.max(n, counts.get(id) ?? 0));
      const saturated = [...counts].filter(([, n]) => n >= limit).map(([id]) => id);
      const due = await dueAttempts(tx, new Date(now), free * 4, saturated);
      const chosen: DueAttempt[] = [];
      for (const attempt of due) {
        if (chosen.length >= free) break;
        const n = counts.get(attempt.endpoint_id) ?? 0;
        if (n >= limit) continue;
        counts.set(attempt.endpoint_id, n + 1);
        chosen.push(attempt);
      }
      // The lease outlives the attempt's timeout, so only a dead process lets it lapse.
      await leaseAttempts(tx, chosen.map((a) => a.id), new Date(now + this.timeoutMs + 20_000));
      return chosen;
    });
    for (const attempt of picked) this.launch(attempt);
    return picked.length;
  }

  private launch(attempt: DueAttempt): void {
    this.perEndpoint.set(attempt.endpoint_id, (this.perEndpoint.get(attempt.endpoint_id) ?? 0) + 1);
    const work = this.deliver(attempt)
      .catch((error) => this.logger.error({ err: error, delivery_id: attempt.id, endpoint_id: attempt.endpoint_id }, 'webhook attempt failed to record; its lease will lapse and it will be sent again'))
      .finally(() => {
        const n = (this.perEndpoint.get(attempt.endpoint_id) ?? 1) - 1;
        if (n <= 0) this.perEndpoint.delete(attempt.endpoint_id);
        else this.perEndpoint.set(attempt.endpoint_id, n);
        this.inFlight.delete(attempt.id);
        this.kick();
      });
    this.inFlight.set(attempt.id, work);
  }

  private async deliver(attempt: DueAttempt): Promise<void> {
    const secret = this.box.open(attempt.secret_sealed, secretAssociation(attempt.tenant_id, attempt.endpoint_id));
    let outcome: SendOutcome;
    if (secret === null) {
      outcome = { ok: false, status: null, retryAfterMs: null, error: "the endpoint's secret cannot be decrypted with this server's LOOKOUT_SECRET_KEY; rotate the secret" };
    } else {
      const body = attempt.format === 'slack' ? JSON.stringify(slackBody(JSON.parse(attempt.body) as WebhookEnvelope)) : attempt.body;
      const headers = {
        'lookout-event-id': attempt.event_id,
        'lookout-event-type': attempt.event_type,
        'lookout-signature': signatureHeader(secret, body, Math.floor(this.clock() / 1000)),
        'lookout-delivery-id': attempt.id,
        'lookout-delivery-attempt': String(attempt.attempt),
      };
      outcome = await sendWebhook(attempt.url, body, headers, { allowPrivate: this.settings.allowPrivate, timeoutMs: this.timeoutMs, signal: this.aborter.signal });
      // Stopping: the attempt is neither a success nor the receiver's failure; stop() frees its lease.
      if (this.aborter.signal.aborted) return;
    }
    await this.record(attempt, outcome);
  }

  private async record(attempt: DueAttempt, outcome: SendOutcome): Promise<void> {
    const at = new Date(this.clock());
    const isTest = attempt.event_type === TEST_EVENT;
    await this.sql.begin(async (tx) => {
      if (outcome.ok) {
        const done = await finishAttempt(tx, attempt.id, { status: 'succeeded', responseStatus: outcome.status, error: null, nextAttemptAt: null, at });
        if (done) await recordEndpointSuccess(tx, attempt.endpoint_id);
        if (done) this.onOutcome('succeeded');
        return;
      }
      // Locked, so a PATCH disabling the endpoint either sees the retry queued here (and ends it) or is seen here.
      const [endpoint] = await tx<{ enabled: boolean }[]>`select enabled from webhook_endpoints where id = ${attempt.endpoint_id} for no key update`;
      // The test event is tried once and never counts towards disabling (docs/webhooks.md "Testing").
      const next = isTest || !endpoint?.enabled
        ? null
        : nextAttemptAt({ attempt: attempt.attempt, firstQueuedAt: attempt.event_created_at.getTime(), now: at.getTime(), baseMs: this.settings.backoffBaseMs, retryAfterMs: outcome.retryAfterMs, random: this.random });
      const failed = { responseStatus: outcome.status, error: outcome.error, at };
      if (next !== null) {
        const done = await finishAttempt(tx, attempt.id, { ...failed, status: 'failed', nextAttemptAt: new Date(next) });
        if (done) {
          this.onOutcome('retry');
          await queueAttempts(tx, [{ tenantId: attempt.tenant_id, endpointId: attempt.endpoint_id, eventId: attempt.event_id, eventType: attempt.event_type, attempt: attempt.attempt + 1, at: new Date(next) }]);
        }
        return;
      }
      if (isTest) {
        if (await finishAttempt(tx, attempt.id, { ...failed, status: 'failed', nextAttemptAt: null })) this.onOutcome('failed');
        return;
      }
      const done = await finishAttempt(tx, attempt.id, { ...failed, status: 'gave_up', nextAttemptAt: null, error: endpoint?.enabled ? outcome.error : `${outcome.error}; endpoint disabled` });
      if (done) this.onOutcome('gave_up');
      if (done && endpoint?.enabled && (await recordEndpointGiveUp(tx, attempt.endpoint_id))) {
        this.logger.warn({ endpoint_id: attempt.endpoint_id }, 'webhook endpoint disabled: too many deliveries in a row gave up');
      }
    });
  }

  /**
   * One round: fan out, send what is due and fits, prune; answers how long to sleep before the
   * next. Claiming runs only when the earliest pending attempt is due: that is exactly when a claim
   * can find one, and most rounds (the timer's, a kick for a commit that queued nothing) have none.
   */
  private async round(): Promise<number> {
    await this.fanOut();
    let due = await nextDueAt(this.sql);
    if (due && due.getTime() <= this.clock()) {
      while (this.loop.isRunning && (await this.claimAndSend()) > 0);
      due = await nextDueAt(this.sql);
    }
    await this.prune();
    // Due already but not claimed: its endpoint is saturated here (a finishing attempt kicks us)
    // or another process holds it; look again at the next poll.
    return due ? Math.max(0, Math.min(this.pollMs, due.getTime() - this.clock())) || this.pollMs : this.pollMs;
  }

  private async prune(): Promise<void> {
    if (this.clock() - this.lastPrune < 600_000) return;
    this.lastPrune = this.clock();
    await pruneDeliveries(this.sql, new Date(this.clock() - this.retainMs));
  }
}
