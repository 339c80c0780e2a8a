import type { Request } from 'express';
import type { SqlHandle } from '../platform/postgres/postgres.js';
import { authenticateKey, type Principal } from './tenancy-store.js';
import type { Scope } from './keys.js';
import { ForbiddenError, UnauthorizedError } from '../platform/http/errors.js';

/** What a route needs: `read` admits read and admin keys, `ingest` ingest and admin, `admin` only admin. */
export type ScopeNeed = 'read' | 'admin' | 'ingest';

export function bearerToken(req: Request): string | null {
  const header = req.headers.authorization;
  if (!header) return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match ? match[1] : null;
}

export async function authenticate(sql: SqlHandle, req: Request): Promise<Principal> {
  const token = bearerToken(req);
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
