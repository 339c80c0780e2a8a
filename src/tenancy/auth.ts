import type { Request } from 'express';
import type { SqlHandle } from '../platform/postgres/postgres.js';
import { authenticateKey, type Principal } from './tenancy-store.js';
import { hashApiKey, type Scope } from './keys.js';
import { storeUnavailable } from '../platform/store-errors.js';
import { ForbiddenError, StoreUnavailableError, UnauthorizedError } from '../platform/http/errors.js';

/** What a route needs: `read` admits read and admin keys, `ingest` ingest and admin, `admin` only admin. */
export type ScopeNeed = 'read' | 'admin' | 'ingest';

export function bearerToken(req: Request): string | null {
  return bearerFromHeader(req.headers.authorization);
}

/** The key of an `Authorization: Bearer KEY` value, from an HTTP header or gRPC metadata alike. */
export function bearerFromHeader(header: string | undefined): string | null {
  if (!header) return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match ? match[1] : null;
}

/**
 * Keys PostgreSQL verified recently, per pool: while PostgreSQL is away (a store failure, not an
 * unknown key), a key it verified within `keyCacheSeconds` (KEY_CACHE_SECONDS) still verifies, so
 * the request goes on and fails honestly where it needs a store (503) rather than as a 401 or on the
 * key check. While PostgreSQL answers, every request is checked there, so a revocation takes effect
 * at once; in a process that cannot reach PostgreSQL, within that bound. Keyed by the key's hash,
 * bounded in size.
 */
const verified = new WeakMap<object, Map<string, { principal: Principal; at: number }>>();
const KEY_CACHE_MAX_ENTRIES = 10_000;
/** A key check PostgreSQL has not answered within this counts as PostgreSQL away (a frozen server neither answers nor fails). */
export const KEY_CHECK_TIMEOUT_MS = 3_000;

/** `check`, or a PostgreSQL-unavailable error once KEY_CHECK_TIMEOUT_MS passed without an answer. */
async function bounded<T>(check: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new StoreUnavailableError('postgres', 'PostgreSQL did not answer the key check; retry shortly')), KEY_CHECK_TIMEOUT_MS);
  });
  try {
    return await Promise.race([check, late]);
  } finally {
    clearTimeout(timer);
  }
}

export async function authenticate(sql: SqlHandle, req: Request, keyCacheSeconds = 0): Promise<Principal> {
  return authenticateBearer(sql, req.headers.authorization, keyCacheSeconds);
}

/**
 * The principal of an `Authorization` value (an HTTP header or gRPC metadata); 401 when it is
 * missing, malformed, unknown or revoked, 503 when PostgreSQL is away and the key was not verified
 * within `keyCacheSeconds`.
 */
export async function authenticateBearer(sql: SqlHandle, authorization: string | undefined, keyCacheSeconds = 0): Promise<Principal> {
  const token = bearerFromHeader(authorization);
  if (!token) throw new UnauthorizedError('Missing bearer API key');
  let cache = verified.get(sql);
  if (!cache) verified.set(sql, (cache = new Map<string, { principal: Principal; at: number }>()));
  const hash = hashApiKey(token);
  let principal: Principal | null;
  try {
    principal = await bounded(authenticateKey(sql, token));
  } catch (error) {
    const unavailable = storeUnavailable(error);
    if (!unavailable) throw error;
    const seen = cache.get(hash);
    if (seen && Date.now() - seen.at <= keyCacheSeconds * 1000) return seen.principal;
    throw unavailable;
  }
  cache.delete(hash);
  if (!principal) throw new UnauthorizedError('Unknown or revoked API key');
  if (keyCacheSeconds > 0) {
    cache.set(hash, { principal, at: Date.now() });
    if (cache.size > KEY_CACHE_MAX_ENTRIES) cache.delete(cache.keys().next().value!);
  }
  return principal;
}

export function scopeAllows(have: Scope, need: ScopeNeed): boolean {
  return have === 'admin' || have === need;
}

export function requireScope(principal: Principal, need: ScopeNeed): void {
  if (!scopeAllows(principal.scope, need)) {
    throw new ForbiddenError(`This route needs a key with ${need === 'admin' ? 'admin' : `${need} or admin`} scope`);
  }
}
