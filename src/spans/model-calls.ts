import { compareNs, type NormalizedSpan } from './normalized-span.js';
import type { SpanTree } from './span-tree.js';

/**
 * One model call seen by two instrumentations (docs/ingestion.md "One model call, counted once").
 * A framework's model-call span (pydantic-ai's `chat gpt-4o-mini`, LangChain's LLM run) often has
 * the client library's span for the very same request below it (the OpenAI instrumentation's
 * `chat gpt-4o-mini`), each with its own usage attributes. Counted as two calls, the model
 * scorecard doubles the tokens; priced from only one, the cached tokens the other reports are lost.
 *
 * A model-call span (span class generation) is the same call as its nearest model-call ancestor
 * when all of these hold:
 * - the same operation (modelCallOperation: chat, completion or embeddings);
 * - their times overlap;
 * - input and output tokens each equal, or missing on one side.
 * Same-call spans form a chain; the outermost span of the chain holds the call's one
 * generation.completed row, and the call's usage takes each field (model, provider, input, output,
 * cached and cache-write tokens) from the innermost span of the chain that reports it, so the row,
 * the trace total and the price agree. An ancestor that reports the sum of several calls differs in
 * usage from each of them and stays a call of its own, as before.
 *
 * The outermost span holds the row because that is the side ingestion can decide from one request:
 * a span whose ancestors are all in the request knows it has no same-call ancestor, while a span
 * cannot know about descendants that come in another request. A model-call span whose ancestry is
 * open in its request (a parent missing before a model-call ancestor or the root) gets its row at
 * settling, when the whole trace is read; settling rewrites every row that may differ (same key,
 * newer version replaces it), so a re-sent span or a second settle never adds a row.
 */

export type ModelCallOperation = 'chat' | 'completion' | 'embeddings';

/** The operation of a model-call span, by the first convention that names one; chat otherwise. */
export function modelCallOperation(span: NormalizedSpan): ModelCallOperation {
  const a = span.attributes;
  const op = a['gen_ai.operation.name'];
  if (op === 'embeddings') return 'embeddings';
  if (op === 'text_completion') return 'completion';
  if (typeof op === 'string' && op !== '') return 'chat';
  const kind = a['openinference.span.kind'];
  if (kind === 'EMBEDDING') return 'embeddings';
  if (kind === 'LLM') return 'chat';
  // OpenLLMetry (Traceloop) names the request type.
  const type = a['llm.request.type'];
  if (type === 'embedding') return 'embeddings';
  if (type === 'completion') return 'completion';
  const ai = a['ai.operationId'];
  if (typeof ai === 'string' && ai.startsWith('ai.embed')) return 'embeddings';
  return 'chat';
}

const agrees = (a: number | null, b: number | null): boolean => a === null || b === null || a === b;

/** `inner` (below `outer`) is the same model call as `outer`. */
export function sameModelCall(outer: NormalizedSpan, inner: NormalizedSpan): boolean {
  if (modelCallOperation(outer) !== modelCallOperation(inner)) return false;
  if (compareNs(inner.startNs, outer.endNs) > 0 || compareNs(outer.startNs, inner.endNs) > 0) return false;
  return agrees(outer.inputTokens, inner.inputTokens) && agrees(outer.outputTokens, inner.outputTokens);
}

/** The usage of one model call, completed across the spans that saw it. */
export interface CallUsage {
  model: string;
  provider: string;
  inputTokens: number | null;
  outputTokens: number | null;
  cachedInputTokens: number | null;
  cacheWriteInputTokens: number | null;
  /** The innermost span's duration: the request itself, without the framework's work around it. */
  durationMs: number;
  /** Any span of the call failed. */
  error: boolean;
  /** The spans of the call, outermost first. */
  spans: NormalizedSpan[];
}

export interface ModelCalls {
  /** Spans holding their call's generation.completed row (input order), with the call's usage. */
  holders: Map<NormalizedSpan, CallUsage>;
  /** Holders whose ancestry is open in this set (only when resolved as part of a trace): no row yet. */
  undecided: Set<NormalizedSpan>;
  /** The call a model-call span belongs to (its holder's usage). */
  callOf(span: NormalizedSpan): CallUsage | undefined;
}

/**
 * Groups the model-call spans of `tree` into calls. `partial`: the tree is one request's part of
 * a trace (ingest), so a holder whose ancestry is open is undecided; for a whole trace (settling)
 * a missing parent is taken as no ancestor.
 */
export function resolveModelCalls(tree: SpanTree, partial: boolean): ModelCalls {
  const holderOf = new Map<NormalizedSpan, NormalizedSpan>();
  const find = (span: NormalizedSpan): NormalizedSpan => {
    const path: NormalizedSpan[] = [];
    let s = span;
    for (;;) {
      const known = holderOf.get(s);
      if (known !== undefined) {
        s = known;
        break;
      }
      const up = tree.modelCallAncestor(s);
      if (up === null || !sameModelCall(up, s)) break;
      path.push(s);
      s = up;
    }
    for (const p of path) holderOf.set(p, s);
    holderOf.set(s, s);
    return s;
  };
  const members = new Map<NormalizedSpan, NormalizedSpan[]>();
  for (const s of tree.spans) {
    if (s.spanClass !== 'generation') continue;
    const h = find(s);
    const list = members.get(h);
    if (list) list.push(s);
    else members.set(h, [s]);
  }
  const holders = new Map<NormalizedSpan, CallUsage>();
  const undecided = new Set<NormalizedSpan>();
  for (const [h, list] of members) {
    holders.set(h, callUsage(tree, list));
    if (partial && tree.ancestryOpen(h)) undecided.add(h);
  }
  return {
    holders,
    undecided,
    callOf: (span) => {
      const h = holderOf.get(span);
      return h === undefined ? undefined : holders.get(h);
    },
  };
}

function callUsage(tree: SpanTree, list: NormalizedSpan[]): CallUsage {
  if (list.length === 1) {
    const s = list[0];
    return {
      model: s.model,
      provider: s.provider,
      inputTokens: s.inputTokens,
      outputTokens: s.outputTokens,
      cachedInputTokens: s.cachedInputTokens,
      cacheWriteInputTokens: s.cacheWriteInputTokens,
      durationMs: s.durationMs,
      error: s.statusCode === 'ERROR',
      spans: list,
    };
  }
  const spans = [...list].sort((a, b) => tree.depth(a) - tree.depth(b));
  const innermost = <T>(get: (s: NormalizedSpan) => T, missing: T): T => {
    for (let k = spans.length - 1; k >= 0; k--) {
      const v = get(spans[k]);
      if (v !== missing) return v;
    }
    return missing;
  };
  return {
    model: innermost((s) => s.model, ''),
    provider: innermost((s) => s.provider, ''),
    inputTokens: innermost((s) => s.inputTokens, null),
    outputTokens: innermost((s) => s.outputTokens, null),
    cachedInputTokens: innermost((s) => s.cachedInputTokens, null),
    cacheWriteInputTokens: innermost((s) => s.cacheWriteInputTokens, null),
    durationMs: spans[spans.length - 1].durationMs,
    error: spans.some((s) => s.statusCode === 'ERROR'),
    spans,
  };
}
