import type { ProcessedTrace, TraceFailure } from '../trace-hooks.js';

/**
 * The hook payload (ProcessedTrace) as it leaves the compute pool: its tool calls and failures as
 * tuples (packed-tool-rows.ts says why: structured clone of many small objects is slow to read
 * back on the event loop — the payloads were ~3 ms per 1000 spans of it, the arrays of objects over
 * half of that). Span attributes stay as they are: they are the listeners' own free-form values.
 */
type ToolCall = ProcessedTrace['toolCalls'][number];
type PackedToolCall = [span_id: string, name: string, is_error: boolean, duration_ms: number, input: string, output: string];
type PackedFailure = [span_id: string, span_name: string, error_type: string, message: string, tool_name: string, timestamp: string];

export type PackedHook = Omit<ProcessedTrace, 'toolCalls' | 'failures'> & { toolCalls: PackedToolCall[]; failures: PackedFailure[] };

export function packHook(hook: ProcessedTrace): PackedHook {
  return {
    ...hook,
    toolCalls: hook.toolCalls.map((c): PackedToolCall => [c.span_id, c.name, c.is_error, c.duration_ms, c.input, c.output]),
    failures: hook.failures.map((f): PackedFailure => [f.span_id, f.span_name, f.error_type, f.message, f.tool_name, f.timestamp]),
  };
}

export function unpackHook(packed: PackedHook): ProcessedTrace {
  return {
    ...packed,
    toolCalls: packed.toolCalls.map((c): ToolCall => ({ span_id: c[0], name: c[1], is_error: c[2], duration_ms: c[3], input: c[4], output: c[5] })),
    failures: packed.failures.map((f): TraceFailure => ({ span_id: f[0], span_name: f[1], error_type: f[2], message: f[3], tool_name: f[4], timestamp: f[5] })),
  };
}
