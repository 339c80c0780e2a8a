import { describe, expect, it } from 'vitest';
import { packHook, unpackHook } from '../../../src/ingest/settle/packed-hook.js';
import type { ProcessedTrace } from '../../../src/ingest/trace-hooks.js';

/** The hook payload crosses from the pool packed: listeners must get back exactly what was built. */
describe('packed hook payload', () => {
  it('round-trips tool calls, failures and everything else through structured clone', () => {
    const hook: ProcessedTrace = {
      tenantId: 't', projectId: 'p', traceId: 'tr', otelTraceId: 'o', timestamp: '2026-11-24T09:00:00.000Z', agentName: 'support',
      hasError: true,
      failures: [{ span_id: 's2', span_name: 'execute_tool lookup', error_type: 'TimeoutError', message: 'upstream timed out', tool_name: 'lookup', timestamp: '2026-11-24T09:00:01.000Z' }],
      toolCalls: [
        { span_id: 's2', name: 'lookup', is_error: true, duration_ms: 850.5, input: '{"id":1}', output: '' },
        { span_id: 's3', name: 'reply', is_error: false, duration_ms: 0, input: '', output: 'ok' },
      ],
      agentInput: 'Where is my order?', agentOutput: null,
      spanAttributes: { s1: { 'gen_ai.agent.name': 'support', n: 3, nested: { a: [1, 'b'] } } },
    };
    const back = unpackHook(structuredClone(packHook(hook)));
    expect(back).toEqual(hook);
    expect(back.toolCalls.map((c) => Object.keys(c))).toEqual(hook.toolCalls.map((c) => Object.keys(c)));
    expect(Object.keys(back.failures[0])).toEqual(Object.keys(hook.failures[0]));
  });
});
