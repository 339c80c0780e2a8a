import { otlpSchema } from './otlp-schema.js';
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

/**
 * Decodes an `application/x-protobuf` ExportTraceServiceRequest with protobufjs and turns the
 * message objects into the encoding-neutral DecodedExport: bytes ids → lowercase hex, fixed64
 * times → exact decimal strings, AnyValue → plain JSON values.
 */

export interface LongLike {
  low: number;
  high: number;
  unsigned?: boolean;
}

const TWO_32 = 4294967296;

/** An unsigned 64-bit value (protobufjs Long, or a number for small values) as an exact decimal string. */
export function unsignedToDecimal(value: LongLike | number | string | null | undefined): string {
  if (value === null || value === undefined) return '0';
  if (typeof value === 'number') return Number.isSafeInteger(value) && value >= 0 ? String(value) : '0';
  if (typeof value === 'string') return value;
  const high = value.high >>> 0;
  const low = value.low >>> 0;
  // Below 2^53 the double arithmetic is exact; above it BigInt keeps every digit.
  if (high < 0x200000) return String(high * TWO_32 + low);
  return ((BigInt(high) << 32n) | BigInt(low)).toString();
}

/** A signed int64 attribute: a number when exactly representable, else its decimal string. */
function signedToValue(value: LongLike | number): number | string {
  if (typeof value === 'number') return value;
  const high = value.high | 0;
  const low = value.low >>> 0;
  if (high >= -0x200000 && high < 0x200000) return high * TWO_32 + low;
  return ((BigInt(high) << 32n) | BigInt(low)).toString();
}

export function hex(bytes: Uint8Array | null | undefined): string {
  if (!bytes || bytes.length === 0) return '';
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
}

/**
 * The message objects protobufjs decodes from proto/ (it reflects the schema at run time, so these
 * are declared here, field for field of what this file reads). Unset fields are absent or null;
 * `value` on an AnyValue is protobufjs's virtual oneof getter: the name of the field that is set.
 */
export interface PbAnyValue {
  value?: 'stringValue' | 'boolValue' | 'intValue' | 'doubleValue' | 'arrayValue' | 'kvlistValue' | 'bytesValue';
  stringValue?: string;
  boolValue?: boolean;
  intValue?: LongLike | number;
  doubleValue?: number;
  arrayValue?: { values?: PbAnyValue[] | null };
  kvlistValue?: { values?: PbKeyValue[] | null };
  bytesValue?: Uint8Array;
}
export interface PbKeyValue {
  key: string;
  value?: PbAnyValue | null;
}
interface PbEvent {
  timeUnixNano?: LongLike | number | null;
  name?: string | null;
  attributes?: PbKeyValue[] | null;
}
interface PbLink {
  traceId?: Uint8Array | null;
  spanId?: Uint8Array | null;
  attributes?: PbKeyValue[] | null;
}
interface PbSpan {
  traceId?: Uint8Array | null;
  spanId?: Uint8Array | null;
  parentSpanId?: Uint8Array | null;
  traceState?: string | null;
  name?: string | null;
  kind?: number | null;
  startTimeUnixNano?: LongLike | number | null;
  endTimeUnixNano?: LongLike | number | null;
  attributes?: PbKeyValue[] | null;
  events?: PbEvent[] | null;
  links?: PbLink[] | null;
  status?: { code?: number | null; message?: string | null } | null;
}
interface PbResourceSpans {
  resource?: { attributes?: PbKeyValue[] | null } | null;
  scopeSpans?: { scope?: { name?: string | null; version?: string | null } | null; spans?: PbSpan[] | null }[] | null;
}
interface PbExportRequest {
  resourceSpans?: PbResourceSpans[] | null;
}

/**
 * Where a bad value sits, for the span's rejection message: the top-level attribute `key` (of the
 * span, an event or a link: the JSON decoder names it the same way). Built only when a value is
 * rejected, not as a text per attribute of every span.
 */
function placeOf(key: unknown): string {
  return `attribute "${String(key).slice(0, 60)}"`;
}

export function anyValue(v: PbAnyValue | null | undefined, key: unknown, depth: number): AttributeValue {
  if (!v) return null;
  // The oneof getter names the field that is set, so that field is present.
  switch (v.value) {
    case 'stringValue':
      return v.stringValue!;
    case 'boolValue':
      return v.boolValue!;
    case 'intValue':
      return signedToValue(v.intValue!);
    case 'doubleValue':
      return Number.isFinite(v.doubleValue) ? v.doubleValue! : String(v.doubleValue);
    case 'arrayValue':
      if (depth >= MAX_ANY_VALUE_DEPTH) throw new SpanDecodeProblem(`${placeOf(key)}: arrayValue/kvlistValue nested deeper than ${MAX_ANY_VALUE_DEPTH} levels`);
      return (v.arrayValue!.values ?? []).map((item) => anyValue(item, key, depth + 1));
    case 'kvlistValue':
      if (depth >= MAX_ANY_VALUE_DEPTH) throw new SpanDecodeProblem(`${placeOf(key)}: arrayValue/kvlistValue nested deeper than ${MAX_ANY_VALUE_DEPTH} levels`);
      return keyValues(v.kvlistValue!.values, depth + 1, key);
    case 'bytesValue':
      return Buffer.from(v.bytesValue!).toString('base64');
    default:
      return null;
  }
}

/** `topKey`: inside a nested kvlist, the top-level attribute it belongs to (named in a rejection). */
export function keyValues(list: PbKeyValue[] | null | undefined, depth = 0, topKey?: unknown): Attributes {
  const out: Attributes = {};
  if (!list) return out;
  for (const kv of list) setAttribute(out, kv.key, anyValue(kv.value, depth === 0 ? kv.key : topKey, depth));
  return out;
}

function span(s: PbSpan, groupProblem: string | null): DecodedSpan {
  const base: DecodedSpan = {
    traceId: hex(s.traceId),
    spanId: hex(s.spanId),
    parentSpanId: hex(s.parentSpanId),
    traceState: s.traceState ?? '',
    name: s.name ?? '',
    kind: s.kind ?? 0,
    startNs: unsignedToDecimal(s.startTimeUnixNano),
    endNs: unsignedToDecimal(s.endTimeUnixNano),
    attributes: {},
    events: [],
    links: [],
    statusCode: s.status?.code ?? 0,
    statusMessage: s.status?.message ?? '',
  };
  if (groupProblem) return { ...base, decodeProblem: groupProblem };
  try {
    const events: DecodedEvent[] = [];
    for (const e of s.events ?? []) {
      events.push({ timeNs: unsignedToDecimal(e.timeUnixNano), name: e.name ?? '', attributes: keyValues(e.attributes) });
    }
    const links: DecodedLink[] = [];
    for (const l of s.links ?? []) {
      links.push({ traceId: hex(l.traceId), spanId: hex(l.spanId), attributes: keyValues(l.attributes) });
    }
    return { ...base, attributes: keyValues(s.attributes), events, links };
  } catch (err) {
    if (err instanceof SpanDecodeProblem) return { ...base, decodeProblem: err.message };
    throw err;
  }
}

/** The resource's attributes, or the problem that rejects all of its spans. */
function resourceAttributes(rs: PbResourceSpans): { attributes: Attributes; problem: string | null } {
  try {
    return { attributes: keyValues(rs.resource?.attributes), problem: null };
  } catch (err) {
    if (err instanceof SpanDecodeProblem) return { attributes: {}, problem: `resource: ${err.message}` };
    throw err;
  }
}

export function decodeProtobufExport(body: Uint8Array): DecodedExport {
  let message: PbExportRequest;
  try {
    message = otlpSchema().ExportTraceServiceRequest.decode(body) as unknown as PbExportRequest;
  } catch (err) {
    throw new OtlpDecodeError(`Invalid protobuf ExportTraceServiceRequest: ${(err as Error).message}`);
  }
  try {
    return fromMessage(message);
  } catch (err) {
    // Bad spans are rejected one by one in span(); anything else thrown is still the body's fault.
    throw new OtlpDecodeError(`Undecodable protobuf ExportTraceServiceRequest: ${(err as Error).message}`);
  }
}

function fromMessage(message: PbExportRequest): DecodedExport {
  return {
    resourceSpans: (message.resourceSpans ?? []).map((rs) => {
      const resource = resourceAttributes(rs);
      return {
        resource: resource.attributes,
        scopes: (rs.scopeSpans ?? []).map((ss) => ({
          scopeName: ss.scope?.name ?? '',
          scopeVersion: ss.scope?.version ?? '',
          spans: (ss.spans ?? []).map((s) => span(s, resource.problem)),
        })),
      };
    }),
  };
}
