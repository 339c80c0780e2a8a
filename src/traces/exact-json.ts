import { randomBytes } from 'node:crypto';

/**
 * JSON with exact big integers. The trace context bundle writes nanosecond times as JSON numbers
 * (in the context form start_time_ns and end_time_ns are numbers), and
 * a 19-digit epoch-nanosecond value is past 2^53: through a double it would be rounded. Such values
 * are wrapped in ExactInteger; stringify writes their digits verbatim.
 *
 * How: each ExactInteger is first serialized as a string token carrying a random per-call nonce,
 * then the quoted tokens are replaced by the bare digits. A caller's string cannot forge a token
 * without knowing the nonce.
 */
export class ExactInteger {
  constructor(readonly digits: string) {
    if (!/^-?\d+$/.test(digits)) throw new Error(`not an integer: ${digits}`);
  }
}

export function stringifyExact(value: unknown): string {
  const nonce = randomBytes(12).toString('hex');
  const prefix = `@exact-${nonce}:`;
  const text = JSON.stringify(value, (_key, v: unknown) => (v instanceof ExactInteger ? `${prefix}${v.digits}` : v));
  return text.replace(new RegExp(`"${prefix}(-?\\d+)"`, 'g'), '$1');
}
