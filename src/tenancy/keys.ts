import crypto from 'node:crypto';
import { SCOPES, type Scope } from './tenancy-shapes.js';

/** A new random API key: `lk_` then 32 random bytes in base64url. Shown once, stored only as its hash. */
export function generateApiKey(): string {
  return `lk_${crypto.randomBytes(32).toString('base64url')}`;
}

export function hashApiKey(key: string): string {
  return crypto.createHash('sha256').update(key, 'utf8').digest('hex');
}

export { SCOPES, type Scope };
