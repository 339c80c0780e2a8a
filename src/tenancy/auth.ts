import type { Request } from 'express';
import type { SqlHandle } from '../platform/postgres/postgres.js';
import { authenticateKey, type Principal } from './tenancy-store.js';
import type { Scope } from './keys.js';
import { ForbiddenError, UnauthorizedError } from '../platform/http/errors.js';

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

export async function authenticate(sql: SqlHandle, req: Request): Promise<Principal> {
  return authenticateBearer(sql, req.headers.authorization);
}

/** The principal of an `Authorization` value; 401 when it is missing, malformed, unknown or revoked. */
export async function authenticateBearer(sql: SqlHandle, authorization: string | undefined): Promise<Principal> {
  const token = bearerFromHeader(authorization);
  if (!token) throw new UnauthorizedError('Missing bearer API key');
  const principal = await authenticateKey(sql, token);
  if (!principal) throw new UnauthorizedError('Unknown or revoked API key');
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
