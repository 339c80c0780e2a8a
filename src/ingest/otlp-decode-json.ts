import {
  OtlpDecodeError,
  type AttributeValue,
  type Attributes,
  type DecodedEvent,
  type DecodedExport,
  type DecodedLink,
  type DecodedSpan,
} from './otlp-types.js';

/**
 * Decodes an OTLP/JSON ExportTraceServiceRequest (OTLP specification, "JSON Protobuf Encoding"):
 * trace and span ids are hex strings (not base64), enums may be integers or their names, 64-bit
 * integers may be strings or numbers, and keys are lowerCamelCase — the original snake_case
 * field names are accepted too, as the protobuf JSON mapping requires of parsers.
 */

type Json = Record<string, unknown>;

/**
 * 64-bit fields given as bare JSON numbers lose digits in JSON.parse (a 19-digit epoch-ns value
 * is past 2^53). Before parsing, such integer literals of the known 64-bit keys are quoted so they
 * reach us as exact strings. Only a key preceded by `{` or `,` is a real key: inside a JSON string
 * a quote is always escaped, so key-like text in values is never touched.
 */
const BIG_INT_FIELD =
  /([{,]\s*"(?:startTimeUnixNano|endTimeUnixNano|timeUnixNano|start_time_unix_nano|end_time_unix_nano|time_unix_nano|intValue|int_value)"\s*:\s*)(-?\d{16,})(?=\s*[,}])/g;

export function parseOtlpJsonText(text: string): unknown {
  const protectedText = text.replace(BIG_INT_FIELD, '$1"$2"');
  try {
    return JSON.parse(protectedText);
  } catch (err) {
    throw new OtlpDecodeError(`Invalid JSON: ${(err as Error).message}`);
  }
}

function field(obj: Json, camel: string, snake: string): unknown {
  const v = obj[camel];
  return v === undefined ? obj[snake] : v;
}

function list(value: unknown, where: string): Json[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new OtlpDecodeError(`${where} must be an array`);
  return value as Json[];
}

function obj(value: unknown): Json {
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : {};
}

function str(value: unknown): string {
  return typeof value === 'string' ? value : value === undefined || value === null ? '' : String(value);
}

/** A uint64 nanosecond time given as a string or number, as an exact decimal string ('' when malformed). */
function nanos(value: unknown): string {
  if (value === undefined || value === null || value === '') return '0';
  if (typeof value === 'string') return /^\d+$/.test(value) ? value.replace(/^0+(?=\d)/, '') : '';
  if (typeof value === 'number' && Number.isInteger(value) && value >= 0) {
    return Number.isSafeInteger(value) ? String(value) : BigInt(value).toString();
  }
  return '';
}

const HEX = /^[0-9a-fA-F]*$/;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/**
 * An id as lowercase hex. OTLP/JSON says hex; some clients follow the generic protobuf JSON mapping
 * and send base64, which is recognised when its decoded length is the id's byte length.
 */
function id(value: unknown, bytes: number): string {
  const s = str(value);
  if (s === '') return '';
  if (s.length === bytes * 2 && HEX.test(s)) return s.toLowerCase();
  if (s.length === Math.ceil(bytes / 3) * 4 && BASE64.test(s)) {
    const decoded = Buffer.from(s, 'base64');
    if (decoded.length === bytes) return decoded.toString('hex');
  }
  // Left as given (lower-cased); validation names the problem.
  return s.toLowerCase();
}

const SPAN_KINDS: Record<string, number> = {
  SPAN_KIND_UNSPECIFIED: 0,
  SPAN_KIND_INTERNAL: 1,
  SPAN_KIND_SERVER: 2,
  SPAN_KIND_CLIENT: 3,
  SPAN_KIND_PRODUCER: 4,
  SPAN_KIND_CONSUMER: 5,
};
const STATUS_CODES: Record<string, number> = { STATUS_CODE_UNSET: 0, STATUS_CODE_OK: 1, STATUS_CODE_ERROR: 2 };

function enumValue(value: unknown, names: Record<string, number>): number {
  if (typeof value === 'number' && Number.isInteger(value)) return value;
  if (typeof value === 'string') {
    if (value in names) return names[value];
    if (/^\d+$/.test(value)) return Number(value);
  }
  return 0;
}

function int64Value(value: unknown): number | string {
  if (typeof value === 'number') return value;
  const s = str(value);
  if (!/^-?\d+$/.test(s)) return s;
  const n = Number(s);
  return Number.isSafeInteger(n) ? n : s.replace(/^(-?)0+(?=\d)/, '$1');
}

function anyValue(raw: unknown): AttributeValue {
  const v = obj(raw);
  let x: unknown;
  if ((x = field(v, 'stringValue', 'string_value')) !== undefined) return str(x);
  if ((x = field(v, 'boolValue', 'bool_value')) !== undefined) return x === true || x === 'true';
  if ((x = field(v, 'intValue', 'int_value')) !== undefined) return int64Value(x);
  if ((x = field(v, 'doubleValue', 'double_value')) !== undefined) {
    const n = typeof x === 'number' ? x : Number(x);
    return Number.isFinite(n) ? n : str(x);
  }
  if ((x = field(v, 'arrayValue', 'array_value')) !== undefined) return list(obj(x).values, 'arrayValue.values').map(anyValue);
  if ((x = field(v, 'kvlistValue', 'kvlist_value')) !== undefined) return keyValues(obj(x).values);
  if ((x = field(v, 'bytesValue', 'bytes_value')) !== undefined) return str(x);
  return null;
}

function keyValues(raw: unknown): Attributes {
  const out: Attributes = {};
  for (const kv of list(raw, 'attributes')) out[str(kv.key)] = anyValue(kv.value);
  return out;
}

function span(s: Json): DecodedSpan {
  const events: DecodedEvent[] = list(s.events, 'events').map((e) => ({
    timeNs: nanos(field(e, 'timeUnixNano', 'time_unix_nano')),
    name: str(e.name),
    attributes: keyValues(e.attributes),
  }));
  const links: DecodedLink[] = list(s.links, 'links').map((l) => ({
    traceId: id(field(l, 'traceId', 'trace_id'), 16),
    spanId: id(field(l, 'spanId', 'span_id'), 8),
    attributes: keyValues(l.attributes),
  }));
  const status = obj(s.status);
  return {
    traceId: id(field(s, 'traceId', 'trace_id'), 16),
    spanId: id(field(s, 'spanId', 'span_id'), 8),
    parentSpanId: id(field(s, 'parentSpanId', 'parent_span_id'), 8),
    traceState: str(field(s, 'traceState', 'trace_state')),
    name: str(s.name),
    kind: enumValue(s.kind, SPAN_KINDS),
    startNs: nanos(field(s, 'startTimeUnixNano', 'start_time_unix_nano')),
    endNs: nanos(field(s, 'endTimeUnixNano', 'end_time_unix_nano')),
    attributes: keyValues(s.attributes),
    events,
    links,
    statusCode: enumValue(status.code, STATUS_CODES),
    statusMessage: str(status.message),
  };
}

export function decodeJsonExport(text: string): DecodedExport {
  const root = parseOtlpJsonText(text);
  if (!root || typeof root !== 'object' || Array.isArray(root)) {
    throw new OtlpDecodeError('Invalid OTLP/JSON: the body must be an ExportTraceServiceRequest object');
  }
  return {
    resourceSpans: list(field(root as Json, 'resourceSpans', 'resource_spans'), 'resourceSpans').map((rs) => ({
      resource: keyValues(obj(rs.resource).attributes),
      scopes: list(field(rs, 'scopeSpans', 'scope_spans'), 'scopeSpans').map((ss) => {
        const scope = obj(ss.scope);
        return { scopeName: str(scope.name), scopeVersion: str(scope.version), spans: list(ss.spans, 'spans').map(span) };
      }),
    })),
  };
}
