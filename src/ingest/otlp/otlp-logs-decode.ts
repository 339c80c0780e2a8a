import { otlpSchema } from './otlp-schema.js';
import * as pb from './otlp-decode-protobuf.js';
import * as js from './otlp-decode-json.js';
import { OtlpDecodeError, SpanDecodeProblem, type AttributeValue, type Attributes } from '../../spans/otlp-types.js';

/**
 * Decodes an ExportLogsServiceRequest (OTLP/HTTP `POST /v1/logs`, protobuf or OTLP/JSON) into an
 * encoding-neutral form, with the same value rules as the trace decoders (otlp-decode-protobuf.ts,
 * otlp-decode-json.ts): ids as lowercase hex, nanosecond times as exact decimal strings, AnyValue as
 * plain JSON values. A record that cannot be decoded carries `decodeProblem` and is rejected alone
 * (partial success); a body that is not an ExportLogsServiceRequest at all throws OtlpDecodeError.
 */

export interface DecodedLogRecord {
  /** time_unix_nano; '0' when the sender left it unset. */
  timeNs: string;
  observedNs: string;
  severityNumber: number;
  severityText: string;
  body: AttributeValue;
  attributes: Attributes;
  /** '' when the record carries no span context. */
  traceId: string;
  spanId: string;
  /** The record's event_name field ('' when unset). */
  eventName: string;
  decodeProblem?: string;
}

export interface DecodedScopeLogs {
  scopeName: string;
  scopeVersion: string;
  records: DecodedLogRecord[];
}

export interface DecodedResourceLogs {
  resource: Attributes;
  scopes: DecodedScopeLogs[];
}

export interface DecodedLogsExport {
  resourceLogs: DecodedResourceLogs[];
}

export function countLogRecords(decoded: DecodedLogsExport): number {
  let n = 0;
  for (const rl of decoded.resourceLogs) for (const sl of rl.scopes) n += sl.records.length;
  return n;
}

function problemOf(err: unknown): string {
  if (err instanceof SpanDecodeProblem) return err.message;
  throw err;
}

/**
 * The ExportLogsServiceRequest message objects protobufjs decodes from proto/, field for field of
 * what this file reads (the shared AnyValue, KeyValue and fixed64 shapes are the trace decoder's).
 * Unset fields are absent or null.
 */
interface PbLogRecord {
  timeUnixNano?: pb.LongLike | number | null;
  observedTimeUnixNano?: pb.LongLike | number | null;
  severityNumber?: number | null;
  severityText?: string | null;
  body?: pb.PbAnyValue | null;
  attributes?: pb.PbKeyValue[] | null;
  traceId?: Uint8Array | null;
  spanId?: Uint8Array | null;
  eventName?: string | null;
}
interface PbResourceLogs {
  resource?: { attributes?: pb.PbKeyValue[] | null } | null;
  scopeLogs?: { scope?: { name?: string | null; version?: string | null } | null; logRecords?: PbLogRecord[] | null }[] | null;
}
interface PbLogsExportRequest {
  resourceLogs?: PbResourceLogs[] | null;
}

function protobufRecord(r: PbLogRecord, groupProblem: string | null): DecodedLogRecord {
  const base: DecodedLogRecord = {
    timeNs: pb.unsignedToDecimal(r.timeUnixNano),
    observedNs: pb.unsignedToDecimal(r.observedTimeUnixNano),
    severityNumber: typeof r.severityNumber === 'number' ? r.severityNumber : 0,
    severityText: r.severityText ?? '',
    body: null,
    attributes: {},
    traceId: pb.hex(r.traceId),
    spanId: pb.hex(r.spanId),
    eventName: r.eventName ?? '',
  };
  if (groupProblem) return { ...base, decodeProblem: groupProblem };
  try {
    return { ...base, body: pb.anyValue(r.body, 'body', 0), attributes: pb.keyValues(r.attributes) };
  } catch (err) {
    return { ...base, decodeProblem: problemOf(err) };
  }
}

export function decodeProtobufLogs(body: Uint8Array): DecodedLogsExport {
  let message: PbLogsExportRequest;
  try {
    message = otlpSchema().ExportLogsServiceRequest.decode(body) as unknown as PbLogsExportRequest;
  } catch (err) {
    throw new OtlpDecodeError(`Invalid protobuf ExportLogsServiceRequest: ${(err as Error).message}`);
  }
  try {
    return {
      resourceLogs: (message.resourceLogs ?? []).map((rl) => {
        let resource: Attributes = {};
        let problem: string | null = null;
        try {
          resource = pb.keyValues(rl.resource?.attributes);
        } catch (err) {
          problem = `resource: ${problemOf(err)}`;
        }
        return {
          resource,
          scopes: (rl.scopeLogs ?? []).map((sl) => ({
            scopeName: sl.scope?.name ?? '',
            scopeVersion: sl.scope?.version ?? '',
            records: (sl.logRecords ?? []).map((r) => protobufRecord(r, problem)),
          })),
        };
      }),
    };
  } catch (err) {
    throw new OtlpDecodeError(`Undecodable protobuf ExportLogsServiceRequest: ${(err as Error).message}`);
  }
}

const SEVERITY_PREFIX = 'SEVERITY_NUMBER_';
const SEVERITIES: Record<string, number> = Object.fromEntries(
  ['UNSPECIFIED', 'TRACE', 'TRACE2', 'TRACE3', 'TRACE4', 'DEBUG', 'DEBUG2', 'DEBUG3', 'DEBUG4', 'INFO', 'INFO2', 'INFO3', 'INFO4', 'WARN', 'WARN2', 'WARN3', 'WARN4', 'ERROR', 'ERROR2', 'ERROR3', 'ERROR4', 'FATAL', 'FATAL2', 'FATAL3', 'FATAL4'].map(
    (name, i) => [`${SEVERITY_PREFIX}${name}`, i],
  ),
);

function jsonRecord(raw: unknown, groupProblem: string | null): DecodedLogRecord {
  const r = js.obj(raw);
  const base: DecodedLogRecord = {
    timeNs: js.nanos(js.field(r, 'timeUnixNano', 'time_unix_nano')),
    observedNs: js.nanos(js.field(r, 'observedTimeUnixNano', 'observed_time_unix_nano')),
    severityNumber: js.enumValue(js.field(r, 'severityNumber', 'severity_number'), SEVERITIES),
    severityText: '',
    body: null,
    attributes: {},
    traceId: js.id(js.field(r, 'traceId', 'trace_id'), 16),
    spanId: js.id(js.field(r, 'spanId', 'span_id'), 8),
    eventName: '',
  };
  if (!js.isObject(raw)) return { ...base, decodeProblem: `the log record must be an object, got ${raw === null ? 'null' : Array.isArray(raw) ? 'an array' : typeof raw}` };
  if (groupProblem) return { ...base, decodeProblem: groupProblem };
  try {
    return {
      ...base,
      severityText: js.str(js.field(r, 'severityText', 'severity_text'), 'severityText'),
      eventName: js.str(js.field(r, 'eventName', 'event_name'), 'eventName'),
      body: js.anyValue(r.body, 'body', 0),
      attributes: js.keyValues(r.attributes, 'attributes'),
    };
  } catch (err) {
    return { ...base, decodeProblem: problemOf(err) };
  }
}

export function decodeJsonLogs(text: string): DecodedLogsExport {
  const root = js.parseOtlpJsonText(text);
  try {
    if (!js.isObject(root)) throw new OtlpDecodeError('Invalid OTLP/JSON: the body must be an ExportLogsServiceRequest object');
    return {
      resourceLogs: js.containerList(js.field(root, 'resourceLogs', 'resource_logs'), 'resourceLogs').map((rl, i) => {
        if (!js.isObject(rl)) throw new OtlpDecodeError(`resourceLogs[${i}] must be an object`);
        const resource = js.groupProblem(() => js.keyValues(js.obj(rl.resource).attributes, 'attributes'), {}, 'resource');
        return {
          resource: resource.value,
          scopes: js.containerList(js.field(rl, 'scopeLogs', 'scope_logs'), `resourceLogs[${i}].scopeLogs`).map((sl, j) => {
            if (!js.isObject(sl)) throw new OtlpDecodeError(`resourceLogs[${i}].scopeLogs[${j}] must be an object`);
            const scope = js.obj(sl.scope);
            const names = js.groupProblem(() => ({ name: js.str(scope.name, 'name'), version: js.str(scope.version, 'version') }), { name: '', version: '' }, 'scope');
            const records = js.containerList(js.field(sl, 'logRecords', 'log_records'), `resourceLogs[${i}].scopeLogs[${j}].logRecords`);
            return {
              scopeName: names.value.name,
              scopeVersion: names.value.version,
              records: records.map((raw) => jsonRecord(raw, resource.problem ?? names.problem)),
            };
          }),
        };
      }),
    };
  } catch (err) {
    if (err instanceof OtlpDecodeError) throw err;
    throw new OtlpDecodeError(`Undecodable OTLP/JSON body: ${(err as Error).message}`);
  }
}
