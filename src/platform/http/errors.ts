/**
 * The error classes every layer throws. One middleware (error-handler.ts) turns them into
 * `{detail, code}` bodies; the codes are stable (docs/errors.md lists them).
 */
export class HttpError extends Error {
  /** Why a 429 or 503 was answered, for the metrics (a word from a fixed set); unset otherwise. */
  reason?: string;

  constructor(
    readonly status: number,
    readonly code: string,
    readonly detail: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(detail);
  }
}

export class ValidationError extends HttpError {
  constructor(detail: string) {
    super(400, 'validation_error', detail);
  }
}

export class UnauthorizedError extends HttpError {
  constructor(detail = 'Missing, unknown or revoked API key') {
    super(401, 'unauthorized', detail, { 'WWW-Authenticate': 'Bearer' });
  }
}

export class ForbiddenError extends HttpError {
  constructor(detail = 'This API key does not have the scope this route needs') {
    super(403, 'forbidden', detail);
  }
}

export class NotFoundError extends HttpError {
  constructor(detail = 'Not found') {
    super(404, 'not_found', detail);
  }
}

export class ConflictError extends HttpError {
  constructor(detail: string, code = 'conflict') {
    super(409, code, detail);
  }
}

/** A statement ran or waited past the query time limit. */
export class QueryTimeoutError extends HttpError {
  constructor(seconds: number) {
    super(504, 'query_timeout', `The query ran past the ${seconds} s limit; narrow the window, filters or group_by`);
  }
}

/** Over a bounded queue; the client retries after `Retry-After`. */
export class RateLimitedError extends HttpError {
  constructor(detail: string, retryAfterSeconds: number, reason?: string) {
    super(429, 'rate_limited', detail, { 'Retry-After': String(retryAfterSeconds) });
    this.reason = reason;
  }
}

/**
 * A store (PostgreSQL or ClickHouse) did not answer: refused, reset, timed out, out of connections
 * or out of space. 503 with Retry-After on every route, so clients and OTLP exporters retry instead
 * of dropping the request (an exporter drops a batch answered 500).
 */
export class StoreUnavailableError extends HttpError {
  constructor(
    /** Which store failed; `stores` when it is not known which one did not answer in time. */
    readonly store: 'postgres' | 'clickhouse' | 'disk' | 'stores',
    detail = `${STORE_NAMES[store]} unavailable; retry shortly`,
    retryAfterSeconds = STORE_RETRY_AFTER_SECONDS,
  ) {
    super(503, 'store_unavailable', detail, { 'Retry-After': String(retryAfterSeconds) });
  }
}

const STORE_NAMES = { postgres: 'PostgreSQL is', clickhouse: 'ClickHouse is', disk: 'The data disk is', stores: 'Storage is' } as const;

/** Retry-After of a 503 store_unavailable: long enough for a restarted store, short enough not to pile up a backlog. */
export const STORE_RETRY_AFTER_SECONDS = 5;
