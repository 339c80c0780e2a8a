import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';

/**
 * The OTLP trace and logs messages, loaded once with protobufjs from the .proto definitions in `proto/`
 * (see proto/README.md for why they live in the repo). protobufjs generates its decoder and
 * encoder from the schema at load time: no wire parsing is written by hand here.
 */
export interface OtlpSchema {
  ExportTraceServiceRequest: protobuf.Type;
  ExportTraceServiceResponse: protobuf.Type;
  ExportLogsServiceRequest: protobuf.Type;
  ExportLogsServiceResponse: protobuf.Type;
  /** google.rpc.Status: the body of a failed protobuf request. */
  Status: protobuf.Type;
}

const SERVICE_FILE = 'opentelemetry/proto/collector/trace/v1/trace_service.proto';
const LOGS_SERVICE_FILE = 'opentelemetry/proto/collector/logs/v1/logs_service.proto';
const STATUS_FILE = 'google/rpc/status.proto';

/** The `proto/` folder: found by walking up from this module, so it works from src/ (tsx) and dist/src/ (build). */
export function protoRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = path.join(dir, 'proto');
    if (fs.existsSync(path.join(candidate, SERVICE_FILE))) return candidate;
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`OTLP schema not found: no proto/${SERVICE_FILE} above ${fileURLToPath(import.meta.url)}`);
    dir = parent;
  }
}

let cached: OtlpSchema | null = null;

export function otlpSchema(): OtlpSchema {
  if (cached) return cached;
  const rootDir = protoRoot();
  const root = new protobuf.Root();
  // Imports are written relative to the include root (`opentelemetry/proto/...`).
  // google/protobuf/* are protobufjs's bundled common types: they need no file.
  root.resolvePath = (_origin, target) => {
    if (target.startsWith('google/protobuf/')) return null;
    return path.isAbsolute(target) ? target : path.join(rootDir, target);
  };
  root.loadSync([SERVICE_FILE, LOGS_SERVICE_FILE, STATUS_FILE]);
  root.resolveAll();
  cached = {
    ExportTraceServiceRequest: root.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest'),
    ExportTraceServiceResponse: root.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse'),
    ExportLogsServiceRequest: root.lookupType('opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest'),
    ExportLogsServiceResponse: root.lookupType('opentelemetry.proto.collector.logs.v1.ExportLogsServiceResponse'),
    Status: root.lookupType('google.rpc.Status'),
  };
  return cached;
}
