import type { NormalizedSpan } from './normalized-span.js';

/**
 * The parent/child structure of a set of spans of one trace (all of it at settling, or the part
 * that came in one request at ingest), and the facts that depend on it:
 *
 * - counted usage: only the leaf-most spans that carry token usage count. A parent span (an agent,
 *   the AI SDK's generateText) whose descendants report usage usually reports their sum again;
 *   counting it too is the double counting users of other tools complain about.
 * - each span's agent: the name on its nearest agent-invocation span (itself or an ancestor,
 *   attribute-mapping AGENT_INVOCATION_MARKERS), else its own agent name, else its nearest
 *   ancestor's. A placeholder name copied onto every span never hides the invoked agent's.
 * - each model-call span's nearest model-call ancestor, and whether its ancestry is open (a parent
 *   is not in the set before one is reached): what model-calls.ts needs to tell one call seen by
 *   two instrumentations from two calls.
 * - each tool span's output tokens: its own usage, else the counted usage below it (a tool that
 *   runs a sub-agent or a model).
 * - each span's depth (the root is 0).
 *
 * Everything is computed once, in O(n), by one breadth-first walk from the roots (top-down facts:
 * depth, agent) and the same order reversed (bottom-up facts: usage below, tokens below). No walk
 * recurses and none follows a parent chain per span, so a single parent chain of 100,000 spans
 * costs what 100,000 siblings cost (walking to the root per span made it quadratic: 20,000 spans
 * blocked the service for 10 s). A malformed trace whose parent links form a cycle is cut at the
 * first span of the cycle met in input order, which then acts as a root.
 */
export interface SpanTree {
  spans: NormalizedSpan[];
  byId: Map<string, NormalizedSpan>;
  roots: NormalizedSpan[];
  /** Spans whose usage counts toward trace totals. */
  counted: Set<NormalizedSpan>;
  depth(span: NormalizedSpan): number;
  agentNameOf(span: NormalizedSpan): string;
  /** The nearest ancestor that is a model call (span class generation), null when none is in the set. */
  modelCallAncestor(span: NormalizedSpan): NormalizedSpan | null;
  /** A parent on the way up is missing from the set before a model-call ancestor or a root is reached. */
  ancestryOpen(span: NormalizedSpan): boolean;
  toolOutputTokens(span: NormalizedSpan): number;
}

export function hasUsage(span: NormalizedSpan): boolean {
  return span.inputTokens !== null || span.outputTokens !== null;
}

export function buildSpanTree(spans: NormalizedSpan[]): SpanTree {
  const n = spans.length;
  const byId = new Map<string, NormalizedSpan>();
  for (const s of spans) byId.set(s.spanId, s);
  const index = new Map<NormalizedSpan, number>();
  for (let i = 0; i < n; i++) index.set(spans[i], i);

  // parent[i]: index of the parent span, -1 for a root or a span whose parent is not in the set.
  const parent = new Int32Array(n).fill(-1);
  const firstChild = new Int32Array(n).fill(-1);
  const nextSibling = new Int32Array(n).fill(-1);
  for (let i = n - 1; i >= 0; i--) {
    const s = spans[i];
    if (s.parentSpanId === '' || s.parentSpanId === s.spanId) continue;
    const p = byId.get(s.parentSpanId);
    if (p === undefined) continue;
    const pi = index.get(p)!;
    parent[i] = pi;
    nextSibling[i] = firstChild[pi];
    firstChild[pi] = i;
  }

  // Breadth-first order: every span after its parent. Spans left unvisited sit on a cycle (or
  // below one); the first of them in input order is cut from its parent and walked as a root.
  const order = new Int32Array(n);
  const visited = new Uint8Array(n);
  let length = 0;
  const walkFrom = (start: number) => {
    let head = length;
    visited[start] = 1;
    order[length++] = start;
    while (head < length) {
      for (let c = firstChild[order[head++]]; c !== -1; c = nextSibling[c]) {
        if (visited[c]) continue;
        visited[c] = 1;
        order[length++] = c;
      }
    }
  };
  for (let i = 0; i < n; i++) if (parent[i] === -1) walkFrom(i);
  for (let i = 0; i < n && length < n; i++) {
    if (visited[i]) continue;
    parent[i] = -1;
    walkFrom(i);
  }

  const depths = new Int32Array(n);
  const agentNames: string[] = new Array<string>(n);
  const invokedNames: string[] = new Array<string>(n);
  const callAncestor = new Int32Array(n).fill(-1);
  const open = new Uint8Array(n);
  for (let k = 0; k < n; k++) {
    const i = order[k];
    const p = parent[i];
    const s = spans[i];
    depths[i] = p === -1 ? 0 : depths[p] + 1;
    const own = s.agentName;
    agentNames[i] = own !== '' || p === -1 ? own : agentNames[p];
    invokedNames[i] = s.agentInvocation && own !== '' ? own : p === -1 ? '' : invokedNames[p];
    if (p === -1) {
      // A cycle cut leaves the parent id pointing inside the set: that ancestry is not open.
      open[i] = s.parentSpanId !== '' && !byId.has(s.parentSpanId) ? 1 : 0;
    } else if (spans[p].spanClass === 'generation') {
      callAncestor[i] = p;
    } else {
      callAncestor[i] = callAncestor[p];
      open[i] = open[p];
    }
  }

  // Bottom-up: whether any descendant carries usage, and the counted output tokens below each span.
  const usageBelow = new Uint8Array(n);
  const tokensBelow = new Float64Array(n);
  for (let k = n - 1; k >= 0; k--) {
    const i = order[k];
    const s = spans[i];
    const usage = hasUsage(s);
    const isCounted = usage && usageBelow[i] === 0;
    const p = parent[i];
    if (p === -1) continue;
    if (usage || usageBelow[i]) usageBelow[p] = 1;
    tokensBelow[p] += (isCounted ? (s.outputTokens ?? 0) : 0) + tokensBelow[i];
  }
  // In input order: the counted set's order reaches the cost module's list of generations.
  const counted = new Set<NormalizedSpan>();
  for (let i = 0; i < n; i++) if (hasUsage(spans[i]) && usageBelow[i] === 0) counted.add(spans[i]);

  const at = (span: NormalizedSpan): number => {
    const i = index.get(span);
    if (i === undefined) throw new Error(`span ${span.spanId} is not part of this tree`);
    return i;
  };

  return {
    spans,
    byId,
    roots: spans.filter((s) => s.parentSpanId === ''),
    counted,
    depth: (span) => depths[at(span)],
    agentNameOf: (span) => {
      const i = at(span);
      return invokedNames[i] || agentNames[i];
    },
    modelCallAncestor: (span) => {
      const a = callAncestor[at(span)];
      return a === -1 ? null : spans[a];
    },
    ancestryOpen: (span) => open[at(span)] === 1,
    toolOutputTokens: (span) => {
      const i = at(span);
      if (hasUsage(span) && usageBelow[i] === 0) return span.outputTokens ?? 0;
      return span.spanClass === 'tool' ? tokensBelow[i] : 0;
    },
  };
}
