import { randomBytes } from 'node:crypto';
import { otlpSchema } from '../../src/ingest/otlp/otlp-schema.js';

/**
 * Synthetic but realistic OTLP export batches for the ingest benchmarks and the load tests: each trace is an agent run
 * (invoke_agent root → 5 chat generations with gen_ai usage → 4 tool calls; one run in ten has a
 * failing tool call), ten
 * spans, with the attribute sets GenAI instrumentations emit. Every batch has fresh ids, so the
 * service stores all of it (nothing is skipped as a duplicate).
 */

const SPANS_PER_TRACE = 10;
const MODELS = ['gpt-4o-2024-08-06', 'claude-3-5-sonnet-20241022', 'gpt-4o-mini'];
const TOOLS = ['search_docs', 'lookup_order', 'create_ticket', 'reply_to_user'];

type Kv = { key: string; value: Record<string, unknown> };
const str = (key: string, v: string): Kv => ({ key, value: { stringValue: v } });
const int = (key: string, v: number): Kv => ({ key, value: { intValue: v } });

interface SpanSpec {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  start: bigint;
  end: bigint;
  attributes: Kv[];
  error: boolean;
}

/**
 * Captured content: instrumentations that record prompts and completions put them on each
 * generation span (`gen_ai.input.messages` / `gen_ai.output.messages`). 0 bytes: none (the default,
 * ~220 B of attributes per span); e.g. 4096 / 1024 for an agent whose content is captured.
 */
export interface CapturedContent {
  promptBytes: number;
  completionBytes: number;
}

const NO_CONTENT: CapturedContent = { promptBytes: 0, completionBytes: 0 };

/** OTLP GenAI messages JSON of about `bytes` characters of text (0: none). */
function messages(role: string, bytes: number, n: number): string {
  const unit = `Order ${n}: the customer asks where the parcel is and when it arrives. `;
  const text = unit.repeat(Math.ceil(bytes / unit.length)).slice(0, bytes);
  return JSON.stringify([{ role, parts: [{ type: 'text', content: text }] }]);
}

/**
 * One trace's shape beyond the default ten spans (the freshness benchmark): its span count, a
 * failing tool of its own name (a failure no other trace shares, so it opens an issue of its own),
 * and the agent and thread it names.
 */
export interface TraceShape {
  spans: number;
  failTool?: string;
  agent?: string;
  thread?: string;
}

function traceSpans(base: bigint, n: number, content: CapturedContent, shape: TraceShape = { spans: SPANS_PER_TRACE }): SpanSpec[] {
  const traceId = randomBytes(16).toString('hex');
  const rootId = randomBytes(8).toString('hex');
  const ms = 1_000_000n;
  const spans: SpanSpec[] = [
    {
      traceId,
      spanId: rootId,
      parentSpanId: '',
      name: 'invoke_agent support-agent',
      kind: 1,
      start: base,
      end: base + BigInt(Math.max(9000, 10 + (shape.spans - 1) * 900)) * ms,
      attributes: [
        str('gen_ai.operation.name', 'invoke_agent'),
        str('gen_ai.agent.name', shape.agent ?? `agent-${n % 5}`),
        str('gen_ai.conversation.id', shape.thread ?? `thread-${n % 97}`),
        str('gen_ai.input.messages', JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: `Where is my order #${n}?` }] }])),
      ],
      error: false,
    },
  ];
  for (let i = 0; i < shape.spans - 1; i++) {
    const start = base + BigInt(10 + i * 900) * ms;
    const isTool = i % 2 === 1;
    const model = MODELS[(n + i) % MODELS.length];
    const failing = shape.failTool !== undefined && i === 1;
    const tool = failing ? shape.failTool! : TOOLS[(i >> 1) % TOOLS.length];
    spans.push({
      traceId,
      spanId: randomBytes(8).toString('hex'),
      parentSpanId: rootId,
      name: isTool ? `execute_tool ${tool}` : `chat ${model}`,
      kind: isTool ? 1 : 3,
      start,
      end: start + 850n * ms,
      attributes: isTool
        ? [
            str('gen_ai.operation.name', 'execute_tool'),
            str('gen_ai.tool.name', tool),
            str('gen_ai.tool.call.arguments', `{"order_id":"A-${n}","message":"Your order ships tomorrow."}`),
          ]
        : [
            str('gen_ai.operation.name', 'chat'),
            str('gen_ai.provider.name', model.startsWith('claude') ? 'anthropic' : 'openai'),
            str('gen_ai.request.model', model),
            str('gen_ai.response.model', model),
            int('gen_ai.usage.input_tokens', 800 + i * 37),
            int('gen_ai.usage.output_tokens', 40 + i),
            str('gen_ai.response.finish_reasons', 'stop'),
            ...(content.promptBytes > 0 ? [str('gen_ai.input.messages', messages('user', content.promptBytes, n))] : []),
            ...(content.completionBytes > 0 ? [str('gen_ai.output.messages', messages('assistant', content.completionBytes, n))] : []),
          ],
      // One run in ten has a failing tool call (by default; a shape names its own).
      error: shape.failTool !== undefined ? failing : isTool && i === 3 && n % 10 === 0,
    });
  }
  return spans;
}

export interface Batch {
  protobuf: Buffer;
  json: Buffer;
  spans: number;
  /** OTLP trace ids (hex) of the batch's traces, in order. */
  traceIds: string[];
}

let counter = 0;

/** A batch of `spans` spans (a multiple of 10): protobuf and JSON encodings of the same content. */
export function syntheticBatch(spans: number, nowNs = BigInt(Date.now()) * 1_000_000n, content: CapturedContent = NO_CONTENT): Batch {
  return shapedBatch(Array.from({ length: spans / SPANS_PER_TRACE }, () => ({ spans: SPANS_PER_TRACE })), nowNs, content);
}

/** A batch of traces of the given shapes (at least two spans each), in order. */
export function shapedBatch(shapes: TraceShape[], nowNs = BigInt(Date.now()) * 1_000_000n, content: CapturedContent = NO_CONTENT): Batch {
  const all: SpanSpec[] = [];
  shapes.forEach((shape, t) => all.push(...traceSpans(nowNs - BigInt(t) * 1_000_000n, counter++, content, shape)));
  const resource = { attributes: [str('service.name', 'bench-agent'), str('service.version', '1.0.0')] };
  const scope = { name: 'bench', version: '1.0.0' };
  const json = {
    resourceSpans: [
      {
        resource,
        scopeSpans: [
          {
            scope,
            spans: all.map((s) => ({
              traceId: s.traceId,
              spanId: s.spanId,
              ...(s.parentSpanId ? { parentSpanId: s.parentSpanId } : {}),
              name: s.name,
              kind: s.kind,
              startTimeUnixNano: s.start.toString(),
              endTimeUnixNano: s.end.toString(),
              attributes: s.attributes,
              ...(s.error ? { status: { code: 2, message: 'upstream timed out' } } : {}),
            })),
          },
        ],
      },
    ],
  };
  const type = otlpSchema().ExportTraceServiceRequest;
  const message = type.fromObject({
    resourceSpans: [
      {
        resource,
        scopeSpans: [
          {
            scope,
            spans: all.map((s) => ({
              traceId: Buffer.from(s.traceId, 'hex'),
              spanId: Buffer.from(s.spanId, 'hex'),
              parentSpanId: s.parentSpanId ? Buffer.from(s.parentSpanId, 'hex') : Buffer.alloc(0),
              name: s.name,
              kind: s.kind,
              startTimeUnixNano: s.start.toString(),
              endTimeUnixNano: s.end.toString(),
              attributes: s.attributes,
              ...(s.error ? { status: { code: 2, message: 'upstream timed out' } } : {}),
            })),
          },
        ],
      },
    ],
  });
  const traceIds = [...new Set(all.map((s) => s.traceId))];
  return { protobuf: Buffer.from(type.encode(message).finish()), json: Buffer.from(JSON.stringify(json)), spans: all.length, traceIds };
}
