import { describe, expect, it } from 'vitest';
import { fingerprintOf, issueTitleFor, maskVariableParts } from '../../../src/workspace/issues/issue-fingerprint.js';

describe('fingerprint rule (docs/issues.md)', () => {
  it('masks ids and numbers that stand as tokens, keeps model names', () => {
    expect(maskVariableParts('GET /users/123/orders/9')).toBe('GET /users/{n}/orders/{n}');
    expect(maskVariableParts('  lookup   order 12345 ')).toBe('lookup order {n}');
    expect(maskVariableParts('fetch 3f2504e0-4f89-11d3-9a0c-0305e82c3301')).toBe('fetch {uuid}');
    expect(maskVariableParts('trace 4bf92f3577b34da6a3ce929d0e0e4736')).toBe('trace {hex}');
    expect(maskVariableParts('chat gpt-4o')).toBe('chat gpt-4o');
    expect(maskVariableParts('claude-3.5-sonnet?page=2')).toBe('claude-3.5-sonnet?page={n}');
  });

  it('depends on error type, masked span name and tool — not on the message', () => {
    const base = { error_type: 'TimeoutError', span_name: 'GET /users/1', tool_name: 'users' };
    expect(fingerprintOf(base)).toMatch(/^[0-9a-f]{64}$/);
    expect(fingerprintOf({ ...base, span_name: 'GET /users/2' })).toBe(fingerprintOf(base));
    expect(fingerprintOf({ ...base, error_type: ' TimeoutError ' })).toBe(fingerprintOf(base));
    expect(fingerprintOf({ ...base, error_type: 'ValueError' })).not.toBe(fingerprintOf(base));
    expect(fingerprintOf({ ...base, tool_name: '' })).not.toBe(fingerprintOf(base));
    expect(fingerprintOf({ ...base, span_name: 'GET /orders/1' })).not.toBe(fingerprintOf(base));
    // The separator keeps parts from running into each other.
    expect(fingerprintOf({ error_type: 'a', span_name: 'bc', tool_name: '' })).not.toBe(fingerprintOf({ error_type: 'ab', span_name: 'c', tool_name: '' }));
  });

  it('titles name the error and the tool or span', () => {
    expect(issueTitleFor({ error_type: 'TimeoutError', span_name: 'execute_tool search', tool_name: 'search' })).toBe('TimeoutError in tool search');
    expect(issueTitleFor({ error_type: '', span_name: 'GET /users/7', tool_name: '' })).toBe('Error in GET /users/{n}');
    expect(issueTitleFor({ error_type: '', span_name: '', tool_name: '' })).toBe('Error in unnamed span');
  });
});
