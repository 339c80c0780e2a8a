/**
 * How the per-span event tables (generation.completed, tool.called, span.errored) store their ids
 * since ClickHouse migration 009, and how their text is read and compared. Everything
 * else — spans, traces, trace.processed, the API — keeps the text.
 *
 *  - trace_id `UUID`: ingestion writes the canonical text of a v5 UUID (lower-case, dashed;
 *    src/spans/trace-id.ts), which is exactly what `toString` prints back.
 *  - span_id `UInt64`: ingestion accepts only 16 lower-case hex characters (span-validation.ts), the
 *    8 bytes a UInt64 holds; `lower(leftPad(hex(span_id), 16, '0'))` prints them back (hex() drops
 *    leading zero bytes and writes upper case).
 *
 * The mapping from stored value to text is one-to-one, so equality, IN and distinct counts work on
 * the stored values; only ordering differs (a UUID compares by its halves, not as its text), so
 * ordered answers and range comparisons use the text.
 *
 * A text value compared with a column is converted once, in code, never the column per row: a
 * value that is the canonical text of an id becomes that id; any other text is no stored id's text,
 * so it equals no row (the comparison is decided without reading the column).
 */

import { UUID_PATTERN } from '../../uuid.js';

/** Which stored form an id column has. */
export type StoredId = 'uuid' | 'hex64';

/** The SQL of an id column's text, for a column reference already checked or written by code. */
export function storedIdText(stored: StoredId, columnSql: string): string {
  return stored === 'uuid' ? `toString(${columnSql})` : `lower(leftPad(hex(${columnSql}), 16, '0'))`;
}

// Canonical text only (lower case): UUID_PATTERN matched case-sensitively.
const CANONICAL_UUID = new RegExp(UUID_PATTERN);
const CANONICAL_HEX64 = /^[0-9a-f]{16}$/;

/**
 * A span id as the per-span event tables store it (UInt64: the 8 bytes its 16 hex characters spell),
 * as decimal text — what the writer sends (a JSON string the engine reads into a UInt64 exactly; a
 * JS number is not exact above 2^53) and what a filter binds.
 */
export const storedSpanId = (hex: string): string => BigInt(`0x${hex}`).toString();

/**
 * The bound value equal to the stored id whose text is `text`, with its ClickHouse type; null when
 * no stored id has that text (upper case, another length, not an id at all).
 */
export function storedIdValue(stored: StoredId, text: string): { type: 'UUID' | 'UInt64'; value: string } | null {
  if (stored === 'uuid') return CANONICAL_UUID.test(text) ? { type: 'UUID', value: text } : null;
  return CANONICAL_HEX64.test(text) ? { type: 'UInt64', value: storedSpanId(text) } : null;
}
