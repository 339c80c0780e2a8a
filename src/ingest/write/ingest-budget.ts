import { HttpError } from '../../platform/http/errors.js';

/**
 * The memory budget of ingestion (`INGEST_MAX_INFLIGHT_BYTES`). A request is charged for what it
 * holds while it is in progress, as it comes to hold it: its body on the wire, then every chunk of
 * the decompressed body as it inflates, each together with an estimate of the decoded spans and
 * rows that chunk turns into (see DECODED_BYTES_PER_BODY_BYTE). So a 20 KB gzip bomb is charged
 * for its 20 MiB before it has inflated in full, and stops where the budget ends.
 *
 * Over the budget a request is refused with 429 `rate_limited` + Retry-After (OTLP/HTTP
 * "Retryable Response Codes": the exporter backs off and retries), never queued in memory. A
 * request that is alone in flight may grow past the budget (up to OTLP_MAX_BYTES, which the body
 * reader enforces), so one request larger than the budget is still served rather than refused
 * forever.
 */

/**
 * Heap bytes held per decompressed body byte once a request is decoded, normalized and turned into
 * rows (measured with `--expose-gc` on 1000-span GenAI batches, test/helpers/synthetic-batch.ts):
 * protobuf 6.6 (the protobufjs message, the decoded export, normalized spans and row objects),
 * OTLP/JSON 3.2 retained plus two transient copies of the text (the UTF-8 string and the copy that
 * quotes 64-bit integers) while it parses. Rounded up: the budget must over- rather than
 * under-count.
 */
export const DECODED_BYTES_PER_BODY_BYTE = { protobuf: 7, json: 6 } as const;

export class OverloadedError extends HttpError {
  /** `reason` names the bound for the metrics: ingest_budget, settle_lag, storage_failing, shutting_down. */
  constructor(status: 429 | 503, detail: string, retryAfterSeconds: number, reason: string) {
    super(status, status === 429 ? 'rate_limited' : 'overloaded', detail, { 'Retry-After': String(retryAfterSeconds) });
    this.reason = reason;
  }
}

/** One request's share of the budget; grows as the request reads and inflates, released once. */
export class Reservation {
  private held = 0;
  private released = false;

  constructor(private readonly budget: IngestBudget) {}

  get bytes(): number {
    return this.held;
  }

  /** Adds `bytes` to this request's charge; throws 429 when the budget cannot take them. */
  reserve(bytes: number): void {
    if (this.released) throw new Error('reservation already released');
    if (bytes <= 0) return;
    this.budget.take(this, bytes);
    this.held += bytes;
  }

  /** Gives everything back. Safe to call more than once (every exit path of a request calls it). */
  release(): void {
    if (this.released) return;
    this.released = true;
    this.budget.give(this, this.held);
    this.held = 0;
  }
}

export class IngestBudget {
  private inflight = 0;
  /** Reservations holding bytes: the "alone in flight" rule needs to know whether anyone else holds any. */
  private readonly holders = new Set<Reservation>();

  constructor(readonly limit: number) {}

  get inflightBytes(): number {
    return this.inflight;
  }

  open(): Reservation {
    return new Reservation(this);
  }

  /** @internal Called by Reservation.reserve. */
  take(reservation: Reservation, bytes: number): void {
    const alone = this.holders.size === 0 || (this.holders.size === 1 && this.holders.has(reservation));
    if (!alone && this.inflight + bytes > this.limit) {
      throw new OverloadedError(429, `Ingest memory budget full (INGEST_MAX_INFLIGHT_BYTES=${this.limit}); retry shortly`, 1, 'ingest_budget');
    }
    this.inflight += bytes;
    this.holders.add(reservation);
  }

  /** @internal Called by Reservation.release. */
  give(reservation: Reservation, bytes: number): void {
    this.inflight -= bytes;
    this.holders.delete(reservation);
  }
}
