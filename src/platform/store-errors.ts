import { StoreUnavailableError } from './http/errors.js';

/**
 * One mapping of store failures to answers. A PostgreSQL or ClickHouse error that says "the store is
 * not there or cannot take this now" (connection refused, reset or timed out, too many connections,
 * shutting down, out of disk) becomes 503 `store_unavailable` with Retry-After on every route, REST,
 * OTLP and MCP alike; anything else stays what it was (a bug is still a 500, bad input a 400).
 */

/** Socket-level failures Node reports, from either store's client. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'EHOSTDOWN', 'ENETUNREACH', 'ENETDOWN', 'EAI_AGAIN', 'ENOTFOUND',
  'UND_ERR_SOCKET', 'UND_ERR_CONNECT_TIMEOUT', 'ERR_SOCKET_CLOSED',
]);

/** postgres.js's own codes for a connection that could not be made or was lost. */
const POSTGRES_CLIENT_CODES = new Set(['CONNECT_TIMEOUT', 'CONNECTION_CLOSED', 'CONNECTION_DESTROYED', 'CONNECTION_ENDED']);

/**
 * PostgreSQL SQLSTATEs of an unavailable server: class 08 (connection exception), 53 (insufficient
 * resources: too many connections 53300, disk full 53100, out of memory 53200), 57P01–57P03 (shut
 * down by an administrator, crash recovery, cannot connect now), 57014 (cancelled: statement_timeout),
 * 58030 (I/O error).
 */
function postgresUnavailable(sqlState: string): boolean {
  return /^08/.test(sqlState) || /^53/.test(sqlState) || /^57P0[1-3]$/.test(sqlState) || sqlState === '57014' || sqlState === '58030';
}

/**
 * ClickHouse error codes of an unavailable server
 * (https://github.com/ClickHouse/ClickHouse/blob/master/src/Common/ErrorCodes.cpp): 202
 * TOO_MANY_SIMULTANEOUS_QUERIES, 209 SOCKET_TIMEOUT, 210 NETWORK_ERROR, 242 TABLE_IS_READ_ONLY, 243
 * NOT_ENOUGH_SPACE, 252 TOO_MANY_PARTS, 279 ALL_CONNECTION_TRIES_FAILED (on a cluster: the node
 * answering could not reach a shard that is down), 425 SYSTEM_ERROR, 999 KEEPER_EXCEPTION.
 */
const CLICKHOUSE_UNAVAILABLE_CODES = new Set(['202', '209', '210', '242', '243', '252', '279', '425', '999']);

type ErrorLike = { code?: unknown; errno?: unknown; severity?: unknown; message?: unknown; cause?: unknown; type?: unknown };

/** Which store an unavailable-store error came from, or null when the error is something else. */
export function unavailableStore(error: unknown): 'postgres' | 'clickhouse' | null {
  for (let e = error as ErrorLike | null | undefined, depth = 0; e && depth < 4; e = e.cause as ErrorLike | undefined, depth++) {
    if (e instanceof StoreUnavailableError) return e.store === 'postgres' ? 'postgres' : 'clickhouse';
    const code = typeof e.code === 'string' ? e.code : typeof e.code === 'number' ? String(e.code) : '';
    // A PostgresError carries the server's severity and SQLSTATE.
    if (typeof e.severity === 'string' && code) return postgresUnavailable(code) ? 'postgres' : null;
    if (POSTGRES_CLIENT_CODES.has(code)) return 'postgres';
    // ClickHouse's transport errors are labelled where its statements run (clickhouseUnavailable,
    // called by the SQL layer), so a bare socket error here comes from PostgreSQL's client.
    if (NETWORK_CODES.has(code)) return 'postgres';
    if (clickhouseFailure(e)) return 'clickhouse';
  }
  return null;
}

/** A failure of the ClickHouse client or engine that means the server is not available. */
function clickhouseFailure(e: ErrorLike): boolean {
  const code = typeof e.code === 'string' ? e.code : typeof e.code === 'number' ? String(e.code) : '';
  if (NETWORK_CODES.has(code) || CLICKHOUSE_UNAVAILABLE_CODES.has(code)) return true;
  const message = typeof e.message === 'string' ? e.message : '';
  // @clickhouse/client: its request_timeout ran out, or the server closed the socket under a request.
  return message === 'Timeout error.' || message === 'socket hang up';
}

/**
 * What the SQL layer throws for a ClickHouse statement that failed: a StoreUnavailableError naming
 * ClickHouse (with the original as its cause) when the server was not available, else the error itself.
 */
export function clickhouseUnavailable(error: unknown): unknown {
  if (error instanceof StoreUnavailableError) return error;
  for (let e = error as ErrorLike | null | undefined, depth = 0; e && depth < 4; e = e.cause as ErrorLike | undefined, depth++) {
    if (clickhouseFailure(e)) {
      const wrapped = new StoreUnavailableError('clickhouse');
      (wrapped as { cause?: unknown }).cause = error;
      return wrapped;
    }
  }
  return error;
}

/** The 503 to answer for `error` when it is a store failure; null when it is something else. */
export function storeUnavailable(error: unknown): StoreUnavailableError | null {
  if (error instanceof StoreUnavailableError) return error;
  const store = unavailableStore(error);
  return store ? new StoreUnavailableError(store) : null;
}
