import { compareNs } from './normalized-span.js';
import { utf8Text } from '../platform/compute/heap-room.js';
import type { AttributeValue, Attributes, DecodedEvent } from './otlp-types.js';
import { genAiContentAttributes, isGenAiContentEvent, logEventName, type GenAiRecord } from './genai-log-events.js';

/**
 * Log records joined to their span (stored in `span_logs`, clickhouse/011_span_logs.sql): a span is
 * read back with the records that name it, whichever came first, so settling and the traces API see
 * one span however its content was sent. GenAI content events become the span's content attributes
 * (genai-log-events.ts) — an attribute the span carries itself wins; every other record becomes an
 * event of the span, in time order with its own events.
 */

/** A `span_logs` row as read back (JSONEachRow; UInt64 as strings, JSON columns as text). */
export interface StoredLogRow {
  tenant_id: string;
  project_id: string;
  trace_id: string;
  span_id: string;
  record_id: string;
  /** The record's time (time_unix_nano, else observed_time_unix_nano). */
  time_ns: string;
  /** Position among the records of its request for the same span: orders records of equal time. */
  seq: number | string;
  event_name: string;
  severity_number: number | string;
  severity_text: string;
  /** The body AnyValue as JSON text. */
  body: string;
  attributes: string;
}

export const STORED_LOG_COLUMNS = 'tenant_id, project_id, trace_id, span_id, record_id, time_ns, seq, event_name, severity_number, severity_text, body, attributes';

/** Records of one span: the key of a span among a read's rows. */
export const spanLogKey = (tenantId: string, projectId: string, traceId: string, spanId: string) => `${tenantId}\u0000${projectId}\u0000${traceId}\u0000${spanId}`;

function parse<T>(text: string, fallback: T): T {
  try {
    return JSON.parse(text) as T;
  } catch {
    return fallback;
  }
}

/**
 * Rows of a JSONEachRow answer of STORED_LOG_COLUMNS grouped by span, each group in emission order;
 * a record stored twice (a retried export) counts once.
 */
export function logRecordsBySpan(bytes: Uint8Array | null | undefined): Map<string, StoredLogRow[]> {
  const out = new Map<string, StoredLogRow[]>();
  if (!bytes || bytes.byteLength === 0) return out;
  const text = utf8Text(bytes);
  const seen = new Set<string>();
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const row = JSON.parse(line) as StoredLogRow;
    const key = spanLogKey(row.tenant_id, row.project_id, row.trace_id, row.span_id);
    if (seen.has(`${key}\u0000${row.record_id}`)) continue;
    seen.add(`${key}\u0000${row.record_id}`);
    const list = out.get(key);
    if (list) list.push(row);
    else out.set(key, [row]);
  }
  for (const list of out.values()) {
    list.sort((a, b) => compareNs(String(a.time_ns), String(b.time_ns)) || Number(a.seq) - Number(b.seq) || (a.record_id < b.record_id ? -1 : a.record_id > b.record_id ? 1 : 0));
  }
  return out;
}

const present = (v: AttributeValue | undefined) => v !== undefined && v !== null && v !== '';

/** A non-GenAI record as a span event: its attributes plus its body and severity under `log.*`. */
function asEvent(row: StoredLogRow, name: string, attributes: Attributes): DecodedEvent {
  const body = parse<AttributeValue>(row.body, null);
  const extra: Attributes = {};
  if (present(body)) extra['log.body'] = body;
  if (row.severity_text !== '') extra['log.severity_text'] = row.severity_text;
  if (Number(row.severity_number) > 0) extra['log.severity_number'] = Number(row.severity_number);
  return { timeNs: String(row.time_ns), name: name === '' ? 'log' : name, attributes: { ...attributes, ...extra } };
}

/**
 * The span's attributes and events with its log records applied (`records` in emission order,
 * logRecordsBySpan). Returns the inputs unchanged when there are none.
 */
export function applyLogRecords(
  attributes: Attributes,
  events: DecodedEvent[],
  records: readonly StoredLogRow[] | undefined,
): { attributes: Attributes; events: DecodedEvent[] } {
  if (!records || records.length === 0) return { attributes, events };
  const genAi: GenAiRecord[] = [];
  const added: DecodedEvent[] = [];
  for (const row of records) {
    const attrs = parse<Attributes>(row.attributes, {});
    const name = logEventName(row.event_name, attrs);
    if (isGenAiContentEvent(name)) genAi.push({ name, body: parse<AttributeValue>(row.body, null), attributes: attrs });
    else added.push(asEvent(row, name, attrs));
  }
  let merged = attributes;
  if (genAi.length > 0) {
    const content = genAiContentAttributes(genAi);
    for (const [key, value] of Object.entries(content)) {
      if (present(attributes[key])) continue;
      if (merged === attributes) merged = { ...attributes };
      merged[key] = value;
    }
  }
  if (added.length === 0) return { attributes: merged, events };
  const all = [...events, ...added];
  all.sort((a, b) => compareNs(a.timeNs, b.timeNs));
  return { attributes: merged, events: all };
}
