import type { ProcessedTrace } from '../../ingest/trace-hooks.js';

/**
 * What a monitor looks for in one processed trace (docs/monitors.md "Signals").
 *
 * Guidance is written as clauses, separated by new lines, `;` or `,`:
 * - `key=value`  a span attribute `key` whose value equals `value` (case-insensitive);
 * - `key~value`  a span attribute `key` whose value contains `value`;
 * - `key?`       any span carries attribute `key`;
 * - anything else (quotes optional) is a phrase: case-insensitive substring.
 * Matching is plain substring/equality, never caller-supplied regular expressions, so a hostile
 * pattern cannot stall the evaluator.
 */
export type Clause =
  | { type: 'phrase'; text: string }
  | { type: 'attribute'; key: string; op: 'eq' | 'contains' | 'exists'; value: string };

/** A signal monitor: seed clauses say where to look, expected clauses what normal looks like there. */
export interface SignalDefinition {
  kind: 'signal';
  seed: Clause[];
  expected: Clause[];
}

/** A tool monitor: calls of one tool, of which those meeting the issue criteria are matches. */
export interface ToolDefinition {
  kind: 'tool';
  tool_name: string;
  /** A failed call is a match. */
  error: boolean;
  /** A call whose output contains one of these (case-insensitive) is a match. */
  output_patterns: string[];
}

export type MonitorDefinition = SignalDefinition | ToolDefinition;

/** Per trace: how many units were looked at (tool calls, or 1 trace) and how many matched. */
export interface TraceObservation {
  calls: number;
  matches: number;
  /** Span ids of the matching calls (tool) or of the trace's failed spans (signal), for issue occurrences. */
  matchedSpanIds: string[];
}

const MAX_CLAUSES = 50;
const MAX_CLAUSE = 500;
/** Only this much of one text field is searched: bounded work per trace. */
const MAX_SEARCHED = 100_000;

export class GuidanceError extends Error {}

function unquote(text: string): string {
  const quoted = /^"(.*)"$|^'(.*)'$/.exec(text);
  return quoted ? (quoted[1] ?? quoted[2]) : text;
}

/** Parses guidance text into clauses; throws GuidanceError naming what is wrong. */
export function parseClauses(text: string | null | undefined, field: string): Clause[] {
  if (!text) return [];
  const parts = text.split(/[\n;,]/).map((p) => p.trim()).filter(Boolean);
  if (parts.length > MAX_CLAUSES) throw new GuidanceError(`${field}: at most ${MAX_CLAUSES} clauses`);
  return parts.map((part) => {
    if (part.length > MAX_CLAUSE) throw new GuidanceError(`${field}: a clause is longer than ${MAX_CLAUSE} characters`);
    const attribute = /^([A-Za-z_][\w.-]*)\s*(=|~|\?)\s*(.*)$/.exec(part);
    if (attribute && !/\s/.test(attribute[1])) {
      const [, key, symbol, rest] = attribute;
      const value = unquote(rest.trim());
      if (symbol === '?') {
        if (value) throw new GuidanceError(`${field}: '${part}' — an existence clause is just 'key?'`);
        return { type: 'attribute', key, op: 'exists', value: '' };
      }
      if (!value) throw new GuidanceError(`${field}: '${part}' needs a value after '${symbol}'`);
      return { type: 'attribute', key, op: symbol === '=' ? 'eq' : 'contains', value: value.toLowerCase() };
    }
    const phrase = unquote(part).toLowerCase();
    if (!phrase) throw new GuidanceError(`${field}: empty phrase`);
    return { type: 'phrase', text: phrase };
  });
}

function stringOf(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === null || value === undefined) return '';
  try {
    return typeof value === 'string' ? value : JSON.stringify(value);
  } catch {
    return '';
  }
}

function lowered(text: string): string {
  return text.slice(0, MAX_SEARCHED).toLowerCase();
}

interface Haystack {
  texts: string[];
  attributes: Record<string, Record<string, unknown>>;
}

function clauseMatches(clause: Clause, hay: Haystack): boolean {
  if (clause.type === 'phrase') return hay.texts.some((t) => t.includes(clause.text));
  for (const attributes of Object.values(hay.attributes)) {
    if (!Object.prototype.hasOwnProperty.call(attributes, clause.key)) continue;
    const value = lowered(stringOf(attributes[clause.key]));
    if (clause.op === 'exists') return true;
    if (clause.op === 'eq' ? value === clause.value : value.includes(clause.value)) return true;
  }
  return false;
}

/**
 * A signal matches a trace when a seed clause matches (agent input, agent output or any span
 * attribute value for phrases; span attributes for attribute clauses) and no expected clause matches
 * (agent output for phrases; span attributes for attribute clauses). Without seed clauses the seed
 * is "the trace failed".
 */
export function signalMatches(definition: SignalDefinition, trace: ProcessedTrace): boolean {
  const attributes = trace.spanAttributes ?? {};
  const attributeTexts = Object.values(attributes).flatMap((attrs) => Object.values(attrs).map((v) => lowered(stringOf(v))));
  const seedHit =
    definition.seed.length === 0
      ? trace.hasError
      : definition.seed.some((c) =>
          clauseMatches(c, { texts: [lowered(trace.agentInput ?? ''), lowered(trace.agentOutput ?? ''), ...attributeTexts], attributes }),
        );
  if (!seedHit) return false;
  const expectedHit = definition.expected.some((c) => clauseMatches(c, { texts: [lowered(trace.agentOutput ?? '')], attributes }));
  return !expectedHit;
}

/**
 * Whether the monitor reads span attributes: a signal's seed phrases search attribute values and its
 * attribute clauses read them. Only such monitors get a processed trace's attributes (a trace that
 * settled without them, ProcessedTrace.spanAttributes null, is not observed by them).
 */
export function readsSpanAttributes(definition: MonitorDefinition): boolean {
  return definition.kind === 'signal' && (definition.seed.length > 0 || definition.expected.some((c) => c.type === 'attribute'));
}

/** A call of the tool matches when it failed (criteria.error) or its output contains an output pattern. */
export function toolCallMatches(definition: ToolDefinition, call: ProcessedTrace['toolCalls'][number]): boolean {
  if (definition.error && call.is_error) return true;
  if (definition.output_patterns.length === 0) return false;
  const output = lowered(call.output ?? '');
  return definition.output_patterns.some((p) => output.includes(p));
}

export function observe(definition: MonitorDefinition, trace: ProcessedTrace): TraceObservation {
  if (definition.kind === 'tool') {
    const calls = trace.toolCalls.filter((c) => c.name === definition.tool_name);
    const matching = calls.filter((c) => toolCallMatches(definition, c));
    return { calls: calls.length, matches: matching.length, matchedSpanIds: matching.map((c) => c.span_id) };
  }
  const matched = signalMatches(definition, trace);
  return {
    calls: 1,
    matches: matched ? 1 : 0,
    matchedSpanIds: matched ? trace.failures.map((f) => f.span_id) : [],
  };
}
