import type { NormalizedSpan } from './normalized-span.js';

/**
 * The parent/child structure of a set of spans of one trace (all of it at settling, or the part
 * that came in one request at ingest), and the facts that depend on it:
 *
 * - counted usage: only the leaf-most spans that carry token usage count. A parent span (an agent,
 *   the AI SDK's generateText) whose descendants report usage usually reports their sum again;
 *   counting it too is the double counting users of other tools complain about.
 * - each span's agent: its own agent name, else its nearest ancestor's.
 * - each tool span's output tokens: its own usage, else the counted usage below it (a tool that
 *   runs a sub-agent or a model).
 *
 * Parent links are followed with a step bound, so a malformed trace with a cycle cannot hang.
 */
export interface SpanTree {
  spans: NormalizedSpan[];
  byId: Map<string, NormalizedSpan>;
  roots: NormalizedSpan[];
  /** Spans whose usage counts toward trace totals. */
  counted: Set<NormalizedSpan>;
  depth(span: NormalizedSpan): number;
  agentNameOf(span: NormalizedSpan): string;
  toolOutputTokens(span: NormalizedSpan): number;
}

export function hasUsage(span: NormalizedSpan): boolean {
  return span.inputTokens !== null || span.outputTokens !== null;
}

export function buildSpanTree(spans: NormalizedSpan[]): SpanTree {
  const byId = new Map<string, NormalizedSpan>();
  for (const s of spans) byId.set(s.spanId, s);
  const limit = spans.length + 1;

  const parentOf = (s: NormalizedSpan): NormalizedSpan | undefined =>
    s.parentSpanId === '' || s.parentSpanId === s.spanId ? undefined : byId.get(s.parentSpanId);

  // Mark every ancestor of a usage-carrying span: those do not count.
  const hasUsageBelow = new Set<NormalizedSpan>();
  for (const s of spans) {
    if (!hasUsage(s)) continue;
    let p = parentOf(s);
    for (let steps = 0; p && steps < limit && !hasUsageBelow.has(p); steps++) {
      hasUsageBelow.add(p);
      p = parentOf(p);
    }
  }
  const counted = new Set<NormalizedSpan>();
  for (const s of spans) if (hasUsage(s) && !hasUsageBelow.has(s)) counted.add(s);

  const toolTokens = new Map<NormalizedSpan, number>();
  for (const s of counted) {
    const out = s.outputTokens ?? 0;
    let p = parentOf(s);
    for (let steps = 0; p && steps < limit; steps++) {
      if (p.spanClass === 'tool') toolTokens.set(p, (toolTokens.get(p) ?? 0) + out);
      p = parentOf(p);
    }
  }

  const agentNames = new Map<NormalizedSpan, string>();
  const agentNameOf = (span: NormalizedSpan): string => {
    const cached = agentNames.get(span);
    if (cached !== undefined) return cached;
    const chain: NormalizedSpan[] = [];
    let name = '';
    let s: NormalizedSpan | undefined = span;
    for (let steps = 0; s && steps < limit; steps++) {
      const known = agentNames.get(s);
      if (known !== undefined) {
        name = known;
        break;
      }
      chain.push(s);
      if (s.agentName !== '') {
        name = s.agentName;
        break;
      }
      s = parentOf(s);
    }
    for (const c of chain) agentNames.set(c, name);
    return name;
  };

  const depths = new Map<NormalizedSpan, number>();
  const depth = (span: NormalizedSpan): number => {
    const cached = depths.get(span);
    if (cached !== undefined) return cached;
    let d = 0;
    let p = parentOf(span);
    for (; p && d < limit; d++) p = parentOf(p);
    depths.set(span, d);
    return d;
  };

  return {
    spans,
    byId,
    roots: spans.filter((s) => s.parentSpanId === ''),
    counted,
    depth,
    agentNameOf,
    toolOutputTokens: (span) => (hasUsage(span) && !hasUsageBelow.has(span) ? (span.outputTokens ?? 0) : (toolTokens.get(span) ?? 0)),
  };
}
