import crypto from 'node:crypto';

/**
 * One OTLP/JSON trace with `spans` child spans under a root, sent to POST /v1/traces: enough spans
 * that the trace page has to page through the context bundle (the demo's runs are shorter).
 */
export async function sendLongTrace(baseUrl: string, key: string, projectId: string, spans: number): Promise<string> {
  const hex = (bytes: number) => crypto.randomBytes(bytes).toString('hex');
  const text = (key: string, value: string) => ({ key, value: { stringValue: value } });
  const traceId = hex(16);
  const rootId = hex(8);
  const start = BigInt(Date.now() - 60_000) * 1_000_000n;
  const children = Array.from({ length: spans }, (_, i) => ({
    traceId,
    spanId: hex(8),
    parentSpanId: rootId,
    name: `step ${i}`,
    kind: 1,
    startTimeUnixNano: String(start + BigInt(i) * 10_000_000n),
    endTimeUnixNano: String(start + BigInt(i) * 10_000_000n + 8_000_000n),
    attributes: [text('step.index', String(i))],
    status: {},
  }));
  const root = {
    traceId,
    spanId: rootId,
    name: 'invoke_agent long-runner',
    kind: 2,
    startTimeUnixNano: String(start),
    endTimeUnixNano: String(start + BigInt(spans) * 10_000_000n),
    attributes: [text('gen_ai.operation.name', 'invoke_agent'), text('gen_ai.agent.name', 'long-runner')],
    status: { code: 1 },
  };
  const body = {
    resourceSpans: [{ resource: { attributes: [text('service.name', 'long-runner')] }, scopeSpans: [{ scope: { name: 'dashboard-e2e' }, spans: [root, ...children] }] }],
  };
  const res = await fetch(`${baseUrl}/v1/traces`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-lookout-project': projectId },
    body: JSON.stringify(body),
  });
  if (res.status !== 200) throw new Error(`OTLP export failed: ${res.status} ${await res.text()}`);
  return traceId;
}
