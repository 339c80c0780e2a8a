/**
 * The decoded form of an OTLP ExportTraceServiceRequest, the same whichever encoding it came in
 * (protobuf or OTLP/JSON). Ids are lowercase hex exactly as received (validated later, so a bad
 * span can be rejected alone); nanosecond times are decimal strings, never floats, because a
 * 19-digit epoch-nanosecond value does not fit a double.
 */

/** An attribute value: AnyValue with int64 as a number when it is a safe integer, else a decimal string. */
export type AttributeValue = string | number | boolean | null | AttributeValue[] | { [key: string]: AttributeValue };
export type Attributes = Record<string, AttributeValue>;

/**
 * Sets one decoded attribute as an own property. A key `__proto__` assigned with `=` would replace
 * the object's prototype instead: its keys would then be inherited, seen by the attribute mapping
 * (`attrs['gen_ai.agent.name']`) but dropped by JSON.stringify — the span stored without them,
 * settled with them.
 */
export function setAttribute(out: Attributes, key: string, value: AttributeValue): void {
  if (key === '__proto__') Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  else out[key] = value;
}

export interface DecodedEvent {
  timeNs: string;
  name: string;
  attributes: Attributes;
}

export interface DecodedLink {
  traceId: string;
  spanId: string;
  attributes: Attributes;
}

export interface DecodedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  traceState: string;
  name: string;
  /** SpanKind enum number (0..5). */
  kind: number;
  startNs: string;
  endNs: string;
  attributes: Attributes;
  events: DecodedEvent[];
  links: DecodedLink[];
  /** Status.code enum number: 0 unset, 1 ok, 2 error. */
  statusCode: number;
  statusMessage: string;
  /**
   * Set when the span (or its resource) could not be decoded as OTLP says — a null or malformed
   * attribute, a value of the wrong type, nesting past MAX_ANY_VALUE_DEPTH. Validation rejects the
   * span with this message through partial success; the rest of the request is kept.
   */
  decodeProblem?: string;
}

export interface DecodedScopeSpans {
  scopeName: string;
  scopeVersion: string;
  spans: DecodedSpan[];
}

export interface DecodedResourceSpans {
  resource: Attributes;
  scopes: DecodedScopeSpans[];
}

export interface DecodedExport {
  resourceSpans: DecodedResourceSpans[];
}

/**
 * How deep arrayValue / kvlistValue may nest inside one attribute value (a top-level value is depth
 * 0). Real instrumentation nests a few levels; the bound keeps every walk over a value shallow, so
 * hostile nesting is a rejected span and never a stack overflow. Protobuf bodies are also bounded
 * by protobufjs's own limit of 100 nested messages (about 47 levels of values): past it the whole
 * body is undecodable (400).
 */
export const MAX_ANY_VALUE_DEPTH = 32;

/** Thrown while decoding one span, its resource or its scope: those spans are rejected with the message. */
export class SpanDecodeProblem extends Error {}

/** Thrown for a body that is not an ExportTraceServiceRequest at all: the endpoint answers 400 with its message. */
export class OtlpDecodeError extends Error {}

export function countSpans(decoded: DecodedExport): number {
  let n = 0;
  for (const rs of decoded.resourceSpans) for (const ss of rs.scopes) n += ss.spans.length;
  return n;
}
