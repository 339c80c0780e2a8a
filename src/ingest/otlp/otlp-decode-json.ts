import {
  MAX_ANY_VALUE_DEPTH,
  OtlpDecodeError,
  SpanDecodeProblem,
  setAttribute,
  type AttributeValue,
  type Attributes,
  type DecodedEvent,
  type DecodedExport,
  type DecodedLink,
  type DecodedSpan,
} from '../../spans/otlp-types.js';
import { ensureHeapRoom, heapRoomBytes, utf8Text } from '../../platform/compute/heap-room.js';

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
  /([{,]\s*"(?:startTimeUnixNano|endTimeUnixNano|timeUnixNano|observedTimeUnixNano|start_time_unix_nano|end_time_unix_nano|time_unix_nano|observed_time_unix_nano|intValue|int_value)"\s*:\s*)(-?\d{16,})(?=\s*[,}])/g;

/**
 * The most heap that turning `bytes` of JSON into its parsed value can take in one native step
 * (platform/compute/heap-room.ts says why that must fit): the UTF-8 text and the copy that quotes
 * 64-bit integers, one byte per character (two when a character is outside Latin-1, whose UTF-8
 * lead byte is 0xC4 or above), the parsed value's string contents (at most the body again), and at
 * most 64 bytes per value — measured with --expose-gc, every value opens with `{`, `[`, `:` or `,`
 * and costs at most 53 bytes beside its characters (an empty object 32 per delimiter, an object
 * under a key never seen before 53, a number 8). Counting the delimiters costs a pass over the body
 * (~2 ms per MB), so it is taken only when the bound without it — every byte a delimiter — does
 * not fit anyway.
 */
const HEAP_BYTES_PER_VALUE = 64;

function jsonParseHeapBound(bytes: Uint8Array, delimitersAtMost: number, twoByte: boolean): number {
  return bytes.byteLength * (twoByte ? 4 : 2) + bytes.byteLength + delimitersAtMost * HEAP_BYTES_PER_VALUE;
}

/** OTLP/JSON bytes as text, once the heap is known to hold their parse (HeapRoomError if not). */
export function otlpJsonText(bytes: Uint8Array): string {
  if (jsonParseHeapBound(bytes, bytes.byteLength, true) > heapRoomBytes()) {
    let delimiters = 0;
    let twoByte = false;
    for (let i = 0; i < bytes.byteLength; i++) {
      const b = bytes[i];
      if (b === 0x7b || b === 0x5b || b === 0x3a || b === 0x2c) delimiters++;
      else if (b >= 0xc4) twoByte = true;
    }
    ensureHeapRoom(jsonParseHeapBound(bytes, delimiters, twoByte));
  }
  return utf8Text(bytes);
}

export function parseOtlpJsonText(text: string): unknown {
  const protectedText = text.replace(BIG_INT_FIELD, '$1"$2"');
  try {
    return JSON.parse(protectedText);
  } catch (err) {
    throw new OtlpDecodeError(`Invalid JSON: ${(err as Error).message}`);
  }
}

export function field(obj: Json, camel: string, snake: string): unknown {
  const v = obj[camel];
  return v === undefined ? obj[snake] : v;
}

export function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A container list (resourceSpans, scopeSpans): not an array means the body is not an export at all (400). */
export function containerList(value: unknown, where: string): unknown[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new OtlpDecodeError(`${where} must be an array`);
  return value;
}

/** A list inside a span, resource or scope: not an array rejects those spans only. */
function list(value: unknown, where: string): unknown[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new SpanDecodeProblem(`${where} must be an array`);
  return value;
}

export function obj(value: unknown): Json {
  return isObject(value) ? value : {};
}

/** A string field; null or absent is '' (the protobuf JSON mapping's default), numbers and booleans are taken as text. */
export function str(value: unknown, where = 'a string field'): string {
  if (typeof value === 'string') return value;
  if (value === undefined || value === null) return '';
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  throw new SpanDecodeProblem(`${where} must be a string`);
}

/** A uint64 nanosecond time given as a string or number, as an exact decimal string ('' when malformed). */
export function nanos(value: unknown): string {
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
export function id(value: unknown, bytes: number): string {
  // Anything but a string is left for validation to name (it never matches the hex pattern).
  const s = typeof value === 'string' ? value : value === undefined || value === null ? '' : typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint' ? String(value) : '(not a string)';
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

export function enumValue(value: unknown, names: Record<string, number>): number {
  if (typeof value === 'number' && Number.isInteger(value)) return value;
  if (typeof value === 'string') {
    if (Object.hasOwn(names, value)) return names[value];
    if (/^\d+$/.test(value)) return Number(value);
  }
  return 0;
}

function int64Value(value: unknown, where: string): number | string {
  if (typeof value === 'number') {
    if (Number.isInteger(value)) return value;
    throw new SpanDecodeProblem(`${where}: intValue ${value} is not an integer`);
  }
  if (typeof value !== 'string' || !/^-?\d{1,20}$/.test(value)) throw new SpanDecodeProblem(`${where}: intValue must be an integer or a decimal string`);
  const n = Number(value);
  return Number.isSafeInteger(n) ? n : value.replace(/^(-?)0+(?=\d)/, '$1');
}

const NON_FINITE = new Set(['NaN', 'Infinity', '-Infinity']);

function doubleValue(value: unknown, where: string): number | string {
  if (typeof value === 'number') return value;
  // The protobuf JSON mapping writes non-finite doubles as these strings; they are kept as text.
  if (typeof value === 'string' && NON_FINITE.has(value)) return value;
  const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : NaN;
  if (Number.isFinite(n)) return n;
  throw new SpanDecodeProblem(`${where}: doubleValue must be a number`);
}

function boolValue(value: unknown, where: string): boolean {
  if (typeof value === 'boolean') return value;
  if (value === 'true' || value === 'false') return value === 'true';
  throw new SpanDecodeProblem(`${where}: boolValue must be true or false`);
}

/**
 * An AnyValue. null or an empty object is the empty value; anything else of the wrong type is a
 * problem of the span. `depth` counts the arrayValue / kvlistValue levels above this value.
 */
export function anyValue(raw: unknown, where: string, depth: number): AttributeValue {
  if (raw === undefined || raw === null) return null;
  if (!isObject(raw)) throw new SpanDecodeProblem(`${where}: the value must be an AnyValue object`);
  let x: unknown;
  if ((x = field(raw, 'stringValue', 'string_value')) !== undefined) return str(x, `${where}: stringValue`);
  if ((x = field(raw, 'boolValue', 'bool_value')) !== undefined) return x === null ? false : boolValue(x, where);
  if ((x = field(raw, 'intValue', 'int_value')) !== undefined) return x === null ? 0 : int64Value(x, where);
  if ((x = field(raw, 'doubleValue', 'double_value')) !== undefined) return x === null ? 0 : doubleValue(x, where);
  if ((x = field(raw, 'arrayValue', 'array_value')) !== undefined) {
    if (depth >= MAX_ANY_VALUE_DEPTH) throw new SpanDecodeProblem(`${where}: arrayValue/kvlistValue nested deeper than ${MAX_ANY_VALUE_DEPTH} levels`);
    if (x !== null && !isObject(x)) throw new SpanDecodeProblem(`${where}: arrayValue must be an object`);
    return list(obj(x).values, `${where}: arrayValue.values`).map((v) => anyValue(v, where, depth + 1));
  }
  if ((x = field(raw, 'kvlistValue', 'kvlist_value')) !== undefined) {
    if (depth >= MAX_ANY_VALUE_DEPTH) throw new SpanDecodeProblem(`${where}: arrayValue/kvlistValue nested deeper than ${MAX_ANY_VALUE_DEPTH} levels`);
    if (x !== null && !isObject(x)) throw new SpanDecodeProblem(`${where}: kvlistValue must be an object`);
    return keyValues(obj(x).values, `${where}: kvlistValue.values`, depth + 1, where);
  }
  if ((x = field(raw, 'bytesValue', 'bytes_value')) !== undefined) return str(x, `${where}: bytesValue`);
  return null;
}

/** A KeyValue list; `attribute` names the top-level attribute a nested list belongs to, for messages. */
export function keyValues(raw: unknown, where: string, depth = 0, attribute?: string): Attributes {
  const out: Attributes = {};
  list(raw, where).forEach((kv, i) => {
    if (!isObject(kv)) throw new SpanDecodeProblem(`${where}[${i}] must be a KeyValue object, got ${kv === null ? 'null' : Array.isArray(kv) ? 'an array' : typeof kv}`);
    const key = str(kv.key, `${where}[${i}].key`);
    setAttribute(out, key, anyValue(kv.value, attribute ?? `attribute "${key.slice(0, 60)}"`, depth));
  });
  return out;
}

const EMPTY_ATTRIBUTES: Attributes = {};

function span(raw: unknown, resourceProblem: string | null): DecodedSpan {
  const s = obj(raw);
  const status = obj(s.status);
  const base: DecodedSpan = {
    traceId: id(field(s, 'traceId', 'trace_id'), 16),
    spanId: id(field(s, 'spanId', 'span_id'), 8),
    parentSpanId: id(field(s, 'parentSpanId', 'parent_span_id'), 8),
    traceState: '',
    name: typeof s.name === 'string' ? s.name : '',
    kind: enumValue(s.kind, SPAN_KINDS),
    startNs: nanos(field(s, 'startTimeUnixNano', 'start_time_unix_nano')),
    endNs: nanos(field(s, 'endTimeUnixNano', 'end_time_unix_nano')),
    attributes: EMPTY_ATTRIBUTES,
    events: [],
    links: [],
    statusCode: enumValue(status.code, STATUS_CODES),
    statusMessage: '',
  };
  if (!isObject(raw)) return { ...base, decodeProblem: `the span must be an object, got ${raw === null ? 'null' : Array.isArray(raw) ? 'an array' : typeof raw}` };
  if (resourceProblem) return { ...base, decodeProblem: resourceProblem };
  try {
    const events: DecodedEvent[] = list(s.events, 'events').map((raw, i) => {
      if (!isObject(raw)) throw new SpanDecodeProblem(`events[${i}] must be an object`);
      return {
        timeNs: nanos(field(raw, 'timeUnixNano', 'time_unix_nano')),
        name: str(raw.name, `events[${i}].name`),
        attributes: keyValues(raw.attributes, `events[${i}].attributes`),
      };
    });
    const links: DecodedLink[] = list(s.links, 'links').map((raw, i) => {
      if (!isObject(raw)) throw new SpanDecodeProblem(`links[${i}] must be an object`);
      return {
        traceId: id(field(raw, 'traceId', 'trace_id'), 16),
        spanId: id(field(raw, 'spanId', 'span_id'), 8),
        attributes: keyValues(raw.attributes, `links[${i}].attributes`),
      };
    });
    return {
      ...base,
      traceState: str(field(s, 'traceState', 'trace_state'), 'traceState'),
      name: str(s.name, 'name'),
      attributes: keyValues(s.attributes, 'attributes'),
      events,
      links,
      statusMessage: str(status.message, 'status.message'),
    };
  } catch (err) {
    if (err instanceof SpanDecodeProblem) return { ...base, decodeProblem: err.message };
    throw err;
  }
}

/** A problem of a resource or scope (its attributes, its name) rejects all of its spans. */
export function groupProblem<T>(decode: () => T, fallback: T, what: string): { value: T; problem: string | null } {
  try {
    return { value: decode(), problem: null };
  } catch (err) {
    if (err instanceof SpanDecodeProblem) return { value: fallback, problem: `${what}: ${err.message}` };
    throw err;
  }
}

export function decodeJsonExport(text: string): DecodedExport {
  try {
    return decodeJsonRoot(parseOtlpJsonText(text));
  } catch (err) {
    // Bad spans are rejected one by one in span(); anything else thrown is still the body's fault.
    if (err instanceof OtlpDecodeError) throw err;
    throw new OtlpDecodeError(`Undecodable OTLP/JSON body: ${(err as Error).message}`);
  }
}

function decodeJsonRoot(root: unknown): DecodedExport {
  if (!isObject(root)) {
    throw new OtlpDecodeError('Invalid OTLP/JSON: the body must be an ExportTraceServiceRequest object');
  }
  return {
    resourceSpans: containerList(field(root, 'resourceSpans', 'resource_spans'), 'resourceSpans').map((rs, i) => {
      if (!isObject(rs)) throw new OtlpDecodeError(`resourceSpans[${i}] must be an object`);
      const resource = groupProblem(() => keyValues(obj(rs.resource).attributes, 'attributes'), {}, 'resource');
      return {
        resource: resource.value,
        scopes: containerList(field(rs, 'scopeSpans', 'scope_spans'), `resourceSpans[${i}].scopeSpans`).map((ss, j) => {
          if (!isObject(ss)) throw new OtlpDecodeError(`resourceSpans[${i}].scopeSpans[${j}] must be an object`);
          const scope = obj(ss.scope);
          const names = groupProblem(() => ({ name: str(scope.name, 'name'), version: str(scope.version, 'version') }), { name: '', version: '' }, 'scope');
          const spans = containerList(ss.spans, `resourceSpans[${i}].scopeSpans[${j}].spans`);
          return { scopeName: names.value.name, scopeVersion: names.value.version, spans: spans.map((raw) => span(raw, resource.problem ?? names.problem)) };
        }),
      };
    }),
  };
}
