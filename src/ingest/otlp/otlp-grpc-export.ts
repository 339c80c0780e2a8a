import grpc from '@grpc/grpc-js';
import type { Logger } from 'pino';
import { authenticateBearer, requireScope } from '../../tenancy/auth.js';
import { HttpError } from '../../platform/http/errors.js';
import type { Metrics } from '../../platform/metrics/metrics.js';
import { storeUnavailable } from '../../platform/store-errors.js';
import type { Sql } from '../../platform/postgres/postgres.js';
import type { Principal } from '../../tenancy/tenancy-store.js';
import { PROJECT_HEADER } from '../ingest-service.js';
import { DECODED_BYTES_PER_BODY_BYTE, type Reservation } from '../write/ingest-budget.js';
import { grpcFailure, type GrpcFailure } from './otlp-grpc-status.js';
import { countBody, countRefusal } from './otlp-metrics.js';

/**
 * One OTLP/gRPC Export call, taken through the steps POST /v1/traces takes (otlp-router.ts): the
 * bearer key of the `authorization` metadata with `ingest` scope, a reservation on the ingest
 * memory budget, then the signal's own ingestion (IngestService, on the compute pool) with the
 * project of the `x-lookout-project` metadata or the key. Refusals are the HttpErrors of that path,
 * answered with their gRPC status (otlp-grpc-status.ts); partial_success is the same.
 *
 * The message arrives whole: grpc-js reads it and, for `grpc-encoding: gzip`, inflates it before
 * the handler runs, refusing one larger than OTLP_MAX_BYTES either way (RESOURCE_EXHAUSTED, as
 * grpc.max_receive_message_length). Admission then charges it as OTLP/HTTP charges a body whose
 * length it knows up front: the bytes and what they decode into, so a full budget refuses the call
 * before anything is decoded.
 *
 * The Prometheus ingest counters count a call as they count an HTTP request (otlp-metrics.ts): the
 * message's bytes, the refusal by its code, and (in `ingest`, which knows its signal) what it accepted.
 */

export interface ExportCallDeps {
  sql: Sql;
  logger: Logger;
  /** The ingest memory budget (IngestWriter.admit): throws 503 while stopping or storage fails. */
  admit(): Reservation;
  /** How long a key PostgreSQL verified still verifies while PostgreSQL is away (KEY_CACHE_SECONDS). */
  keyCacheSeconds: number;
  metrics: Metrics;
}

/** A signal's ingestion: the ExportXServiceRequest bytes in, what its response serializer encodes out. */
export type IngestExport<Response> = (principal: Principal, project: string | undefined, body: Buffer) => Promise<Response>;

/** The first value of a metadata key as text (grpc-js lowercases keys; `-bin` keys are not read here). */
function metadataText(metadata: grpc.Metadata, key: string): string | undefined {
  const value = metadata.get(key)[0];
  return typeof value === 'string' ? value : undefined;
}

export function exportHandler<Response>(method: string, deps: ExportCallDeps, ingest: IngestExport<Response>): grpc.handleUnaryCall<Buffer, Response> {
  // grpc-js ignores what a handler returns: the call runs as its own promise, which answers through callback.
  const handle = async (call: grpc.ServerUnaryCall<Buffer, Response>, callback: grpc.sendUnaryData<Response>): Promise<void> => {
    const started = Date.now();
    let reservation: Reservation | null = null;
    const done = (failure: GrpcFailure | null, error?: unknown) => {
      const code = failure?.code ?? grpc.status.OK;
      // The levels of the HTTP request log: refusals warn, server faults are errors.
      const level = code === grpc.status.INTERNAL ? 'error' : failure ? 'warn' : 'info';
      deps.logger[level]({ grpc: { method, code: grpc.status[code] }, responseTime: Date.now() - started, ...(error ? { err: error } : {}) }, 'OTLP/gRPC call completed');
    };
    try {
      const principal = await authenticateBearer(deps.sql, metadataText(call.metadata, 'authorization'), deps.keyCacheSeconds);
      requireScope(principal, 'ingest');
      reservation = deps.admit();
      reservation.reserve(call.request.length * (1 + DECODED_BYTES_PER_BODY_BYTE.protobuf));
      countBody(deps.metrics, call.request.length);
      const response = await ingest(principal, metadataText(call.metadata, PROJECT_HEADER), call.request);
      callback(null, response);
      done(null);
    } catch (error) {
      const known = error instanceof HttpError;
      if (!known) deps.metrics.countError(error);
      // A store that is not there is UNAVAILABLE (retryable), as HTTP answers it 503, never INTERNAL.
      const refusal = known ? error : (storeUnavailable(error) ?? new HttpError(500, 'internal_error', 'Internal server error'));
      countRefusal(deps.metrics, refusal);
      const failure = grpcFailure(refusal);
      callback(failure);
      done(failure, known ? undefined : error);
    } finally {
      reservation?.release();
    }
  };
  return (call, callback) => void handle(call, callback);
}
