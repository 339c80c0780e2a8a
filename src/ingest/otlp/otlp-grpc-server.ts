import grpc from '@grpc/grpc-js';
import type { AppDeps } from '../../app/app-deps.js';
import type { ModuleListener } from '../../app/module.js';
import type { IngestService } from '../ingest-service.js';
import { exportHandler } from './otlp-grpc-export.js';
import { encodeExportResponse, encodeLogsExportResponse, type LogsPartialSuccess, type PartialSuccess } from './otlp-response.js';
import { countLogsExport, countRefusal, countSpansExport } from './otlp-metrics.js';
import { HttpError } from '../../platform/http/errors.js';

/**
 * OTLP/gRPC (OTLP specification, "OTLP/gRPC"): the collector services on a port of their own
 * (OTLP_GRPC_PORT, default 4317), served by @grpc/grpc-js in processes with the `ingest` role.
 *
 * Two services, TraceService and LogsService, each with its one Export method. The request
 * deserializer hands the Export*ServiceRequest bytes over as they came: they are decoded with the
 * vendored protos on the compute pool, as an OTLP/HTTP protobuf body is, not on the event loop. The
 * response serializer encodes the Export*ServiceResponse (partial_success only when something was
 * rejected) with the same protobufjs schema the HTTP answer uses.
 */

export const TRACE_EXPORT_PATH = '/opentelemetry.proto.collector.trace.v1.TraceService/Export';
export const LOGS_EXPORT_PATH = '/opentelemetry.proto.collector.logs.v1.LogsService/Export';
/** Signals Lookout does not take: answered UNIMPLEMENTED with a message that says so, as HTTP's 404 does. */
export const UNSUPPORTED_EXPORT_PATHS = {
  metrics: '/opentelemetry.proto.collector.metrics.v1.MetricsService/Export',
  profiles: '/opentelemetry.proto.collector.profiles.v1development.ProfilesService/Export',
} as const;

const passBytes = (bytes: Buffer) => bytes;

function unaryMethod<Response>(path: string, serialize: (response: Response) => Buffer): grpc.MethodDefinition<Buffer, Response> {
  return {
    path,
    requestStream: false,
    responseStream: false,
    requestSerialize: passBytes,
    requestDeserialize: passBytes,
    responseSerialize: serialize,
    // Only a client decodes answers; the server never does.
    responseDeserialize: () => {
      throw new Error(`${path}: responses are not decoded by the server`);
    },
  };
}

function grpcAddress(host: string, port: number): string {
  return `${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/** Listens for OTLP/gRPC on the configured host and port; null when OTLP_GRPC_PORT=0 turns it off. */
export async function startOtlpGrpcServer(deps: AppDeps, service: IngestService): Promise<ModuleListener | null> {
  const listen = deps.config.otlpGrpc;
  if (!listen) return null;
  const logger = deps.logger.child({ module: 'otlp-grpc' });
  const server = new grpc.Server({
    // OTLP_MAX_BYTES bounds a message as it bounds an HTTP body: before and after gzip inflation.
    'grpc.max_receive_message_length': deps.config.otlpMaxBytes,
  });
  const metrics = deps.metrics;
  const callDeps = { sql: deps.sql, logger, admit: () => service.admit(), keyCacheSeconds: deps.config.faults.keyCacheSeconds, metrics };

  server.addService(
    { Export: unaryMethod<PartialSuccess>(TRACE_EXPORT_PATH, (partial) => encodeExportResponse('protobuf', partial)) },
    {
      Export: exportHandler('TraceService/Export', callDeps, async (principal, project, body) => {
        const result = await service.ingest(principal, project, body, 'protobuf');
        countSpansExport(metrics, result);
        return { rejectedSpans: result.rejectedSpans, errorMessage: result.errorMessage };
      }),
    },
  );
  server.addService(
    { Export: unaryMethod<LogsPartialSuccess>(LOGS_EXPORT_PATH, (partial) => encodeLogsExportResponse('protobuf', partial)) },
    {
      Export: exportHandler('LogsService/Export', callDeps, async (principal, project, body) => {
        const result = await service.ingestLogs(principal, project, body, 'protobuf');
        countLogsExport(metrics, result);
        return { rejectedLogRecords: result.rejectedLogRecords, errorMessage: result.errorMessage };
      }),
    },
  );
  for (const [signal, path] of Object.entries(UNSUPPORTED_EXPORT_PATHS)) {
    server.addService({ Export: unaryMethod<Buffer>(path, passBytes) }, {
      Export: (_call: grpc.ServerUnaryCall<Buffer, Buffer>, callback: grpc.sendUnaryData<Buffer>) => {
        // Counted as HTTP counts its 404 for the same signal.
        countRefusal(metrics, new HttpError(404, 'not_found', `${signal} are not supported`));
        callback({ code: grpc.status.UNIMPLEMENTED, details: `Lookout accepts OpenTelemetry traces and logs only (TraceService/Export, LogsService/Export); ${signal} are not supported` });
      },
    });
  }

  const address = grpcAddress(listen.host, listen.port);
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(address, grpc.ServerCredentials.createInsecure(), (error, bound) => {
      if (error) reject(new Error(`OTLP/gRPC cannot listen on ${address} (OTLP_GRPC_HOST, OTLP_GRPC_PORT; 0 turns it off): ${error.message}`));
      else resolve(bound);
    });
  });
  logger.info({ address: grpcAddress(listen.host, port) }, 'OTLP/gRPC listening');

  return {
    name: 'otlp-grpc',
    port,
    close: (graceMs) =>
      new Promise<void>((resolve) => {
        // Stops accepting at once; calls in flight finish (and are flushed by the ingest stop after this).
        const cut = setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, graceMs);
        server.tryShutdown(() => {
          clearTimeout(cut);
          resolve();
        });
      }),
  };
}
