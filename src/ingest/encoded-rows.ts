import type { SpanEventRows } from './event-rows.js';

/**
 * Rows serialized for the insert where they are built (the compute pool), as the insert body
 * itself: one JSONEachRow byte buffer per table, with the end offset of every line. The event
 * loop never runs JSON.stringify over a flush (a group commit of 50,000 spans encoded on the main
 * thread was a stall of several hundred milliseconds), and it no longer receives thousands of
 * strings per request either: a byte buffer crosses from the worker as one copy, the writer hands
 * it to the engine as it is (or the slices of the lines it keeps), and no string of the body is
 * ever built on the main thread. This file is the one place that knows the row format.
 *
 * Each line travels with the key of its span (tenant, project, trace, span), which is all the
 * writer needs to skip duplicates and apply the per-trace span limit.
 */

export interface EncodedRows {
  /** spanKey of the span each line belongs to. */
  keys: string[];
  /** The JSONEachRow body: one JSON object per line, each ending in '\n'. */
  body: Uint8Array;
  /** ends[i]: the byte offset just past line i's newline (line i starts at ends[i - 1], or 0). */
  ends: Uint32Array;
}

export interface EncodedSpanEventRows {
  spans: EncodedRows;
  generations: EncodedRows;
  tools: EncodedRows;
  errors: EncodedRows;
}

type Keyed = { tenant_id: string; project_id: string; trace_id: string; span_id: string };

export const traceKeyOf = (r: { tenant_id: string; project_id: string; trace_id: string }) => `${r.tenant_id}\u0000${r.project_id}\u0000${r.trace_id}`;
/** A span's key from its trace's key (traceKeyOf / traceKeyString: the same text). */
export const spanKeyIn = (traceKey: string, spanId: string) => `${traceKey}\u0000${spanId}`;
export const spanKey = (r: Keyed) => spanKeyIn(traceKeyOf(r), r.span_id);
/** The trace part of a spanKey. */
export const traceKeyOfSpanKey = (key: string) => key.slice(0, key.lastIndexOf('\u0000'));
/** The span id part of a spanKey. */
export const spanIdOfSpanKey = (key: string) => key.slice(key.lastIndexOf('\u0000') + 1);

const NEWLINE = 0x0a;

/** A lone-surrogate escape as JSON.stringify writes it, or an escaped backslash (consumed in pairs, so `\\ud800` text is left alone). */
const LONE_SURROGATE_ESCAPE = /\\(?:\\|u(d[89a-f][0-9a-f]{2}))/g;

/**
 * One JSONEachRow line of a row. A string holding a lone surrogate (an OTLP/JSON `\ud800` escape,
 * or one inside an attribute's JSON text) is written by JSON.stringify as that escape, which
 * ClickHouse refuses ("missing second part of surrogate pair"): the whole insert would fail, every
 * request of the flush with it, and the exporter would retry it forever. It becomes U+FFFD, as
 * any UTF-8 encoder writes it. JSON.stringify escapes only lone surrogates this way (pairs are
 * written as they are), so a line without `\ud` needs no second look.
 */
export function jsonLine(row: unknown): string {
  const line = JSON.stringify(row);
  return line.includes('\\ud') ? line.replace(LONE_SURROGATE_ESCAPE, (escape, surrogate) => (surrogate ? '\ufffd' : escape)) : line;
}

/**
 * The buffer lines are written into, kept by this thread between calls: the body leaves as an exact
 * copy anyway (below), so a fresh megabyte-sized scratch per table per request was only garbage
 * (external memory, which also hastens V8's collections). One that grew for an unusually large
 * request is let go afterwards rather than held by the thread for good.
 */
let scratch = Buffer.allocUnsafe(0);
const KEEP_SCRATCH_BYTES = 4 * 1024 * 1024;

/**
 * Each line is written straight into one growing byte buffer, which gives its end offset as it
 * goes: no joined string of the whole body, no second pass looking for line breaks (JSON escapes
 * newlines inside values, so a line is exactly its JSON text plus '\n').
 */
function encode(rows: Keyed[]): EncodedRows {
  const keys = new Array<string>(rows.length);
  const ends = new Uint32Array(rows.length);
  let body = scratch.byteLength >= rows.length * 1024 ? scratch : Buffer.allocUnsafe(rows.length * 1024);
  let at = 0;
  for (let i = 0; i < rows.length; i++) {
    keys[i] = spanKey(rows[i]);
    const line = jsonLine(rows[i]);
    // At most 3 bytes per UTF-16 unit (a surrogate pair is 4 bytes for 2 units), plus the newline.
    const most = line.length * 3 + 1;
    if (at + most > body.byteLength) {
      const grown = Buffer.allocUnsafe(Math.max(body.byteLength * 2, at + most));
      body.copy(grown, 0, 0, at);
      body = grown;
    }
    at += body.write(line, at, 'utf8');
    body[at++] = NEWLINE;
    ends[i] = at;
  }
  // An exact copy in a plain Uint8Array that owns its ArrayBuffer: a worker's answer clones the
  // whole ArrayBuffer behind a view, so the unused tail must not travel (nor stay alive in the
  // settle cache's line views); and it is what an answer arrives as, so inline and pooled runs agree.
  const owned = new Uint8Array(body.subarray(0, at));
  scratch = body.byteLength <= KEEP_SCRATCH_BYTES ? body : scratch;
  return { keys, body: owned, ends };
}

export function encodeSpanEventRows(rows: SpanEventRows): EncodedSpanEventRows {
  return { spans: encode(rows.spans), generations: encode(rows.generations), tools: encode(rows.tools), errors: encode(rows.errors) };
}

const empty = (): EncodedRows => ({ keys: [], body: new Uint8Array(0), ends: new Uint32Array(0) });

export const emptyEncodedRows = (): EncodedSpanEventRows => ({ spans: empty(), generations: empty(), tools: empty(), errors: empty() });

/** Line i of an encoded body (a view, newline included). */
export function lineOf(rows: EncodedRows, i: number): Uint8Array {
  return rows.body.subarray(i === 0 ? 0 : rows.ends[i - 1], rows.ends[i]);
}

/**
 * The parts of the body whose lines pass `keep`, as few views as possible: the whole body when
 * every line is kept (the common case: nothing to copy), else one view per run of kept lines.
 */
export function keptParts(rows: EncodedRows, keep: (i: number) => boolean): Uint8Array[] {
  const parts: Uint8Array[] = [];
  let runStart = -1;
  for (let i = 0; i <= rows.keys.length; i++) {
    const kept = i < rows.keys.length && keep(i);
    if (kept && runStart === -1) runStart = i;
    if (!kept && runStart !== -1) {
      parts.push(rows.body.subarray(runStart === 0 ? 0 : rows.ends[runStart - 1], rows.ends[i - 1]));
      runStart = -1;
    }
  }
  return parts;
}
