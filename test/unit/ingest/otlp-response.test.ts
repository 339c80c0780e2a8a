import { describe, expect, it } from 'vitest';
import { ProtobufTraceSerializer, JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import { decodeExportResponse, encodeErrorStatus, encodeExportResponse } from '../../../src/ingest/otlp/otlp-response.js';
import { otlpSchema } from '../../../src/ingest/otlp/otlp-schema.js';

describe('ExportTraceServiceResponse encoding', () => {
  it('is empty on full success', () => {
    expect(encodeExportResponse('protobuf', null)).toHaveLength(0);
    expect(encodeExportResponse('json', { rejectedSpans: 0, errorMessage: '' }).toString()).toBe('{}');
  });

  it('carries partial_success in protobuf, readable by the exporter itself', () => {
    const body = encodeExportResponse('protobuf', { rejectedSpans: 3, errorMessage: 'rejected 3 of 10 spans: x' });
    expect(decodeExportResponse(body)).toEqual({ rejectedSpans: 3, errorMessage: 'rejected 3 of 10 spans: x' });
    const seen = ProtobufTraceSerializer.deserializeResponse(body);
    expect(seen.partialSuccess?.errorMessage).toBe('rejected 3 of 10 spans: x');
    expect(Number(seen.partialSuccess?.rejectedSpans)).toBe(3);
  });

  it('carries partial_success in JSON with int64 as a string', () => {
    const body = encodeExportResponse('json', { rejectedSpans: 2, errorMessage: 'bad ids' });
    expect(JSON.parse(body.toString())).toEqual({ partialSuccess: { rejectedSpans: '2', errorMessage: 'bad ids' } });
    const seen = JsonTraceSerializer.deserializeResponse(body);
    expect(Number(seen.partialSuccess?.rejectedSpans)).toBe(2);
  });

  it('encodes failures of protobuf requests as google.rpc.Status', () => {
    const status = otlpSchema().Status;
    const decoded = status.toObject(status.decode(encodeErrorStatus(400, 'Invalid protobuf'))) as { code: number; message: string };
    expect(decoded).toEqual({ code: 3, message: 'Invalid protobuf' });
    expect((status.toObject(status.decode(encodeErrorStatus(503, 'busy'))) as { code: number }).code).toBe(14);
  });
});
