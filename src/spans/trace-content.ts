import type { NormalizedSpan } from './normalized-span.js';
import type { AttributeValue } from './otlp-types.js';
import { compareNs } from './normalized-span.js';
import { displayText, lowerPerCodePoint } from './search-text.js';

/**
 * What search finds in a trace (docs/search.md): the trace's text sorted into a few named fields,
 * one `trace_content` row per (trace, field), built when the trace settles from the same spans (with
 * their log records joined) the summary is built from.
 *
 * - `input` / `output`: each span's agent input and output as the attribute mapping reads them
 *   (prompts and message lists, including GenAI log events joined to their span);
 * - `tool`: tool names, arguments and results;
 * - `error`: the status description of failed spans and exception type, message and stack trace;
 * - `name`: span names;
 * - `attribute`: every other string attribute value of spans and their events (log record bodies
 *   included), that is not already one of the above.
 *
 * A JSON value is searched by its string leaves (a message list by its texts, not its braces), and
 * the leaves under a few structural keys (role, type, ...) are left out: every message has them.
 * Equal texts are kept once per field (a chat history repeated by every model call of a run).
 * Items are joined by a line feed, which no query word contains (white space inside a text is one
 * space, search-text.ts), so a phrase never matches across two items.
 */

export const CONTENT_FIELDS = ['input', 'output', 'tool', 'error', 'name', 'attribute'] as const;
export type ContentField = (typeof CONTENT_FIELDS)[number];

/**
 * Characters kept per field and trace (UTF-16 code units): beyond it a field's text is cut, and
 * what is cut is not found. Documented in docs/search.md.
 */
export const MAX_FIELD_CHARS = 1_000_000;

/** Keys whose string values are message structure rather than what was said. */
const STRUCTURAL_KEYS = new Set(['role', 'type', 'finish_reason', 'id', 'tool_call_id', 'mime_type', 'modality']);

/** Event attributes that are the error field's, not the attribute field's. */
const EXCEPTION_KEYS = ['exception.type', 'exception.message', 'exception.stacktrace'];

export interface TraceContentRow {
  tenant_id: string;
  project_id: string;
  trace_id: string;
  field: ContentField;
  /** The trace's timestamp (its summary's): retention and the list's time filters apply to it. */
  timestamp: string;
  /** NFKC, white space collapsed: what snippets show. */
  text: string;
  /** `text` lower-cased per code point: what the index and the match read. */
  text_norm: string;
  processed_at: string;
}

class FieldText {
  /** Values met as sent: a repeat (the same history on every model call) is neither parsed nor normalized again. */
  private readonly raw = new Set<string>();
  private readonly seen = new Set<string>();
  private readonly items: string[] = [];
  private chars = 0;

  /** Whether `value` is met for the first time in this field (and room is left). */
  firstTime(value: string): boolean {
    if (this.chars >= MAX_FIELD_CHARS || this.raw.has(value)) return false;
    this.raw.add(value);
    return true;
  }

  add(value: string): void {
    if (this.firstTime(value)) this.addText(value);
  }

  /** Adds a value whose first meeting was counted already. */
  addText(value: string): void {
    const text = displayText(value);
    if (text === '' || this.seen.has(text)) return;
    this.seen.add(text);
    const room = MAX_FIELD_CHARS - this.chars;
    const kept = text.length <= room ? text : cutAt(text, room);
    this.items.push(kept);
    this.chars += kept.length + 1;
  }

  text(): string {
    return this.items.join('\n');
  }
}

/** `text` cut to at most `length` code units, never inside a surrogate pair. */
function cutAt(text: string, length: number): string {
  const code = text.charCodeAt(length - 1);
  return text.slice(0, code >= 0xd800 && code <= 0xdbff ? length - 1 : length);
}

/** The string leaves of a value: a JSON text by its leaves, other text as it is. */
function addLeaves(out: FieldText, value: AttributeValue | undefined, parseText = true): void {
  if (value === null || value === undefined) return;
  if (typeof value === 'string') {
    const t = value.trimStart();
    if (parseText && (t.startsWith('{') || t.startsWith('['))) {
      if (!out.firstTime(value)) return;
      try {
        addLeaves(out, JSON.parse(value) as AttributeValue, false);
        return;
      } catch {
        // not JSON: the text itself
      }
      out.addText(value);
      return;
    }
    out.add(value);
    return;
  }
  if (Array.isArray(value)) {
    for (const item of value) addLeaves(out, item, parseText);
    return;
  }
  if (typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) if (!STRUCTURAL_KEYS.has(key)) addLeaves(out, item, parseText);
  }
}

/** The content rows of one trace: a row per field (its text may be empty). */
export function traceContentRows(spans: readonly NormalizedSpan[], trace: { timestamp: string; processedAt: string }): TraceContentRow[] {
  if (spans.length === 0) return [];
  const fields = new Map<ContentField, FieldText>(CONTENT_FIELDS.map((f) => [f, new FieldText()]));
  const field = (name: ContentField) => fields.get(name)!;
  const ordered = [...spans].sort((a, b) => compareNs(a.startNs, b.startNs) || (a.spanId < b.spanId ? -1 : a.spanId > b.spanId ? 1 : 0));
  for (const span of ordered) {
    field('name').add(span.name);
    addLeaves(field('input'), span.agentInput);
    addLeaves(field('output'), span.agentOutput);
    if (span.toolName) field('tool').add(span.toolName);
    addLeaves(field('tool'), span.toolArguments);
    addLeaves(field('tool'), span.toolResult);
    if (span.statusCode === 'ERROR') field('error').add(span.statusDescription);
    // Values the mapping already read into a field above are not repeated as attributes.
    const mapped = new Set([span.agentInput, span.agentOutput, span.toolArguments, span.toolResult, span.toolName].filter((v) => v !== null && v !== ''));
    for (const value of Object.values(span.attributes)) {
      if (typeof value === 'string' && mapped.has(value)) continue;
      addLeaves(field('attribute'), value);
    }
    for (const event of span.events) {
      const isException = event.name === 'exception';
      for (const [key, value] of Object.entries(event.attributes)) {
        if (isException && EXCEPTION_KEYS.includes(key)) addLeaves(field('error'), value, false);
        else addLeaves(field('attribute'), value);
      }
    }
  }
  const first = spans[0];
  const rows: TraceContentRow[] = [];
  // Every field, empty ones too: a newer settling replaces each (trace, field) row, so text that
  // moved to another field (a mapping changed since) is not found where it no longer is.
  for (const name of CONTENT_FIELDS) {
    const text = field(name).text();
    rows.push({
      tenant_id: first.tenantId,
      project_id: first.projectId,
      trace_id: first.traceId,
      field: name,
      timestamp: trace.timestamp,
      text,
      text_norm: lowerPerCodePoint(text),
      processed_at: trace.processedAt,
    });
  }
  return rows;
}
