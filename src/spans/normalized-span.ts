import { mapAttributes, type MappedAttributes } from './attribute-mapping.js';
import type { Attributes, DecodedEvent, DecodedExport } from './otlp-types.js';
import { nsToDateTime64 } from '../platform/clickhouse/clickhouse-time.js';
import { lookoutTraceId } from './trace-id.js';

/**
 * A validated span with everything ingestion derives from it: Lookout's trace UUID, readable kind
 * and status, its resource's service name, and the mapped attributes. Both the per-span event
 * rows and the trace summary are computed from these, and the `spans` table row stores them.
 */
export interface NormalizedSpan extends MappedAttributes {
  tenantId: string;
  projectId: string;
  traceId: string;
  otelTraceId: string;
  spanId: string;
  /** '' for a root span. */
  parentSpanId: string;
  name: string;
  kind: SpanKindName;
  startNs: string;
  endNs: string;
  /** startNs as ClickHouse DateTime64(3) text (UTC): the `timestamp` of the span's rows. */
  timestamp: string;
  durationMs: number;
  statusCode: StatusCodeName;
  statusDescription: string;
  serviceName: string;
  attributes: Attributes;
  events: DecodedEvent[];
  resource: Attributes;
  scopeName: string;
  scopeVersion: string;
}

export type SpanKindName = 'unspecified' | 'internal' | 'server' | 'client' | 'producer' | 'consumer';
/** OTLP Status.code as stored and returned: UNSET, OK or ERROR. */
export type StatusCodeName = 'UNSET' | 'OK' | 'ERROR';

const KINDS: SpanKindName[] = ['unspecified', 'internal', 'server', 'client', 'producer', 'consumer'];
const STATUSES: StatusCodeName[] = ['UNSET', 'OK', 'ERROR'];

/** Exact nanosecond difference in milliseconds; BigInt because both operands exceed 2^53. */
export function durationMs(startNs: string, endNs: string): number {
  const diff = BigInt(endNs) - BigInt(startNs);
  return diff <= 0n ? 0 : Number(diff) / 1e6;
}

/** Orders two decimal nanosecond strings numerically (no leading zeros, so length first). */
export function compareNs(a: string, b: string): number {
  if (a.length !== b.length) return a.length - b.length;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** What a span is before its attributes are mapped (NormalizedSpan without MappedAttributes). */
export type SpanBase = Omit<NormalizedSpan, keyof MappedAttributes>;

/**
 * A NormalizedSpan from its base and its mapped attributes, as one object literal: spreading the
 * mapped object into the span (`{ ...base, ...mapAttributes() }`) copied it property by property,
 * ~0.4 µs per span, on both the prepare and the settle path.
 */
export function normalizedSpan(b: SpanBase, m: MappedAttributes): NormalizedSpan {
  return {
    tenantId: b.tenantId,
    projectId: b.projectId,
    traceId: b.traceId,
    otelTraceId: b.otelTraceId,
    spanId: b.spanId,
    parentSpanId: b.parentSpanId,
    name: b.name,
    kind: b.kind,
    startNs: b.startNs,
    endNs: b.endNs,
    timestamp: b.timestamp,
    durationMs: b.durationMs,
    statusCode: b.statusCode,
    statusDescription: b.statusDescription,
    serviceName: b.serviceName,
    attributes: b.attributes,
    events: b.events,
    resource: b.resource,
    scopeName: b.scopeName,
    scopeVersion: b.scopeVersion,
    model: m.model,
    provider: m.provider,
    inputTokens: m.inputTokens,
    outputTokens: m.outputTokens,
    cachedInputTokens: m.cachedInputTokens,
    cacheWriteInputTokens: m.cacheWriteInputTokens,
    agentName: m.agentName,
    toolName: m.toolName,
    toolArguments: m.toolArguments,
    toolResult: m.toolResult,
    threadId: m.threadId,
    release: m.release,
    agentInput: m.agentInput,
    agentOutput: m.agentOutput,
    spanClass: m.spanClass,
    userFacingTool: m.userFacingTool,
    agentInvocation: m.agentInvocation,
  };
}

export interface IngestScope {
  tenantId: string;
  projectId: string;
}

export function normalizeExport(decoded: DecodedExport, scope: IngestScope): NormalizedSpan[] {
  const out: NormalizedSpan[] = [];
  // One SHA-1 per trace, not per span.
  const traceIds = new Map<string, string>();
  for (const rs of decoded.resourceSpans) {
    const serviceName = typeof rs.resource['service.name'] === 'string' ? (rs.resource['service.name']) : '';
    for (const ss of rs.scopes) {
      for (const s of ss.spans) {
        let traceId = traceIds.get(s.traceId);
        if (traceId === undefined) {
          traceId = lookoutTraceId(scope.projectId, s.traceId);
          traceIds.set(s.traceId, traceId);
        }
        const base: SpanBase = {
          tenantId: scope.tenantId,
          projectId: scope.projectId,
          traceId,
          otelTraceId: s.traceId,
          spanId: s.spanId,
          parentSpanId: s.parentSpanId,
          name: s.name,
          kind: KINDS[s.kind] ?? 'unspecified',
          startNs: s.startNs,
          endNs: s.endNs,
          timestamp: nsToDateTime64(s.startNs),
          durationMs: durationMs(s.startNs, s.endNs),
          statusCode: STATUSES[s.statusCode] ?? 'UNSET',
          statusDescription: s.statusMessage,
          serviceName,
          attributes: s.attributes,
          events: s.events,
          resource: rs.resource,
          scopeName: ss.scopeName,
          scopeVersion: ss.scopeVersion,
        };
        out.push(normalizedSpan(base, mapAttributes(s.attributes, rs.resource)));
      }
    }
  }
  return out;
}
