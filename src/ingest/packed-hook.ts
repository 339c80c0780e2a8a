import type { ProcessedTrace, TraceFailure } from '../trace-hooks.js';

/**
 * The hook payload (ProcessedTrace) as it leaves the compute pool: its tool calls and failures as
 * tuples (packed-tool-rows.ts says why: structured clone of many small objects is slow to read
 * back on the event loop — the payloads were ~3 ms per 1000 spans of it, the arrays of objects over
 * half of that), and its span attributes as the JSON text of that object (settle-records.ts
 * spanAttributesJson), built on the pool without parsing an attribute.
 *
 * Only monitors with attribute or phrase signals read span attributes, so the text is parsed when a
 * listener first reads `spanAttributes`, once, and never for traces no such listener looks at:
 * cloning every span's attributes as objects cost both threads more than the text does
 * (bench/README.md, issue 15), and parsing the text costs about what reading the clone did.
 * Listeners see the same object either way.
 */
type ToolCall = ProcessedTrace['toolCalls'][number];
type PackedToolCall = [span_id: string, name: string, is_error: boolean, duration_ms: number, input: string, output: string];
type PackedFailure = [span_id: string, span_name: string, error_type: string, message: string, tool_name: string, timestamp: string];

export type PackedHook = Omit<ProcessedTrace, 'toolCalls' | 'failures' | 'spanAttributes'> & {
  toolCalls: PackedToolCall[];
  failures: PackedFailure[];
  /** JSON text of ProcessedTrace.spanAttributes. */
  spanAttributes: string;
};

export function packHook(hook: Omit<ProcessedTrace, 'spanAttributes'>, spanAttributesJson: string): PackedHook {
  return {
    ...hook,
    toolCalls: hook.toolCalls.map((c): PackedToolCall => [c.span_id, c.name, c.is_error, c.duration_ms, c.input, c.output]),
    failures: hook.failures.map((f): PackedFailure => [f.span_id, f.span_name, f.error_type, f.message, f.tool_name, f.timestamp]),
    spanAttributes: spanAttributesJson,
  };
}

export function unpackHook(packed: PackedHook): ProcessedTrace {
  const { spanAttributes: attributesJson, ...rest } = packed;
  let attributes: ProcessedTrace['spanAttributes'] | undefined;
  const hook = {
    ...rest,
    toolCalls: packed.toolCalls.map((c): ToolCall => ({ span_id: c[0], name: c[1], is_error: c[2], duration_ms: c[3], input: c[4], output: c[5] })),
    failures: packed.failures.map((f): TraceFailure => ({ span_id: f[0], span_name: f[1], error_type: f[2], message: f[3], tool_name: f[4], timestamp: f[5] })),
  } as ProcessedTrace;
  // An own enumerable property like any other (spread, JSON and deep equality see the object).
  Object.defineProperty(hook, 'spanAttributes', {
    enumerable: true,
    configurable: true,
    get: () => (attributes ??= JSON.parse(attributesJson) as ProcessedTrace['spanAttributes']),
    set: (value: ProcessedTrace['spanAttributes']) => {
      attributes = value;
    },
  });
  return hook;
}
