import { randomFillSync } from 'node:crypto';
import { otlpSchema } from '../../src/ingest/otlp/otlp-schema.js';
import { shapedBatch, type TraceShape } from '../../test/helpers/synthetic-batch.js';

/**
 * The sustained phase's requests, made from templates. Building each tick's request with
 * shapedBatch costs the bench ~28 ms of CPU per 1000 spans (protobufjs encoding most of it): at
 * 8,000 spans/s that is ~12 % of a two-core machine taken from the service during the sustained
 * phase only, since the burst sends batches built before it starts. So each trace shape is encoded
 * once, and a tick's request is its traces' encoded spans copied from their templates with fresh
 * trace and span ids, start and end times moved to now, and the names that must be unique (a probe's
 * agent, a failing tool) written over their fixed-width placeholders — ~1 ms per 1000 spans.
 *
 * A request is one ResourceSpans with one ScopeSpans; the spans of a template are the repeated
 * `spans` fields of its ScopeSpans, which concatenate into any ScopeSpans as they are.
 */

/** Digits of a probe's or failing tool's number: the names a shape carries must have them all. */
export const NAME_DIGITS = 10;
export const probeAgent = (n: number) => `probe-${String(n).padStart(NAME_DIGITS, '0')}`;
export const flakyTool = (n: number) => `flaky_tool_${String(n).padStart(NAME_DIGITS, '0')}`;

interface Template {
  spans: Buffer;
  spanCount: number;
  /** Offsets of the trace id (16 bytes), and of each span id's occurrences (8 bytes, as span and as parent). */
  traceIdAt: number[];
  spanIdAt: number[][];
  /** Offsets of every start and end time (fixed64, little-endian), and the root's start. */
  timeAt: number[];
  baseNs: bigint;
  /** Offsets of the placeholder's digits, when the shape names an agent or a failing tool. */
  nameAt: number[];
}

function readVarint(bytes: Buffer, at: number): { value: number; next: number } {
  let value = 0;
  let shift = 0;
  for (let i = at; ; i++) {
    value += (bytes[i] & 0x7f) * 2 ** shift;
    if (bytes[i] < 0x80) return { value, next: i + 1 };
    shift += 7;
  }
}

/** The value of the length-delimited field that starts at `at` (tag byte, length, value). */
function field(bytes: Buffer, at: number): { value: Buffer; next: number } {
  const { value: length, next } = readVarint(bytes, at + 1);
  return { value: bytes.subarray(next, next + length), next: next + length };
}

function varint(value: number): number[] {
  const out: number[] = [];
  while (value >= 0x80) {
    out.push((value & 0x7f) | 0x80);
    value = Math.floor(value / 128);
  }
  out.push(value);
  return out;
}

const header = (tag: number, length: number) => Buffer.from([tag, ...varint(length)]);

function offsetsOf(haystack: Buffer, needle: Uint8Array): number[] {
  const at: number[] = [];
  for (let i = haystack.indexOf(needle); i !== -1; i = haystack.indexOf(needle, i + 1)) at.push(i);
  return at;
}

/** Templates per shape, used in turn, so traces keep the generator's variety of agents, threads and models. */
const VARIANTS = 5;

const placeholderOf = (shape: TraceShape) => (shape.failTool !== undefined ? flakyTool(0) : shape.agent !== undefined ? probeAgent(0) : null);

export class TickBatches {
  private readonly templates = new Map<string, Template>();
  private resource: Buffer | null = null;
  private scope: Buffer | null = null;
  private uses = 0;

  private template(shape: TraceShape): Template {
    const placeholder = placeholderOf(shape);
    // A probe on a thread of its own names the thread as its agent: the placeholder stands in both.
    const thread = shape.thread !== undefined && shape.thread === shape.agent ? placeholder! : shape.thread;
    const key = `${shape.spans}:${placeholder ?? ''}:${thread ?? ''}:${this.uses++ % VARIANTS}`;
    const known = this.templates.get(key);
    if (known) return known;
    const typical: TraceShape = { spans: shape.spans, thread };
    if (shape.failTool !== undefined) typical.failTool = placeholder!;
    else if (shape.agent !== undefined) typical.agent = placeholder!;
    const encoded = shapedBatch([typical]).protobuf;
    // ExportTraceServiceRequest.resource_spans(1) → ResourceSpans{resource(1), scope_spans(2)} → ScopeSpans{scope(1), spans(2)…}
    const resourceSpans = field(encoded, 0).value;
    const resource = field(resourceSpans, 0);
    const scopeSpans = field(resourceSpans, resource.next).value;
    const scope = field(scopeSpans, 0);
    this.resource ??= Buffer.from(resource.value);
    this.scope ??= Buffer.from(scope.value);
    const spans = Buffer.from(scopeSpans.subarray(scope.next));
    const decoded = otlpSchema().ExportTraceServiceRequest.toObject(otlpSchema().ExportTraceServiceRequest.decode(encoded), { longs: String }) as {
      resourceSpans: { scopeSpans: { spans: { traceId: Buffer; spanId: Buffer; startTimeUnixNano: string; endTimeUnixNano: string }[] }[] }[];
    };
    const list = decoded.resourceSpans[0].scopeSpans[0].spans;
    const times = new Set<number>();
    for (const s of list) {
      for (const ns of [s.startTimeUnixNano, s.endTimeUnixNano]) {
        const le = Buffer.alloc(8);
        le.writeBigUInt64LE(BigInt(ns));
        for (const at of offsetsOf(spans, le)) times.add(at);
      }
    }
    const made: Template = {
      spans,
      spanCount: list.length,
      traceIdAt: offsetsOf(spans, list[0].traceId),
      spanIdAt: list.map((s) => offsetsOf(spans, s.spanId)),
      timeAt: [...times],
      baseNs: BigInt(list[0].startTimeUnixNano),
      nameAt: placeholder ? offsetsOf(spans, Buffer.from(placeholder)).map((at) => at + placeholder.length - NAME_DIGITS) : [],
    };
    if (made.traceIdAt.length !== list.length || made.spanIdAt.some((at) => at.length === 0)) throw new Error('template ids not found once per span');
    this.templates.set(key, made);
    return made;
  }

  /** One request of these traces, as shapedBatch would send them at `nowNs` (trace t starts t ms before it). */
  batch(shapes: TraceShape[], nowNs = BigInt(Date.now()) * 1_000_000n): { protobuf: Buffer; spans: number } {
    const parts: Buffer[] = [];
    let spanCount = 0;
    shapes.forEach((shape, t) => {
      const tpl = this.template(shape);
      const spans = Buffer.from(tpl.spans);
      const ids = randomFillSync(Buffer.alloc(16 + 8 * tpl.spanCount));
      for (const at of tpl.traceIdAt) ids.copy(spans, at, 0, 16);
      tpl.spanIdAt.forEach((offsets, i) => {
        for (const at of offsets) ids.copy(spans, at, 16 + 8 * i, 24 + 8 * i);
      });
      const delta = nowNs - BigInt(t) * 1_000_000n - tpl.baseNs;
      for (const at of tpl.timeAt) spans.writeBigUInt64LE(spans.readBigUInt64LE(at) + delta, at);
      const name = shape.failTool ?? shape.agent;
      if (tpl.nameAt.length > 0) {
        const digits = name!.slice(-NAME_DIGITS);
        if (name!.length !== placeholderOf(shape)!.length || !/^\d+$/.test(digits)) throw new Error(`${name}: not a name made by probeAgent or flakyTool`);
        for (const at of tpl.nameAt) spans.write(digits, at, 'latin1');
      }
      parts.push(spans);
      spanCount += tpl.spanCount;
    });
    const scopeField = Buffer.concat([header(0x0a, this.scope!.length), this.scope!]);
    const spansLength = parts.reduce((n, p) => n + p.length, 0);
    const scopeSpansLength = scopeField.length + spansLength;
    const resourceField = Buffer.concat([header(0x0a, this.resource!.length), this.resource!]);
    const scopeSpansHeader = header(0x12, scopeSpansLength);
    const resourceSpansLength = resourceField.length + scopeSpansHeader.length + scopeSpansLength;
    const protobuf = Buffer.concat([header(0x0a, resourceSpansLength), resourceField, scopeSpansHeader, scopeField, ...parts]);
    return { protobuf, spans: spanCount };
  }
}
