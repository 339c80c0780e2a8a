import { createHash } from 'node:crypto';
import { lookoutTraceId } from '../../src/spans/trace-id.js';

/**
 * Ids for rows a test writes straight into the per-span event tables, which store trace_id as a
 * UUID and span_id as a UInt64 (clickhouse/009): the ids ingestion writes, derived from a readable
 * label so a test can still name its rows (`t3`, `g-at-start`).
 */

/** A Lookout trace id (the canonical text of a v5 UUID), the same for the same label. */
export const traceIdFor = (label: string): string => lookoutTraceId('test', label);

/** An OpenTelemetry span id (16 lower-case hex characters, never all zero), the same for the same label. */
export const spanIdFor = (label: string): string => {
  const hex = createHash('sha1').update(`span/${label}`).digest('hex').slice(0, 16);
  return hex === '0'.repeat(16) ? '0'.repeat(15) + '1' : hex;
};
