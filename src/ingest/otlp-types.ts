/**
 * The decoded form of an OTLP ExportTraceServiceRequest, the same whichever encoding it came in
 * (protobuf or OTLP/JSON). Ids are lowercase hex exactly as received (validated later, so a bad
 * span can be rejected alone); nanosecond times are decimal strings, never floats, because a
 * 19-digit epoch-nanosecond value does not fit a double.
 */

/** An attribute value: AnyValue with int64 as a number when it is a safe integer, else a decimal string. */
export type AttributeValue = string | number | boolean | null | AttributeValue[] | { [key: string]: AttributeValue };
export type Attributes = Record<string, AttributeValue>;

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

/** Thrown for a body that is not an ExportTraceServiceRequest at all: the endpoint answers 400 with its message. */
export class OtlpDecodeError extends Error {}

export function countSpans(decoded: DecodedExport): number {
  let n = 0;
  for (const rs of decoded.resourceSpans) for (const ss of rs.scopes) n += ss.spans.length;
  return n;
}
