import { describe, expect, it } from 'vitest';
import { normalizeExport, type NormalizedSpan } from '../../../src/spans/normalized-span.js';
import { decodeJsonExport } from '../../../src/ingest/otlp/otlp-decode-json.js';
import { buildSpanTree } from '../../../src/spans/span-tree.js';
import { summarizeTrace } from '../../../src/spans/trace-summary.js';
import { orderSpans } from '../../../src/traces/trace-view.js';
import { chainRequests } from '../../helpers/span-chain.js';

const scope = { tenantId: 't1', projectId: 'p1' };

function chain(length: number, usageEvery = 0): NormalizedSpan[] {
  const { bodies } = chainRequests({ length, usageEvery, startMs: Date.UTC(2026, 10, 20) });
  return normalizeExport(decodeJsonExport(JSON.stringify(bodies[0])), scope);
}

describe('span tree: linear walks', () => {
  it('gives depth, agent and usage facts on a deep chain', () => {
    const spans = chain(5000, 10);
    const tree = buildSpanTree(spans);
    expect(tree.depth(spans[0])).toBe(0);
    expect(tree.depth(spans[4999])).toBe(4999);
    expect(tree.agentNameOf(spans[4999])).toBe('chain-agent');
    // Only the deepest usage-carrying span counts: every other one has usage below it.
    expect([...tree.counted].map((s) => s.spanId)).toEqual([spans[4990].spanId]);
  });

  it('sums output tokens below a tool through every level', () => {
    const spans = chain(6, 0);
    spans[1].spanClass = 'tool';
    spans[3].spanClass = 'tool';
    spans[5].outputTokens = 7;
    spans[5].inputTokens = 1;
    const tree = buildSpanTree(spans);
    expect(tree.toolOutputTokens(spans[1])).toBe(7);
    expect(tree.toolOutputTokens(spans[3])).toBe(7);
    expect(tree.toolOutputTokens(spans[2])).toBe(0);
  });

  it('cuts a parent cycle instead of looping', () => {
    const spans = chain(4);
    spans[0].parentSpanId = spans[3].spanId; // 0 → 3 → 2 → 1 → 0
    const tree = buildSpanTree(spans);
    expect(spans.map((s) => tree.depth(s))).toEqual([0, 1, 2, 3]);
  });

  it('reads each span a constant number of times, however deep the chain', () => {
    // Counting reads instead of timing: the old walk to the root per span read parentSpanId
    // n²/2 times (2·10⁸ here); a linear walk reads it a few times per span.
    let reads = 0;
    const spans = chain(20_000).map(
      (s) => new Proxy(s, { get: (target, key, receiver) => (key === 'parentSpanId' && reads++, Reflect.get(target, key, receiver)) }),
    );
    const tree = buildSpanTree(spans);
    for (const s of spans) {
      tree.depth(s);
      tree.agentNameOf(s);
      tree.toolOutputTokens(s);
    }
    expect(reads).toBeLessThan(10 * spans.length);
  });

  it('summarizes and orders a 100,000-span chain in seconds', () => {
    const spans = chain(100_000, 1000);
    const start = performance.now();
    const summary = summarizeTrace(spans, { origin: { actor: 'sdk', surface: 'otlp', user_id: '', api_key_id: '' }, processedAt: '2026-11-20 00:00:00.000' });
    const ordered = orderSpans(spans, summary.tree);
    const elapsed = performance.now() - start;
    expect(summary.trace.span_count).toBe(100_000);
    expect(summary.processed.agent_name).toBe('chain-agent');
    expect(summary.processed.output_tokens).toBe(2);
    expect(ordered[0].spanId).toBe(spans[0].spanId);
    expect(ordered[99_999].spanId).toBe(spans[99_999].spanId);
    expect(elapsed).toBeLessThan(20_000);
  });
});
