/**
 * `npm run demo`: sends a realistic set of agent runs to a running Lookout through the real
 * OpenTelemetry SDK and its stock OTLP/protobuf exporter, so a newcomer sees data at once.
 *
 *   LOOKOUT_URL=http://localhost:8080 LOOKOUT_API_KEY=lk_... npm run demo
 *
 * LOOKOUT_PROJECT_ID picks the project; without it the demo uses (or, with an admin key, creates)
 * the project "Demo". Runs: 37 runs of four agents — 12 each of support, research and coding
 * (GenAI semantic conventions, four models, tools including a user-message tool, conversation
 * threads, some failures, spread over the last day) and one weather-agent run through the Vercel
 * AI SDK. At the end it prints the dashboard URL and commands that work as printed.
 */
import { context, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Context, type Tracer } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { ExportResultCode } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { generateText, stepCountIs, tool } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { z } from 'zod';

const BASE_URL = (process.env.LOOKOUT_URL ?? 'http://localhost:8080').replace(/\/$/, '');
const API_KEY = process.env.LOOKOUT_API_KEY ?? '';

interface AgentSpec {
  name: string;
  service: string;
  release: string;
  models: string[];
  tools: string[];
  requests: string[];
}

const AGENTS: AgentSpec[] = [
  {
    name: 'support-agent',
    service: 'helpdesk',
    release: '2.4.1',
    models: ['gpt-4o-2024-08-06', 'gpt-4o-mini'],
    tools: ['lookup_order', 'refund_order', 'search_help_center', 'reply_to_user'],
    requests: ['Where is my order #A-1001?', 'I was charged twice for my subscription.', 'How do I reset my password?', 'Can I return shoes after 40 days?'],
  },
  {
    name: 'research-agent',
    service: 'research',
    release: '0.9.0',
    models: ['claude-3-5-sonnet-20241022', 'claude-3-5-haiku-20241022'],
    tools: ['web_search', 'fetch_page', 'summarize_notes'],
    requests: ['Compare vector databases for 10M embeddings.', 'What changed in the EU AI Act this year?', 'Summarize recent work on speculative decoding.'],
  },
  {
    name: 'coding-agent',
    service: 'devbot',
    release: '1.12.0',
    models: ['gpt-4o-2024-08-06', 'claude-3-5-sonnet-20241022'],
    tools: ['read_file', 'run_tests', 'apply_patch', 'send_message'],
    requests: ['Fix the flaky date test in billing.', 'Add pagination to the /invoices endpoint.', 'Upgrade the logger and fix the warnings.'],
  },
];

function requireKey(): void {
  if (!API_KEY) {
    process.stderr.write('Set LOOKOUT_API_KEY to an ingest or admin key (and LOOKOUT_URL if Lookout is not on http://localhost:8080).\n');
    process.exit(2);
  }
}

async function api(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${BASE_URL}/api${path}`, {
    method,
    headers: { authorization: `Bearer ${API_KEY}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

/** The project to send to: LOOKOUT_PROJECT_ID, else "Demo" (created when the key may). */
async function demoProject(): Promise<string | null> {
  if (process.env.LOOKOUT_PROJECT_ID) return process.env.LOOKOUT_PROJECT_ID;
  const listed = await api('GET', '/projects');
  if (listed.status === 200) {
    const found = listed.body.projects.find((p: { name: string }) => p.name === 'Demo');
    if (found) return found.id;
    const created = await api('POST', '/projects', { name: 'Demo', description: 'Sample agent runs sent by npm run demo' });
    if (created.status === 201) return created.body.id;
  }
  // An ingest key limited to a project needs no project id: Lookout uses the key's.
  return null;
}

/** A seeded pseudo-random sequence, so every demo run sends the same shapes. */
function random(seed: number) {
  let x = seed;
  return () => {
    x = (x * 1103515245 + 12345) % 2147483648;
    return x / 2147483648;
  };
}

/** One agent run with explicit times (ms since epoch) under the GenAI conventions. */
function agentRun(tracer: Tracer, agent: AgentSpec, run: number, startMs: number, rnd: () => number): { failed: boolean } {
  const request = agent.requests[run % agent.requests.length];
  const thread = `${agent.name}-thread-${run % 4}`;
  const fail = run % 5 === 3;
  let t = startMs;
  const root = tracer.startSpan(`invoke_agent ${agent.name}`, {
    kind: SpanKind.INTERNAL,
    startTime: t,
    attributes: {
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': agent.name,
      'gen_ai.conversation.id': thread,
      'gen_ai.input.messages': JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: request }] }]),
    },
  });
  const parent: Context = trace.setSpan(ROOT_CONTEXT, root);
  const steps = 2 + Math.floor(rnd() * 3);
  for (let step = 0; step < steps; step++) {
    const model = agent.models[(run + step) % agent.models.length];
    const input = 600 + Math.floor(rnd() * 2400);
    const output = 30 + Math.floor(rnd() * 400);
    const llmMs = 400 + Math.floor(rnd() * 2600);
    const llm = tracer.startSpan(
      `chat ${model}`,
      {
        kind: SpanKind.CLIENT,
        startTime: t + 5,
        attributes: {
          'gen_ai.operation.name': 'chat',
          'gen_ai.provider.name': model.startsWith('claude') ? 'anthropic' : 'openai',
          'gen_ai.request.model': model,
          'gen_ai.response.model': model,
          'gen_ai.usage.input_tokens': input,
          'gen_ai.usage.output_tokens': output,
          ...(step > 0 ? { 'gen_ai.usage.cache_read.input_tokens': Math.floor(input / 2) } : {}),
          'gen_ai.response.finish_reasons': [step === steps - 1 ? 'stop' : 'tool_calls'],
        },
      },
      parent,
    );
    t += llmMs;
    llm.end(t);
    if (step === steps - 1) break;
    const toolName = agent.tools[(run + step) % (agent.tools.length - (agent.tools.includes('reply_to_user') || agent.tools.includes('send_message') ? 1 : 0))];
    const toolMs = 50 + Math.floor(rnd() * 900);
    const call = tracer.startSpan(
      `execute_tool ${toolName}`,
      {
        kind: SpanKind.INTERNAL,
        startTime: t + 2,
        attributes: {
          'gen_ai.operation.name': 'execute_tool',
          'gen_ai.tool.name': toolName,
          'gen_ai.tool.call.id': `call_${run}_${step}`,
          'gen_ai.tool.call.arguments': JSON.stringify({ query: request.slice(0, 40), step }),
        },
      },
      parent,
    );
    t += toolMs;
    if (fail && step === 0) {
      call.recordException(new Error(`${toolName} failed: upstream returned 503`), t);
      call.setStatus({ code: SpanStatusCode.ERROR, message: `${toolName} failed: upstream returned 503` });
    }
    call.end(t);
  }
  const answer = fail ? 'Sorry, I could not finish this request right now.' : `Done: ${request.toLowerCase()}`;
  const messageTool = agent.tools.find((name) => name === 'reply_to_user' || name === 'send_message');
  if (messageTool) {
    const reply = tracer.startSpan(
      `execute_tool ${messageTool}`,
      {
        startTime: t + 3,
        attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': messageTool, 'gen_ai.tool.call.arguments': JSON.stringify({ message: answer }) },
      },
      parent,
    );
    t += 120;
    reply.end(t);
  }
  // The final assistant message; an agent that answers through a message tool records that call too.
  const parts: unknown[] = [{ type: 'text', content: answer }];
  if (messageTool) parts.push({ type: 'tool_call', id: `reply_${run}`, name: messageTool, arguments: { message: answer } });
  root.setAttribute('gen_ai.output.messages', JSON.stringify([{ role: 'assistant', parts }]));
  if (fail) root.setStatus({ code: SpanStatusCode.ERROR, message: 'run failed after a tool error' });
  root.end(t + 10);
  return { failed: fail };
}

/** One run through the Vercel AI SDK (its mock model; telemetry on), to show that mapping too. */
async function vercelRun(tracer: Tracer): Promise<void> {
  let call = 0;
  const model = new MockLanguageModelV3({
    provider: 'openai.chat',
    modelId: 'gpt-4o-mini',
    doGenerate: async () => {
      call++;
      const usage = (input: number, output: number) => ({
        inputTokens: { total: input, noCache: input, cacheRead: undefined, cacheWrite: undefined },
        outputTokens: { total: output, text: output, reasoning: undefined },
      });
      return call === 1
        ? {
            content: [{ type: 'tool-call' as const, toolCallId: 'call_weather', toolName: 'get_weather', input: JSON.stringify({ city: 'Lisbon' }) }],
            finishReason: { unified: 'tool-calls' as const, raw: 'tool_calls' },
            usage: usage(140, 18),
            warnings: [],
          }
        : { content: [{ type: 'text' as const, text: 'It is 21°C and sunny in Lisbon.' }], finishReason: { unified: 'stop' as const, raw: 'stop' }, usage: usage(190, 14), warnings: [] };
    },
  });
  await generateText({
    model,
    prompt: 'What is the weather in Lisbon?',
    tools: {
      get_weather: tool({
        description: 'Current weather for a city',
        inputSchema: z.object({ city: z.string() }),
        execute: async ({ city }) => ({ city, temperature_c: 21 }),
      }),
    },
    stopWhen: stepCountIs(3),
    experimental_telemetry: { isEnabled: true, functionId: 'weather-agent', metadata: { threadId: 'weather-thread-1' }, tracer },
  });
}

async function main(): Promise<void> {
  requireKey();
  const projectId = await demoProject();
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  let exported = 0;
  let failedExports = 0;
  const providers: NodeTracerProvider[] = [];
  const tracerFor = (service: string, release: string) => {
    const exporter = new OTLPTraceExporter({
      url: `${BASE_URL}/v1/traces`,
      headers: { authorization: `Bearer ${API_KEY}`, ...(projectId ? { 'x-lookout-project': projectId } : {}) },
    });
    const counting = {
      export: (spans: Parameters<typeof exporter.export>[0], done: Parameters<typeof exporter.export>[1]) =>
        exporter.export(spans, (result) => {
          if (result.code === ExportResultCode.SUCCESS) exported += spans.length;
          else {
            failedExports++;
            process.stderr.write(`export failed: ${result.error?.message ?? 'unknown error'}\n`);
          }
          done(result);
        }),
      shutdown: () => exporter.shutdown(),
      forceFlush: () => exporter.forceFlush(),
    };
    const provider = new NodeTracerProvider({
      resource: resourceFromAttributes({ 'service.name': service, 'service.version': release, 'deployment.environment.name': 'demo' }),
      spanProcessors: [new BatchSpanProcessor(counting)],
    });
    providers.push(provider);
    return provider.getTracer('lookout-demo', '1.0.0');
  };

  const rnd = random(42);
  const now = Date.now();
  let runs = 0;
  let failures = 0;
  for (const agent of AGENTS) {
    const tracer = tracerFor(agent.service, agent.release);
    for (let run = 0; run < 12; run++) {
      // Spread over the last 24 hours, newest last.
      const start = now - (24 * 60 - (run * 110 + AGENTS.indexOf(agent) * 17)) * 60_000;
      if (agentRun(tracer, agent, run, start, rnd).failed) failures++;
      runs++;
    }
  }
  await vercelRun(tracerFor('weather-app', '3.0.0'));
  runs++;
  for (const provider of providers) await provider.forceFlush();
  for (const provider of providers) await provider.shutdown();

  process.stdout.write(`Sent ${runs} agent runs (${failures} with failures), ${exported} spans, to ${BASE_URL}.\n`);
  if (failedExports > 0) {
    process.stdout.write(`${failedExports} export(s) failed: check LOOKOUT_URL and that the key has ingest or admin scope.\n`);
    process.exit(1);
  }
  if (projectId) process.stdout.write(nextSteps(projectId, now));
}

/**
 * What to do next, as commands that work when pasted: the curl lines read the key and project from
 * $LOOKOUT_API_KEY and $PROJECT_ID (as the README's examples do), so the first lines export the key
 * this run was given (it may have been set inline, `LOOKOUT_API_KEY=… npm run demo`, which leaves
 * the shell's variable empty) and the project it filled.
 */
function nextSteps(projectId: string, now: number): string {
  const hour = 3_600_000;
  // The runs span the last 24 hours: a whole-hour window around them, ending at the next hour.
  const endExclusive = new Date(Math.ceil(now / hour) * hour);
  const start = new Date(endExclusive.getTime() - 25 * hour);
  const iso = (d: Date) => d.toISOString().replace('.000Z', 'Z');
  const window = `start=${iso(start)}&endExclusive=${iso(endExclusive)}`;
  const auth = '-H "Authorization: Bearer $LOOKOUT_API_KEY"';
  const api = `${BASE_URL}/api/projects/$PROJECT_ID`;
  return [
    `Traces are processed a few seconds after their last span. Then:`,
    ``,
    `  Dashboard: ${BASE_URL}/p/${projectId}  (sign in with this key, or any read or admin key)`,
    ``,
    `  export LOOKOUT_API_KEY=${API_KEY}`,
    `  export PROJECT_ID=${projectId}`,
    `  curl ${auth} ${api}/traces`,
    `  curl ${auth} "${api}/analytics?view=window&${window}"`,
    `  curl ${auth} "${api}/analytics?view=model_scorecard&${window}"`,
    `  curl ${auth} ${BASE_URL}/api/traces/agent-names`,
    ``,
  ].join('\n');
}

main().catch((error) => {
  process.stderr.write(`demo failed: ${(error as Error).message}\n`);
  process.exit(1);
});
