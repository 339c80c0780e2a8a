import { encodeLines, jsonLine } from './encoded-rows.js';
import type { NormalizedSpan, StatusCodeName, SummarySpan } from './normalized-span.js';
import { ATTRIBUTE_MAP, type MappedField, type SpanClass } from './attribute-mapping.js';
import type { Attributes } from './otlp-types.js';
import { nsToDateTime64 } from '../stores/clickhouse-time.js';
import type { TraceKey } from './stored-spans.js';

/**
 * What settling needs of a span, written by prepare (on the compute pool) beside the span's insert
 * line, so the settle task never parses a span's attributes, events or resource again, nor applies
 * the attribute mapping a second time: measured on the ingest bench's spans, parsing the held
 * `spans` lines and mapping them again was ~40 % of the settle task (bench/README.md, issue 15).
 *
 * A record is one line: the JSON array of the fields below, then — only when the span has
 * attributes — a tab and the attributes' JSON text, which settling never parses: it goes to the
 * hooks as text (packed-hook.ts), parsed only where a listener reads it. JSON text holds no raw tab
 * or newline (JSON.stringify escapes both), so the tab and the newline are unambiguous. Both parts
 * go through jsonLine, as the insert line does, so a lone surrogate reads back as U+FFFD exactly as
 * it does from the stored row.
 *
 * The settle cache holds these records (views into one body per request) instead of the insert
 * lines: ~45 % of their bytes on the bench's spans, and the insert body is free once written.
 * The trace's tenant, project and trace id are not repeated per span: the settle task has them
 * from the trace's key. A trace read back from ClickHouse is turned into the same SettleSpan by
 * settleSpanOf, so both paths summarize the same values (test/unit/ingest/settle-records.test.ts).
 */

/** A span as summarizing and the hook payload read it (SummarySpan), with its failure details. */
export interface SettleSpan extends SummarySpan {
  /** For a failed span: exception.type of its exception event, else its error.type attribute, else ''. '' for other spans. */
  errorType: string;
  /** For a failed span: exception.message of its exception event, else ''. '' for other spans. */
  exceptionMessage: string;
}

/** A span's record and its attributes' JSON text ('' when it has none). */
export interface SettleRecord {
  span: SettleSpan;
  attributesJson: string;
}

/** The records of a request's `spans` rows, one line each, in the same order (line i ↔ spans row i). */
export interface EncodedRecords {
  body: Uint8Array;
  ends: Uint32Array;
}

const text = (value: unknown) => (typeof value === 'string' ? value : '');

const NO_FAILURE = Object.freeze({ errorType: '', exceptionMessage: '' });

/** The failure details processedTrace reports for a failed span (processed-trace.ts). */
function failureOf(s: NormalizedSpan): { errorType: string; exceptionMessage: string } {
  if (s.statusCode !== 'ERROR') return NO_FAILURE;
  const exception = s.events.find((e) => e.name === 'exception');
  const exceptionType = exception?.attributes['exception.type'];
  return {
    errorType: typeof exceptionType === 'string' ? exceptionType : text(s.attributes['error.type']),
    exceptionMessage: text(exception?.attributes['exception.message']),
  };
}

/** The SettleSpan of a normalized span (a read-back one: the memory path writes records instead). */
export function settleSpanOf(s: NormalizedSpan): SettleSpan {
  const failure = failureOf(s);
  return {
    tenantId: s.tenantId, projectId: s.projectId, traceId: s.traceId, otelTraceId: s.otelTraceId, spanId: s.spanId, parentSpanId: s.parentSpanId,
    name: s.name, startNs: s.startNs, endNs: s.endNs, timestamp: s.timestamp, durationMs: s.durationMs, statusCode: s.statusCode,
    statusDescription: s.statusDescription, serviceName: s.serviceName, model: s.model, provider: s.provider, inputTokens: s.inputTokens,
    outputTokens: s.outputTokens, cachedInputTokens: s.cachedInputTokens, cacheWriteInputTokens: s.cacheWriteInputTokens, agentName: s.agentName,
    toolName: s.toolName, toolArguments: s.toolArguments, toolResult: s.toolResult, threadId: s.threadId, release: s.release, agentInput: s.agentInput,
    agentOutput: s.agentOutput, spanClass: s.spanClass, userFacingTool: s.userFacingTool, errorType: failure.errorType, exceptionMessage: failure.exceptionMessage,
  };
}

/** True when the object has an own enumerable key (a span without attributes adds nothing to the hook payload). */
export function hasKeys(value: object): boolean {
  for (const _key in value) return true;
  return false;
}

/**
 * A long mapped text (a prompt, a completion, tool arguments or result) that is verbatim a string
 * attribute of the span is written as `[key]`, not as a second copy: the attributes' text holds it
 * already, and is parsed for it only if summarizing reads the field (recordSpan). Prompts of many
 * kilobytes made a record twice the size of the span's attributes, and prepare stringify them twice.
 * Short texts are written out: cheaper than a parse later.
 */
const REFERENCE_FROM_CHARS = 256;

function textField(value: string | null, field: MappedField, attributes: Attributes): string | null | [string] {
  if (value === null || value.length < REFERENCE_FROM_CHARS) return value;
  for (const source of ATTRIBUTE_MAP[field]) if (source.on === 'span' && attributes[source.key] === value) return [source.key];
  return value;
}

/** One record line (without its newline). The array's order is read back by `recordSpan` below. */
function recordLine(s: NormalizedSpan): string {
  const { errorType, exceptionMessage } = failureOf(s);
  const a = s.attributes;
  const fields = jsonLine([
    s.otelTraceId, s.spanId, s.parentSpanId, s.name, s.startNs, s.endNs, s.durationMs, s.statusCode, s.statusDescription, s.serviceName,
    s.model, s.provider, s.inputTokens, s.outputTokens, s.cachedInputTokens, s.cacheWriteInputTokens, s.agentName, s.toolName,
    textField(s.toolArguments, 'toolArguments', a), textField(s.toolResult, 'toolResult', a), s.threadId, s.release,
    textField(s.agentInput, 'agentInput', a), textField(s.agentOutput, 'agentOutput', a), s.spanClass, s.userFacingTool ? 1 : 0,
    errorType, exceptionMessage,
  ]);
  // The same text as in the `spans` line (sharing it cost as much as writing it twice: measured).
  // '{}' as a read-back parses it: no attributes.
  const attributesJson = jsonLine(s.attributes);
  return attributesJson === '{}' ? fields : `${fields}\t${attributesJson}`;
}

/** The records of `spans`, in their order (prepare passes them in the order of the `spans` rows). */
export function encodeSettleRecords(spans: NormalizedSpan[]): EncodedRecords {
  return encodeLines(spans.length, (i) => recordLine(spans[i]));
}

/** Line i of the records (a view, newline included). */
export function recordAt(records: EncodedRecords, i: number): Uint8Array {
  return records.body.subarray(i === 0 ? 0 : records.ends[i - 1], records.ends[i]);
}

/** Where recordLine writes the texts that may be attribute references. */
const TEXT_FIELDS = [
  ['toolArguments', 18],
  ['toolResult', 19],
  ['agentInput', 22],
  ['agentOutput', 23],
] as const;

function recordSpan(key: TraceKey, v: never[], attributesJson: string): SettleSpan {
  const startNs: string = v[4];
  const span: SettleSpan = {
    tenantId: key.tenantId, projectId: key.projectId, traceId: key.traceId, otelTraceId: v[0], spanId: v[1], parentSpanId: v[2], name: v[3],
    startNs, endNs: v[5], timestamp: nsToDateTime64(startNs), durationMs: v[6], statusCode: v[7] as StatusCodeName, statusDescription: v[8],
    serviceName: v[9], model: v[10], provider: v[11], inputTokens: v[12], outputTokens: v[13], cachedInputTokens: v[14], cacheWriteInputTokens: v[15],
    agentName: v[16], toolName: v[17], toolArguments: v[18], toolResult: v[19], threadId: v[20], release: v[21], agentInput: v[22],
    agentOutput: v[23], spanClass: v[24] as SpanClass, userFacingTool: v[25] === 1, errorType: v[26], exceptionMessage: v[27],
  };
  let attributes: Record<string, string> | undefined;
  for (const [field, at] of TEXT_FIELDS) {
    const reference = v[at] as unknown;
    if (!Array.isArray(reference)) continue;
    // Read from the attributes' text when first read (one parse per span, at most).
    let text: string | undefined;
    Object.defineProperty(span, field, {
      enumerable: true,
      configurable: true,
      get: () => (text ??= (attributes ??= JSON.parse(attributesJson) as Record<string, string>)[reference[0] as string]),
      set: (value: string) => {
        text = value;
      },
    });
  }
  return span;
}

/** The records of one trace (lines as encodeSettleRecords wrote them, as UTF-8 bytes), in order. */
export function settleRecordsFromBytes(key: TraceKey, bytes: Uint8Array): SettleRecord[] {
  const all = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
  const records: SettleRecord[] = [];
  let start = 0;
  while (start < all.length) {
    let end = all.indexOf('\n', start);
    if (end === -1) end = all.length;
    if (end > start) {
      const tab = all.indexOf('\t', start);
      const fieldsEnd = tab === -1 || tab > end ? end : tab;
      const attributesJson = fieldsEnd < end ? all.slice(fieldsEnd + 1, end) : '';
      records.push({ span: recordSpan(key, JSON.parse(all.slice(start, fieldsEnd)) as never[], attributesJson), attributesJson });
    }
    start = end + 1;
  }
  return records;
}

/**
 * ProcessedTrace.spanAttributes as JSON text, from each span's attributes text: the object of
 * span id → attributes of the spans that have any, in span order (what processedTrace built as an
 * object before), written without parsing a single attribute.
 */
export function spanAttributesJson(records: readonly SettleRecord[]): string {
  let out = '{';
  for (const r of records) {
    if (r.attributesJson === '') continue;
    if (out.length > 1) out += ',';
    out += `${JSON.stringify(r.span.spanId)}:${r.attributesJson}`;
  }
  return `${out}}`;
}
