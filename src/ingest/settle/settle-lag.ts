import type { Logger } from 'pino';
import type { Sql } from '../../platform/postgres/postgres.js';
import { OverloadedError } from '../write/ingest-budget.js';
import type { Freshness } from '../freshness.js';

/**
 * How far settling is behind, read from the settle queue every `pollMs` and shared by every request
 * of the process: the age of the oldest trace that is due (its quiet period or maximum wait has
 * passed) and not settled yet, claimed or not. The queue is in PostgreSQL and the age is computed
 * on PostgreSQL's clock, so every process reads the same lag whichever process ingested or settles.
 *
 * Two uses:
 * - Back-pressure (SETTLE_MAX_LAG_MS): while the lag is past the bound, ingestion answers 503
 *   `overloaded` with Retry-After instead of accepting spans that would only make it grow. It
 *   accepts again by itself at the first reading back under the bound.
 * - Freshness: trace lists and analytics views say when their data was complete up to
 *   (`data_as_of`) and the lag at that reading (`settle_lag_ms`).
 *
 * One indexed statement per poll (settle_queue_due), whatever the request rate.
 */

export interface LagReading {
  /** Age in ms of the oldest due, unsettled trace at the reading; 0 when none is due. */
  lagMs: number;
  /** PostgreSQL's clock at the reading, epoch ms. */
  readAtMs: number;
}

export const SETTLE_LAG_RETRY_AFTER_SECONDS = 5;

export async function readSettleLag(sql: Sql): Promise<LagReading> {
  const [row] = await sql<{ lag_ms: string | null; now_ms: string }[]>`
    select (extract(epoch from (now() - min(settle_after))) * 1000)::bigint::text as lag_ms,
           (extract(epoch from now()) * 1000)::bigint::text as now_ms
    from settle_queue where settle_after <= now()`;
  return { lagMs: row.lag_ms === null ? 0 : Math.max(0, Number(row.lag_ms)), readAtMs: Number(row.now_ms) };
}

export class SettleLag {
  private last: LagReading | null = null;
  private timer: NodeJS.Timeout | null = null;
  private polling: Promise<void> | null = null;

  constructor(
    private readonly sql: Sql,
    private readonly options: { maxLagMs: number; pollMs?: number; logger: Logger },
  ) {}

  get maxLagMs(): number {
    return this.options.maxLagMs;
  }

  /** The latest reading; null until the first one. */
  get reading(): LagReading | null {
    return this.last;
  }

  /** Reads at once, then every `pollMs` (default 1 s). */
  async start(): Promise<void> {
    if (this.timer) return;
    this.timer = setInterval(() => void this.poll(), this.options.pollMs ?? 1000);
    this.timer.unref();
    await this.poll();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.polling;
  }

  /** One reading now (also what the poll does); a failure keeps the previous reading and is logged. */
  poll(): Promise<void> {
    return (this.polling ??= readSettleLag(this.sql)
      .then((reading) => {
        this.last = reading;
      })
      .catch((error) => this.options.logger.warn({ err: error }, 'reading the settle lag failed'))
      .finally(() => {
        this.polling = null;
      }));
  }

  /** Throws 503 `overloaded` + Retry-After while the last reading is past SETTLE_MAX_LAG_MS (0: never). */
  admit(): void {
    const max = this.options.maxLagMs;
    if (max > 0 && this.last && this.last.lagMs > max) {
      throw new OverloadedError(
        503,
        `Trace processing is ${Math.round(this.last.lagMs / 1000)} s behind (SETTLE_MAX_LAG_MS=${max}); retry shortly`,
        SETTLE_LAG_RETRY_AFTER_SECONDS,
        'settle_lag',
      );
    }
  }

  freshness(): Freshness {
    const last = this.last;
    const bound = this.options.maxLagMs > 0 ? this.options.maxLagMs : null;
    if (!last) return { data_as_of: null, settle_lag_ms: null, settle_max_lag_ms: bound };
    return { data_as_of: new Date(last.readAtMs - last.lagMs).toISOString(), settle_lag_ms: last.lagMs, settle_max_lag_ms: bound };
  }
}
