import type { ToolCalledRow } from '../../spans/event-rows.js';

/**
 * tool.called rows as tuples where they cross between threads (the rows a request wrote go to the
 * event loop with its answer, and back to the compute pool when the trace settles). Structured
 * clone of plain objects is slow to read back, on the event loop above all; tuples clone an order
 * of magnitude faster, and rebuilding the objects is a fixed-shape literal each.
 */
export type PackedToolRow = [
  tenant_id: string,
  project_id: string,
  timestamp: string,
  actor: string,
  surface: string,
  user_id: string,
  api_key_id: string,
  trace_id: string,
  span_id: string,
  tool: string,
  agent_name: string,
  duration_ms: number,
  output_tokens: number,
  error: number,
];

/** The span a packed row belongs to (the rows are kept by span id). */
export const packedToolSpanId = (p: PackedToolRow): string => p[8];

export function packToolRows(rows: Iterable<ToolCalledRow>): PackedToolRow[] {
  const packed: PackedToolRow[] = [];
  for (const r of rows) {
    packed.push([r.tenant_id, r.project_id, r.timestamp, r.actor, r.surface, r.user_id, r.api_key_id, r.trace_id, r.span_id, r.tool, r.agent_name, r.duration_ms, r.output_tokens, r.error]);
  }
  return packed;
}

export function unpackToolRows(packed: readonly PackedToolRow[]): ToolCalledRow[] {
  return packed.map((p) => ({
    tenant_id: p[0],
    project_id: p[1],
    timestamp: p[2],
    actor: p[3],
    surface: p[4],
    user_id: p[5],
    api_key_id: p[6],
    trace_id: p[7],
    span_id: p[8],
    tool: p[9],
    agent_name: p[10],
    duration_ms: p[11],
    output_tokens: p[12],
    error: p[13],
  }));
}
