import { otlpSchema } from './otlp-schema.js';

/**
 * OTLP/HTTP answers (OTLP specification, "OTLP/HTTP Response"): a success carries an
 * ExportTraceServiceResponse in the request's own encoding, with `partial_success` only when
 * spans were rejected; a failure to a protobuf request carries a google.rpc.Status.
 */

export type OtlpEncoding = 'protobuf' | 'json';

export const OTLP_CONTENT_TYPES: Record<OtlpEncoding, string> = {
  protobuf: 'application/x-protobuf',
  json: 'application/json',
};

export interface PartialSuccess {
  rejectedSpans: number;
  errorMessage: string;
}

export function encodeExportResponse(encoding: OtlpEncoding, partial: PartialSuccess | null): Buffer {
  const hasPartial = partial !== null && (partial.rejectedSpans > 0 || partial.errorMessage !== '');
  if (encoding === 'json') {
    // Protobuf JSON mapping: int64 is written as a string.
    const body = hasPartial
      ? { partialSuccess: { rejectedSpans: String(partial.rejectedSpans), errorMessage: partial.errorMessage } }
      : {};
    return Buffer.from(JSON.stringify(body));
  }
  const type = otlpSchema().ExportTraceServiceResponse;
  const message = type.fromObject(
    hasPartial ? { partialSuccess: { rejectedSpans: partial.rejectedSpans, errorMessage: partial.errorMessage } } : {},
  );
  return Buffer.from(type.encode(message).finish());
}

/** google.rpc.Code values for the HTTP statuses the endpoint answers with. */
function rpcCode(httpStatus: number): number {
  switch (httpStatus) {
    case 400:
      return 3; // INVALID_ARGUMENT
    case 401:
      return 16; // UNAUTHENTICATED
    case 403:
      return 7; // PERMISSION_DENIED
    case 404:
      return 5; // NOT_FOUND
    case 413:
      return 8; // RESOURCE_EXHAUSTED
    case 415:
      return 3;
    case 429:
      return 8;
    case 503:
      return 14; // UNAVAILABLE
    default:
      return 13; // INTERNAL
  }
}

export function encodeErrorStatus(httpStatus: number, message: string): Buffer {
  const type = otlpSchema().Status;
  return Buffer.from(type.encode(type.fromObject({ code: rpcCode(httpStatus), message })).finish());
}

/** Reads a protobuf ExportTraceServiceResponse back (used by tests and the demo to check answers). */
export function decodeExportResponse(body: Uint8Array): PartialSuccess | null {
  const type = otlpSchema().ExportTraceServiceResponse;
  const decoded = type.toObject(type.decode(body), { longs: Number }) as {
    partialSuccess?: { rejectedSpans?: number; errorMessage?: string };
  };
  if (!decoded.partialSuccess) return null;
  return { rejectedSpans: decoded.partialSuccess.rejectedSpans ?? 0, errorMessage: decoded.partialSuccess.errorMessage ?? '' };
}

export interface LogsPartialSuccess {
  rejectedLogRecords: number;
  errorMessage: string;
}

/** An ExportLogsServiceResponse (POST /v1/logs), `partial_success` only when records were rejected or there is a warning. */
export function encodeLogsExportResponse(encoding: OtlpEncoding, partial: LogsPartialSuccess): Buffer {
  const hasPartial = partial.rejectedLogRecords > 0 || partial.errorMessage !== '';
  if (encoding === 'json') {
    const body = hasPartial ? { partialSuccess: { rejectedLogRecords: String(partial.rejectedLogRecords), errorMessage: partial.errorMessage } } : {};
    return Buffer.from(JSON.stringify(body));
  }
  const type = otlpSchema().ExportLogsServiceResponse;
  const message = type.fromObject(hasPartial ? { partialSuccess: { rejectedLogRecords: partial.rejectedLogRecords, errorMessage: partial.errorMessage } } : {});
  return Buffer.from(type.encode(message).finish());
}

/** Reads a protobuf ExportLogsServiceResponse back (tests check answers with it). */
export function decodeLogsExportResponse(body: Uint8Array): LogsPartialSuccess | null {
  const type = otlpSchema().ExportLogsServiceResponse;
  const decoded = type.toObject(type.decode(body), { longs: Number }) as { partialSuccess?: { rejectedLogRecords?: number; errorMessage?: string } };
  if (!decoded.partialSuccess) return null;
  return { rejectedLogRecords: decoded.partialSuccess.rejectedLogRecords ?? 0, errorMessage: decoded.partialSuccess.errorMessage ?? '' };
}
