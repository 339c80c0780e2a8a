import type { SpanEventRows } from './event-rows.js';

/**
 * Rows serialized for the insert where they are built (the compute pool), so the event loop never
 * runs JSON.stringify over a flush: a group commit of 50,000 spans encoded on the main thread was
 * a stall of several hundred milliseconds. Each JSONEachRow line travels with the key of its span
 * (tenant, project, trace, span), which is all the writer needs to skip duplicates and apply the
 * per-trace span limit.
 */

export interface EncodedRows {
  /** spanKey of the span each line belongs to. */
  keys: string[];
  /** One JSON object per row, without the newline. */
  lines: string[];
}

export interface EncodedSpanEventRows {
  spans: EncodedRows;
  generations: EncodedRows;
  tools: EncodedRows;
  errors: EncodedRows;
}

type Keyed = { tenant_id: string; project_id: string; trace_id: string; span_id: string };

export const traceKeyOf = (r: { tenant_id: string; project_id: string; trace_id: string }) => `${r.tenant_id}\u0000${r.project_id}\u0000${r.trace_id}`;
export const spanKey = (r: Keyed) => `${r.tenant_id}\u0000${r.project_id}\u0000${r.trace_id}\u0000${r.span_id}`;
/** The trace part of a spanKey. */
export const traceKeyOfSpanKey = (key: string) => key.slice(0, key.lastIndexOf('\u0000'));
/** The span id part of a spanKey. */
export const spanIdOfSpanKey = (key: string) => key.slice(key.lastIndexOf('\u0000') + 1);

function encode(rows: Keyed[]): EncodedRows {
  const keys = new Array<string>(rows.length);
  const lines = new Array<string>(rows.length);
  for (let i = 0; i < rows.length; i++) {
    keys[i] = spanKey(rows[i]);
    lines[i] = JSON.stringify(rows[i]);
  }
  return { keys, lines };
}

export function encodeSpanEventRows(rows: SpanEventRows): EncodedSpanEventRows {
  return { spans: encode(rows.spans), generations: encode(rows.generations), tools: encode(rows.tools), errors: encode(rows.errors) };
}

export const emptyEncodedRows = (): EncodedSpanEventRows => ({
  spans: { keys: [], lines: [] },
  generations: { keys: [], lines: [] },
  tools: { keys: [], lines: [] },
  errors: { keys: [], lines: [] },
});
