import crypto from 'node:crypto';
import type { CollectionType, EventValue } from './metric-store.js';

/**
 * What an event value may be, per collection_type (docs/metrics.md):
 * - BINARY: a pass/fail verdict — true/false, or 1/0; stored as a boolean.
 * - VALUE: a finite number (a score, a count, a duration).
 * - FLAG: a marker that the trace was flagged — true, or a non-empty reason string (up to 500
 *   characters). "Not flagged" is simply no event, so false is refused.
 * Returns the stored value, or the reason the value is refused.
 */
export function normalizeEventValue(collectionType: CollectionType, value: unknown): { ok: true; value: EventValue } | { ok: false; detail: string } {
  switch (collectionType) {
    case 'BINARY':
      if (typeof value === 'boolean') return { ok: true, value };
      if (value === 0 || value === 1) return { ok: true, value: value === 1 };
      return { ok: false, detail: 'value: a BINARY metric takes true, false, 1 or 0' };
    case 'VALUE':
      if (typeof value === 'number' && Number.isFinite(value)) return { ok: true, value };
      return { ok: false, detail: 'value: a VALUE metric takes a number' };
    case 'FLAG':
      if (value === true) return { ok: true, value };
      if (typeof value === 'string' && value.trim() !== '' && value.length <= 500) return { ok: true, value: value.trim() };
      return { ok: false, detail: 'value: a FLAG metric takes true or a non-empty reason string (up to 500 characters)' };
    default: {
      const never: never = collectionType;
      return never;
    }
  }
}

/**
 * Deterministic sampling for SYNTHETIC metrics: a trace is in the sample when a hash of
 * (metric id, trace id) falls below sampling_rate. The same trace always gets the same answer, so an
 * evaluator may ask first or simply post and let Lookout drop unsampled traces; the kept share
 * converges on sampling_rate.
 */
export function inSample(metricId: string, traceId: string, samplingRate: number | null): boolean {
  if (samplingRate === null || samplingRate >= 1) return true;
  if (samplingRate <= 0) return false;
  const digest = crypto.createHash('sha256').update(`${metricId}:${traceId}`).digest();
  return digest.readUInt32BE(0) / 0x1_0000_0000 < samplingRate;
}
