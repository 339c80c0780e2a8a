import { describe, expect, it } from 'vitest';
import { ExactInteger, stringifyExact } from '../../../src/traces/exact-json.js';

describe('exact JSON integers', () => {
  it('writes 19-digit integers digit for digit', () => {
    const text = stringifyExact({ start_time_ns: new ExactInteger('1700000000123456789'), n: 1, s: 'x' });
    expect(text).toBe('{"start_time_ns":1700000000123456789,"n":1,"s":"x"}');
    // A double would have rounded it.
    expect(String(Number('1700000000123456789'))).not.toBe('1700000000123456789');
  });

  it('leaves look-alike strings alone', () => {
    const text = stringifyExact({ a: '@exact-00:123', b: [new ExactInteger('18446744073709551615')] });
    expect(JSON.parse(text.replace('18446744073709551615', '0'))).toEqual({ a: '@exact-00:123', b: [0] });
    expect(text).toContain('[18446744073709551615]');
  });

  it('rejects non-integers', () => {
    expect(() => new ExactInteger('1.5')).toThrow();
  });
});
