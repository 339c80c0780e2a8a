import { createHash } from 'node:crypto';

/**
 * Lookout's trace `id`: a UUID derived from (project_id, otel_trace_id)
 * so every process computes the same id without coordination. Built like an RFC 9562 version-5
 * UUID: SHA-1 over a fixed namespace and the name `project_id/otel_trace_id`.
 */

/** Lookout's own namespace UUID for trace ids. Fixed forever: changing it would re-key every trace. */
const TRACE_NAMESPACE = Buffer.from('6f1c2b5e8a3d4f7b9c0e1d2a3b4c5d6e', 'hex');

export function lookoutTraceId(projectId: string, otelTraceId: string): string {
  const hash = createHash('sha1').update(TRACE_NAMESPACE).update(`${projectId}/${otelTraceId.toLowerCase()}`).digest();
  const b = hash.subarray(0, 16);
  b[6] = (b[6] & 0x0f) | 0x50; // version 5
  b[8] = (b[8] & 0x3f) | 0x80; // RFC 9562 variant
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const OTEL_TRACE_ID = /^[0-9a-f]{32}$/;

export function isTraceUuid(value: string): boolean {
  return UUID.test(value);
}

export function isOtelTraceId(value: string): boolean {
  return OTEL_TRACE_ID.test(value);
}

/** A span's `id` in the traces API: a UUID of (Lookout trace id, otel span id), stable across reads. */
export function lookoutSpanId(traceId: string, otelSpanId: string): string {
  return lookoutTraceId(traceId, otelSpanId);
}
