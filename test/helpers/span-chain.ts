import crypto from 'node:crypto';

/**
 * A trace whose spans form one parent chain (each span the child of the one before), the shape
 * that made depth walks quadratic. Built as OTLP/JSON
 * request objects so unit tests can decode/normalize them and integration tests can send them.
 */
export interface ChainOptions {
  /** Spans in the chain. */
  length: number;
  traceId?: string;
  /** Epoch ms of the root's start; each span starts 1 µs after its parent. */
  startMs?: number;
  /** Every `usageEvery`-th span is a generation with usage (0: none). */
  usageEvery?: number;
  /** Spans are sent in this many requests (chunks of the chain, in order). */
  requests?: number;
}

const spanIdOf = (i: number) => (i + 1).toString(16).padStart(16, '0');

export function chainRequests(options: ChainOptions): { traceId: string; bodies: object[] } {
  const traceId = options.traceId ?? crypto.randomBytes(16).toString('hex');
  const startNs = BigInt(options.startMs ?? Date.now()) * 1_000_000n;
  const endNs = startNs + BigInt(options.length) * 1000n + 1_000_000n;
  const spans: object[] = [];
  for (let i = 0; i < options.length; i++) {
    const usage = options.usageEvery && i > 0 && i % options.usageEvery === 0;
    spans.push({
      traceId,
      spanId: spanIdOf(i),
      ...(i > 0 ? { parentSpanId: spanIdOf(i - 1) } : {}),
      name: i === 0 ? 'invoke_agent chain' : usage ? 'chat m' : `step ${i}`,
      kind: 1,
      startTimeUnixNano: (startNs + BigInt(i) * 1000n).toString(),
      endTimeUnixNano: endNs.toString(),
      attributes: [
        ...(i === 0 ? [{ key: 'gen_ai.agent.name', value: { stringValue: 'chain-agent' } }, { key: 'gen_ai.operation.name', value: { stringValue: 'invoke_agent' } }] : []),
        ...(usage
          ? [
              { key: 'gen_ai.operation.name', value: { stringValue: 'chat' } },
              { key: 'gen_ai.request.model', value: { stringValue: 'gpt-4o' } },
              { key: 'gen_ai.usage.input_tokens', value: { intValue: '3' } },
              { key: 'gen_ai.usage.output_tokens', value: { intValue: '2' } },
            ]
          : []),
      ],
      status: {},
    });
  }
  const requests = Math.max(1, options.requests ?? 1);
  const per = Math.ceil(spans.length / requests);
  const bodies: object[] = [];
  for (let i = 0; i < spans.length; i += per) {
    bodies.push({
      resourceSpans: [{
        resource: { attributes: [{ key: 'service.name', value: { stringValue: 'chain-svc' } }] },
        scopeSpans: [{ scope: { name: 'lookout-test' }, spans: spans.slice(i, i + per) }],
      }],
    });
  }
  return { traceId, bodies };
}
