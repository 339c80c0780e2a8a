import crypto from 'node:crypto';

/**
 * Builds OTLP/JSON export requests for tests: one agent run = an agent root span, one generation
 * per model call with gen_ai usage attributes, and one span per tool call (optionally failing).
 */
export interface RunSpec {
  start: Date;
  agent: string;
  service?: string;
  generations: { model: string; input: number; output: number; ms?: number }[];
  tools?: { name: string; error?: boolean; ms?: number }[];
  failed?: boolean;
  threadId?: string;
  /** The resource's service.version, which is the trace's release (default 1.0.0). */
  release?: string;
  /** The agent's input and output, on the root span (OpenInference input.value / output.value). */
  input?: string;
  output?: string;
}

const hex = (bytes: number) => crypto.randomBytes(bytes).toString('hex');
const ns = (date: Date, plusMs = 0) => (BigInt(date.getTime() + plusMs) * 1_000_000n).toString();
const attr = (key: string, value: string | number) =>
  typeof value === 'number' ? { key, value: { intValue: String(value) } } : { key, value: { stringValue: value } };

export function agentRunRequest(run: RunSpec): { body: string; traceId: string } {
  const traceId = hex(16);
  const rootId = hex(8);
  const spans: unknown[] = [];
  let offset = 10;
  for (const g of run.generations) {
    const ms = g.ms ?? 500;
    spans.push({
      traceId, spanId: hex(8), parentSpanId: rootId, name: `chat ${g.model}`, kind: 3,
      startTimeUnixNano: ns(run.start, offset), endTimeUnixNano: ns(run.start, offset + ms),
      attributes: [
        attr('gen_ai.operation.name', 'chat'), attr('gen_ai.request.model', g.model), attr('gen_ai.provider.name', 'openai'),
        attr('gen_ai.usage.input_tokens', g.input), attr('gen_ai.usage.output_tokens', g.output),
      ],
      status: {},
    });
    offset += ms + 10;
  }
  for (const t of run.tools ?? []) {
    const ms = t.ms ?? 100;
    spans.push({
      traceId, spanId: hex(8), parentSpanId: rootId, name: `execute_tool ${t.name}`, kind: 1,
      startTimeUnixNano: ns(run.start, offset), endTimeUnixNano: ns(run.start, offset + ms),
      attributes: [attr('gen_ai.operation.name', 'execute_tool'), attr('gen_ai.tool.name', t.name)],
      status: t.error ? { code: 2, message: `${t.name} failed` } : {},
    });
    offset += ms + 10;
  }
  spans.unshift({
    traceId, spanId: rootId, name: `invoke_agent ${run.agent}`, kind: 1,
    startTimeUnixNano: ns(run.start), endTimeUnixNano: ns(run.start, offset + 10),
    attributes: [
      attr('gen_ai.operation.name', 'invoke_agent'), attr('gen_ai.agent.name', run.agent),
      ...(run.threadId ? [attr('gen_ai.conversation.id', run.threadId)] : []),
      ...(run.input !== undefined ? [attr('input.value', run.input)] : []),
      ...(run.output !== undefined ? [attr('output.value', run.output)] : []),
    ],
    status: run.failed ? { code: 2, message: 'agent failed' } : { code: 1 },
  });
  const body = {
    resourceSpans: [{
      resource: { attributes: [attr('service.name', run.service ?? 'test-agent'), attr('service.version', run.release ?? '1.0.0')] },
      scopeSpans: [{ scope: { name: 'lookout-test' }, spans }],
    }],
  };
  return { body: JSON.stringify(body), traceId };
}

/** Sends runs to /v1/traces as OTLP/JSON for a project; throws unless each is answered 200. */
export async function sendRuns(url: string, key: string, projectId: string, runs: RunSpec[]): Promise<string[]> {
  const ids: string[] = [];
  for (const run of runs) {
    const { body, traceId } = agentRunRequest(run);
    const res = await fetch(`${url}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}`, 'x-lookout-project': projectId },
      body,
    });
    if (res.status !== 200) throw new Error(`ingest answered ${res.status}: ${await res.text()}`);
    ids.push(traceId);
  }
  return ids;
}
