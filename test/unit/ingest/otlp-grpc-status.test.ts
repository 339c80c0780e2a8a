import fs from 'node:fs';
import path from 'node:path';
import grpc from '@grpc/grpc-js';
import protobuf from 'protobufjs';
import { describe, expect, it } from 'vitest';
import { HttpError, NotFoundError, UnauthorizedError, ValidationError, ForbiddenError } from '../../../src/platform/http/errors.js';
import { OverloadedError } from '../../../src/ingest/write/ingest-budget.js';
import { TRACE_EXPORT_PATH } from '../../../src/ingest/otlp/otlp-grpc-server.js';
import { encodeRetryStatus, grpcFailure, retryDelayMs, STATUS_DETAILS_KEY } from '../../../src/ingest/otlp/otlp-grpc-status.js';
import { PayloadTooLargeError } from '../../../src/ingest/otlp/otlp-body.js';
import { protoRoot } from '../../../src/ingest/otlp/otlp-schema.js';

const name = (code: grpc.status) => grpc.status[code];

describe('OTLP/gRPC failures', () => {
  it('map each refusal of the ingest path to the code OTLP gives its meaning', () => {
    const cases: [HttpError, string][] = [
      [new ValidationError('bad'), 'INVALID_ARGUMENT'],
      [new UnauthorizedError(), 'UNAUTHENTICATED'],
      [new ForbiddenError(), 'PERMISSION_DENIED'],
      [new NotFoundError('Project not found'), 'NOT_FOUND'],
      [new PayloadTooLargeError(1024), 'RESOURCE_EXHAUSTED'],
      [new OverloadedError(429, 'budget full', 1, 'ingest_budget'), 'UNAVAILABLE'],
      [new OverloadedError(503, 'shutting down', 5, 'shutting_down'), 'UNAVAILABLE'],
      [new HttpError(500, 'internal_error', 'secret stack detail'), 'INTERNAL'],
    ];
    for (const [error, code] of cases) expect([error.status, name(grpcFailure(error).code)]).toEqual([error.status, code]);
    expect(grpcFailure(new HttpError(500, 'internal_error', 'secret stack detail')).details).toBe('Internal server error');
    expect(grpcFailure(new NotFoundError('Project not found')).details).toBe('Project not found');
  });

  it('carry a RetryInfo with the Retry-After delay only on the retryable overload answers', () => {
    const budget = grpcFailure(new OverloadedError(429, 'budget full', 1, 'ingest_budget'));
    expect(retryDelayMs(budget.metadata.get(STATUS_DETAILS_KEY)[0] as Buffer)).toBe(1000);
    const stopping = grpcFailure(new OverloadedError(503, 'shutting down', 5, 'shutting_down'));
    expect(retryDelayMs(stopping.metadata.get(STATUS_DETAILS_KEY)[0] as Buffer)).toBe(5000);
    for (const error of [new ValidationError('bad'), new PayloadTooLargeError(1024), new UnauthorizedError()]) {
      expect(grpcFailure(error).metadata.get(STATUS_DETAILS_KEY)).toEqual([]);
    }
  });

  it('encode the google.rpc.Status with its RetryInfo as the protobuf wire format has it', () => {
    // Written out by hand from the wire format, not by the encoder under test: Status{code=14 (field 1
    // varint), message="x" (field 2), details=[Any{type_url (field 1), value=RetryInfo{retry_delay=
    // Duration{seconds=1}}}] (field 3)}.
    const typeUrl = Buffer.from('type.googleapis.com/google.rpc.RetryInfo');
    const duration = Buffer.from([0x08, 0x01]);
    const retryInfo = Buffer.concat([Buffer.from([0x0a, duration.length]), duration]);
    const any = Buffer.concat([Buffer.from([0x0a, typeUrl.length]), typeUrl, Buffer.from([0x12, retryInfo.length]), retryInfo]);
    const expected = Buffer.concat([Buffer.from([0x08, 14, 0x12, 1]), Buffer.from('x'), Buffer.from([0x1a, any.length]), any]);
    expect(encodeRetryStatus(grpc.status.UNAVAILABLE, 'x', 1).toString('hex')).toBe(expected.toString('hex'));
  });
});

describe('the OTLP/gRPC service path', () => {
  it('is the Export method of TraceService in the vendored trace_service.proto', () => {
    const file = path.join(protoRoot(), 'opentelemetry/proto/collector/trace/v1/trace_service.proto');
    const parsed = protobuf.parse(fs.readFileSync(file, 'utf8'));
    const service = parsed.root.lookupService('opentelemetry.proto.collector.trace.v1.TraceService');
    const method = service.methods.Export;
    expect([method.requestType, method.responseType]).toEqual(['ExportTraceServiceRequest', 'ExportTraceServiceResponse']);
    expect(TRACE_EXPORT_PATH).toBe(`/${service.fullName.slice(1)}/${method.name}`);
  });
});
