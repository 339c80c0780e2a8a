import path from 'node:path';
import grpc from '@grpc/grpc-js';
import protobuf from 'protobufjs';
import type { HttpError } from '../../platform/http/errors.js';
import { protoRoot } from './otlp-schema.js';

/**
 * How a failed OTLP/gRPC call answers (OTLP specification, "Failures" and "OTLP/gRPC Throttling"):
 * the gRPC status code tells the exporter whether it may retry, so each refusal the ingest path
 * raises (an HttpError, shared with OTLP/HTTP) maps to the code of the same meaning:
 *
 * - 400 → INVALID_ARGUMENT, 401 → UNAUTHENTICATED, 403 → PERMISSION_DENIED, 404 → NOT_FOUND:
 *   not retryable; the exporter drops the batch, as it does on the HTTP status.
 * - 413 → RESOURCE_EXHAUSTED without RetryInfo: not retryable (the same batch stays too large).
 * - 429 (memory budget full) and 503 (shutting down, storage failing) → UNAVAILABLE with a
 *   google.rpc.RetryInfo in the `grpc-status-details-bin` trailer, its delay the HTTP answer's
 *   Retry-After. The specification asks servers to signal back-pressure with UNAVAILABLE, which
 *   every exporter retries; RESOURCE_EXHAUSTED is retryable only for clients that read RetryInfo.
 * - anything else → INTERNAL.
 */

const { Metadata, status } = grpc;

export const STATUS_DETAILS_KEY = 'grpc-status-details-bin';
const RETRY_INFO_TYPE_URL = 'type.googleapis.com/google.rpc.RetryInfo';

export interface GrpcFailure {
  code: grpc.status;
  details: string;
  metadata: grpc.Metadata;
}

interface StatusTypes {
  Status: protobuf.Type;
  RetryInfo: protobuf.Type;
}

let types: StatusTypes | null = null;

/** google.rpc.Status and RetryInfo from proto/google/rpc (google/protobuf/* are protobufjs's bundled types). */
function statusTypes(): StatusTypes {
  if (types) return types;
  const rootDir = protoRoot();
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => {
    if (target.startsWith('google/protobuf/')) return null;
    return path.isAbsolute(target) ? target : path.join(rootDir, target);
  };
  root.loadSync(['google/rpc/status.proto', 'google/rpc/error_details.proto']);
  root.resolveAll();
  types = { Status: root.lookupType('google.rpc.Status'), RetryInfo: root.lookupType('google.rpc.RetryInfo') };
  return types;
}

function grpcCode(httpStatus: number): grpc.status {
  switch (httpStatus) {
    case 400:
    case 415:
      return status.INVALID_ARGUMENT;
    case 401:
      return status.UNAUTHENTICATED;
    case 403:
      return status.PERMISSION_DENIED;
    case 404:
      return status.NOT_FOUND;
    case 413:
      return status.RESOURCE_EXHAUSTED;
    case 429:
    case 503:
      return status.UNAVAILABLE;
    default:
      return status.INTERNAL;
  }
}

/** The google.rpc.Status carrying a RetryInfo of `seconds`, as the grpc-status-details-bin trailer holds it. */
export function encodeRetryStatus(code: grpc.status, message: string, seconds: number): Buffer {
  const { Status, RetryInfo } = statusTypes();
  const retryInfo = RetryInfo.encode(RetryInfo.fromObject({ retryDelay: { seconds } })).finish();
  // google.protobuf.Any is protobufjs's bundled definition, whose field names keep their snake case.
  const detail = { type_url: RETRY_INFO_TYPE_URL, value: retryInfo };
  return Buffer.from(Status.encode(Status.fromObject({ code, message, details: [detail] })).finish());
}

/** The gRPC answer to a refusal of the ingest path. */
export function grpcFailure(error: HttpError): GrpcFailure {
  const code = grpcCode(error.status);
  const details = code === status.INTERNAL ? 'Internal server error' : error.detail;
  const metadata = new Metadata();
  const retryAfter = Number(error.headers['Retry-After']);
  if (code === status.UNAVAILABLE && Number.isFinite(retryAfter) && retryAfter > 0) {
    metadata.set(STATUS_DETAILS_KEY, encodeRetryStatus(code, details, retryAfter));
  }
  return { code, details, metadata };
}

/** The RetryInfo delay (ms) of a grpc-status-details-bin trailer; null when it carries none. */
export function retryDelayMs(statusDetails: Buffer): number | null {
  const { Status, RetryInfo } = statusTypes();
  const decoded = Status.toObject(Status.decode(statusDetails), { longs: Number }) as { details?: { type_url: string; value: Uint8Array }[] };
  const detail = decoded.details?.find((d) => d.type_url === RETRY_INFO_TYPE_URL);
  if (!detail) return null;
  const info = RetryInfo.toObject(RetryInfo.decode(detail.value), { longs: Number }) as { retryDelay?: { seconds?: number; nanos?: number } };
  return (info.retryDelay?.seconds ?? 0) * 1000 + Math.round((info.retryDelay?.nanos ?? 0) / 1e6);
}
