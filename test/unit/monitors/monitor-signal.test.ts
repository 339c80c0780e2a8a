import { describe, expect, it } from 'vitest';
import type { ProcessedTrace } from '../../../src/ingest/trace-hooks.js';
import { exceedsBaseline, recordBaseline, triggerThreshold } from '../../../src/workspace/monitors/monitor-baseline.js';
import { compileDefinition } from '../../../src/workspace/monitors/monitor-definition.js';
import { observe, parseClauses, signalMatches, type SignalDefinition } from '../../../src/workspace/monitors/monitor-signal.js';

function trace(overrides: Partial<ProcessedTrace> = {}): ProcessedTrace {
  return {
    tenantId: 't', projectId: 'p', traceId: 'tr', otelTraceId: 'o', timestamp: '2025-01-01T00:00:00.000Z', agentName: 'bot',
    hasError: false, failures: [], toolCalls: [], agentInput: null, agentOutput: null, spanAttributes: {}, ...overrides,
  };
}

const call = (name: string, is_error: boolean, output = '', span_id = `${name}-${Math.random()}`) => ({ span_id, name, is_error, duration_ms: 1, input: '', output });

describe('guidance clauses', () => {
  it('parses phrases, attribute clauses and quotes', () => {
    expect(parseClauses('Refund, "charged twice"; order.status=Cancelled\nuser.tier~GOLD\nretry.count?', 'seed_hint')).toEqual([
      { type: 'phrase', text: 'refund' },
      { type: 'phrase', text: 'charged twice' },
      { type: 'attribute', key: 'order.status', op: 'eq', value: 'cancelled' },
      { type: 'attribute', key: 'user.tier', op: 'contains', value: 'gold' },
      { type: 'attribute', key: 'retry.count', op: 'exists', value: '' },
    ]);
    expect(parseClauses('', 'x')).toEqual([]);
    expect(parseClauses(null, 'x')).toEqual([]);
    // A sentence with a question mark is a phrase, not an attribute clause.
    expect(parseClauses('why was I charged?', 'x')).toEqual([{ type: 'phrase', text: 'why was i charged?' }]);
  });

  it('refuses malformed clauses naming the field', () => {
    expect(() => parseClauses('a=', 'seed_hint')).toThrow("seed_hint: 'a=' needs a value after '='");
    expect(() => parseClauses('a?b', 'expected_behavior')).toThrow(/expected_behavior: 'a\?b'/);
    expect(() => parseClauses(Array(51).fill('x').join(','), 'seed_hint')).toThrow(/at most 50 clauses/);
  });
});

describe('signal matching', () => {
  const signal = (seed: string, expected = ''): SignalDefinition =>
    compileDefinition({ kind: 'signal', seed_hint: seed, expected_behavior: expected }) as SignalDefinition;

  it('matches phrases in agent input, output and attribute values, case-insensitively', () => {
    const s = signal('refund');
    expect(signalMatches(s, trace({ agentInput: 'I want a REFUND' }))).toBe(true);
    expect(signalMatches(s, trace({ agentOutput: 'Refunds take 3 days' }))).toBe(true);
    expect(signalMatches(s, trace({ spanAttributes: { s1: { 'tool.args': { reason: 'refund' } } } }))).toBe(true);
    expect(signalMatches(s, trace({ agentInput: 'hello', agentOutput: 'hi' }))).toBe(false);
  });

  it('matches attribute clauses by equality, containment and presence', () => {
    const attrs = { s1: { 'order.status': 'Cancelled', 'user.tier': 'platinum-gold', 'retry.count': 0 } };
    expect(signalMatches(signal('order.status=cancelled'), trace({ spanAttributes: attrs }))).toBe(true);
    expect(signalMatches(signal('order.status=cancel'), trace({ spanAttributes: attrs }))).toBe(false);
    expect(signalMatches(signal('user.tier~gold'), trace({ spanAttributes: attrs }))).toBe(true);
    expect(signalMatches(signal('retry.count?'), trace({ spanAttributes: attrs }))).toBe(true);
    expect(signalMatches(signal('missing.key?'), trace({ spanAttributes: attrs }))).toBe(false);
  });

  it('drops seed hits that show the expected behaviour in the agent output', () => {
    const s = signal('refund', 'refund issued');
    expect(signalMatches(s, trace({ agentInput: 'refund please', agentOutput: 'Your refund issued today' }))).toBe(false);
    expect(signalMatches(s, trace({ agentInput: 'refund please', agentOutput: 'I cannot help' }))).toBe(true);
  });

  it('without seed clauses the seed is a failed trace', () => {
    const s = signal('');
    expect(signalMatches(s, trace({ hasError: true }))).toBe(true);
    expect(signalMatches(s, trace({ hasError: false }))).toBe(false);
    expect(observe(s, trace({ hasError: true, failures: [{ span_id: 'f1', span_name: 'x', error_type: 'E', message: '', tool_name: '', timestamp: '' }] }))).toEqual({ calls: 1, matches: 1, matchedSpanIds: ['f1'] });
  });
});

describe('tool observation', () => {
  it('counts calls of the tool and those meeting the issue criteria', () => {
    const d = compileDefinition({ kind: 'tool', tool_name: 'search', issue_criteria: { output_patterns: ['No results'] } });
    const t = trace({
      toolCalls: [call('search', false, 'ok', 'a'), call('search', true, '', 'b'), call('search', false, 'Sorry: NO RESULTS found', 'c'), call('lookup', true, '', 'd')],
    });
    expect(observe(d, t)).toEqual({ calls: 3, matches: 2, matchedSpanIds: ['b', 'c'] });
    const outputOnly = compileDefinition({ kind: 'tool', tool_name: 'search', issue_criteria: { error: false, output_patterns: ['no results'] } });
    expect(observe(outputOnly, t)).toEqual({ calls: 3, matches: 1, matchedSpanIds: ['c'] });
    const text = compileDefinition({ kind: 'tool', tool_name: 'search', issue_criteria: 'timeout, no results' });
    expect(text).toEqual({ kind: 'tool', tool_name: 'search', error: true, output_patterns: ['timeout', 'no results'] });
    expect(observe(d, trace())).toEqual({ calls: 0, matches: 0, matchedSpanIds: [] });
  });
});

describe('baseline', () => {
  it('records the match rate and triggers only well above it', () => {
    const b = recordBaseline({ traces: 50, calls: 50, matches: 1 }, new Date('2025-01-01T00:00:00Z'));
    expect(b).toEqual({ traces: 50, calls: 50, matches: 1, rate: 0.02, recorded_at: '2025-01-01T00:00:00.000Z' });
    expect(triggerThreshold({ rate: 0 }, 50)).toBe(3);
    expect(triggerThreshold({ rate: 0.02 }, 50)).toBe(5);
    expect(triggerThreshold({ rate: 0.1 }, 100)).toBe(20);
    expect(exceedsBaseline({ rate: 0.02 }, { traces: 3, calls: 3, matches: 2 })).toBe(false);
    expect(exceedsBaseline({ rate: 0.02 }, { traces: 3, calls: 3, matches: 3 })).toBe(true);
    expect(exceedsBaseline({ rate: 0.5 }, { traces: 10, calls: 10, matches: 9 })).toBe(false);
    expect(recordBaseline({ traces: 50, calls: 0, matches: 0 }, new Date()).rate).toBe(0);
  });
});
