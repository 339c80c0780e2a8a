import type { AttributeValue, Attributes } from './otlp-types.js';

/**
 * THE attribute-mapping table: which span or resource attribute yields
 * each Lookout field. For every field the sources are tried top to bottom and the first one
 * present (non-empty) wins. Conventions covered:
 *
 * - gen_ai:        OpenTelemetry GenAI semantic conventions (`gen_ai.*`), current and older names.
 * - openinference: Arize OpenInference (`llm.*`, `input.value`, `tool.name`, `session.id`, ...).
 * - vercel_ai:     Vercel AI SDK telemetry (`ai.*`, with `ai.telemetry.metadata.*` for caller metadata).
 * - otel:          OpenTelemetry resource conventions (`service.name`, `service.version`).
 * - lookout:       Lookout's own overrides (`lookout.*`), for instrumentation that wants to be explicit.
 *
 * Order inside a field: explicit Lookout overrides first, then the most specific value (a
 * response model beats a requested one: it is what actually ran and what gets priced), then the
 * conventions by how widely they are used. Tests: test/unit/ingest/attribute-mapping-*.test.ts,
 * one per convention, with attribute sets as real instrumentations emit them.
 */

export type Convention = 'gen_ai' | 'openinference' | 'vercel_ai' | 'otel' | 'lookout';

export interface AttributeSource {
  key: string;
  /** Where the key is looked up: the span's attributes, or its resource's. */
  on: 'span' | 'resource';
  convention: Convention;
}

export type MappedField =
  | 'model'
  | 'provider'
  | 'inputTokens'
  | 'outputTokens'
  | 'cachedInputTokens'
  | 'cacheWriteInputTokens'
  | 'agentName'
  | 'toolName'
  | 'toolArguments'
  | 'toolResult'
  | 'threadId'
  | 'release'
  | 'agentInput'
  | 'agentOutput';

const span = (key: string, convention: Convention): AttributeSource => ({ key, on: 'span', convention });
const resource = (key: string, convention: Convention): AttributeSource => ({ key, on: 'resource', convention });

/** Vercel AI SDK: `experimental_telemetry.metadata` keys arrive as `ai.telemetry.metadata.<key>`. */
const vercelMeta = (...keys: string[]): AttributeSource[] => keys.map((k) => span(`ai.telemetry.metadata.${k}`, 'vercel_ai'));

export const ATTRIBUTE_MAP: Readonly<Record<MappedField, readonly AttributeSource[]>> = {
  model: [
    span('lookout.model', 'lookout'),
    span('gen_ai.response.model', 'gen_ai'),
    span('gen_ai.request.model', 'gen_ai'),
    span('llm.response.model_name', 'openinference'),
    span('llm.model_name', 'openinference'),
    span('llm.request.model_name', 'openinference'),
    span('embedding.model_name', 'openinference'),
    span('ai.response.model', 'vercel_ai'),
    span('ai.model.id', 'vercel_ai'),
  ],
  provider: [
    span('lookout.provider', 'lookout'),
    span('gen_ai.provider.name', 'gen_ai'),
    span('gen_ai.system', 'gen_ai'),
    span('llm.provider', 'openinference'),
    span('llm.system', 'openinference'),
    // "openai.chat", "anthropic.messages": the part before the first dot (see normalizeProvider).
    span('ai.model.provider', 'vercel_ai'),
  ],
  inputTokens: [
    span('gen_ai.usage.input_tokens', 'gen_ai'),
    span('gen_ai.usage.prompt_tokens', 'gen_ai'),
    span('llm.token_count.prompt', 'openinference'),
    span('ai.usage.inputTokens', 'vercel_ai'),
    span('ai.usage.promptTokens', 'vercel_ai'),
  ],
  outputTokens: [
    span('gen_ai.usage.output_tokens', 'gen_ai'),
    span('gen_ai.usage.completion_tokens', 'gen_ai'),
    span('llm.token_count.completion', 'openinference'),
    span('ai.usage.outputTokens', 'vercel_ai'),
    span('ai.usage.completionTokens', 'vercel_ai'),
  ],
  // Cached prompt tokens are part of the input tokens (not added to them), as all three conventions define.
  cachedInputTokens: [
    span('gen_ai.usage.cache_read.input_tokens', 'gen_ai'),
    span('gen_ai.usage.cache_read_input_tokens', 'gen_ai'),
    span('gen_ai.usage.input_tokens.cached', 'gen_ai'),
    span('llm.token_count.prompt_details.cache_read', 'openinference'),
    span('ai.usage.cachedInputTokens', 'vercel_ai'),
    span('ai.usage.inputTokenDetails.cacheReadTokens', 'vercel_ai'),
  ],
  // Tokens written to a provider cache (priced differently by some providers); also part of the input tokens.
  cacheWriteInputTokens: [
    span('gen_ai.usage.cache_creation.input_tokens', 'gen_ai'),
    span('gen_ai.usage.cache_creation_input_tokens', 'gen_ai'),
    // Dotted alias some gen_ai emitters use (OpenRouter; Sentry's conventions list it), the
    // counterpart of gen_ai.usage.input_tokens.cached above.
    span('gen_ai.usage.input_tokens.cache_write', 'gen_ai'),
    span('llm.token_count.prompt_details.cache_write', 'openinference'),
    span('ai.usage.inputTokenDetails.cacheWriteTokens', 'vercel_ai'),
  ],
  agentName: [
    span('lookout.agent_name', 'lookout'),
    span('gen_ai.agent.name', 'gen_ai'),
    span('agent.name', 'openinference'),
    ...vercelMeta('agentName', 'agent_name', 'agent'),
    // The AI SDK's functionId names the call site, which is how its users name an agent.
    span('ai.telemetry.functionId', 'vercel_ai'),
  ],
  toolName: [
    span('gen_ai.tool.name', 'gen_ai'),
    span('tool.name', 'openinference'),
    span('tool_call.function.name', 'openinference'),
    span('ai.toolCall.name', 'vercel_ai'),
  ],
  toolArguments: [
    span('gen_ai.tool.call.arguments', 'gen_ai'),
    span('tool_call.function.arguments', 'openinference'),
    span('ai.toolCall.args', 'vercel_ai'),
    // OpenInference records a TOOL span's arguments as its input.
    span('input.value', 'openinference'),
  ],
  toolResult: [
    span('gen_ai.tool.call.result', 'gen_ai'),
    span('ai.toolCall.result', 'vercel_ai'),
    span('output.value', 'openinference'),
  ],
  threadId: [
    span('lookout.thread_id', 'lookout'),
    span('gen_ai.conversation.id', 'gen_ai'),
    span('session.id', 'openinference'),
    ...vercelMeta('threadId', 'thread_id', 'conversationId', 'conversation_id', 'sessionId', 'session_id'),
  ],
  release: [
    span('lookout.release', 'lookout'),
    ...vercelMeta('release'),
    resource('service.version', 'otel'),
  ],
  agentInput: [
    span('lookout.agent_input', 'lookout'),
    span('gen_ai.input.messages', 'gen_ai'),
    span('gen_ai.prompt', 'gen_ai'),
    span('input.value', 'openinference'),
    span('ai.prompt', 'vercel_ai'),
    span('ai.prompt.messages', 'vercel_ai'),
  ],
  agentOutput: [
    span('lookout.agent_output', 'lookout'),
    span('gen_ai.output.messages', 'gen_ai'),
    span('gen_ai.completion', 'gen_ai'),
    span('output.value', 'openinference'),
    span('ai.response.text', 'vercel_ai'),
    span('ai.response.object', 'vercel_ai'),
  ],
};

export type SpanClass = 'generation' | 'tool' | 'agent' | 'other';

/**
 * Span class: explicit operation attributes first (first key present decides, by its value),
 * then the fallbacks in `classifySpan`. Values not listed under a present key fall through.
 */
export const SPAN_CLASS_RULES: readonly { key: string; convention: Convention; values: Readonly<Record<string, SpanClass>> }[] = [
  {
    key: 'lookout.span_class',
    convention: 'lookout',
    values: { generation: 'generation', tool: 'tool', agent: 'agent', other: 'other' },
  },
  {
    key: 'gen_ai.operation.name',
    convention: 'gen_ai',
    values: {
      chat: 'generation',
      text_completion: 'generation',
      generate_content: 'generation',
      embeddings: 'generation',
      execute_tool: 'tool',
      invoke_agent: 'agent',
      invoke_workflow: 'agent',
      create_agent: 'other',
    },
  },
  {
    key: 'openinference.span.kind',
    convention: 'openinference',
    values: {
      LLM: 'generation',
      EMBEDDING: 'generation',
      TOOL: 'tool',
      AGENT: 'agent',
      CHAIN: 'other',
      RETRIEVER: 'other',
      RERANKER: 'other',
      GUARDRAIL: 'other',
      EVALUATOR: 'other',
      PROMPT: 'other',
    },
  },
  {
    // The AI SDK names each span by its operation: the inner provider calls are the generations,
    // the outer generateText/streamText is the multi-step agent loop around them.
    key: 'ai.operationId',
    convention: 'vercel_ai',
    values: {
      'ai.generateText.doGenerate': 'generation',
      'ai.streamText.doStream': 'generation',
      'ai.generateObject.doGenerate': 'generation',
      'ai.streamObject.doStream': 'generation',
      'ai.embed.doEmbed': 'generation',
      'ai.embedMany.doEmbed': 'generation',
      'ai.toolCall': 'tool',
      'ai.generateText': 'agent',
      'ai.streamText': 'agent',
      'ai.generateObject': 'other',
      'ai.streamObject': 'other',
      'ai.embed': 'other',
      'ai.embedMany': 'other',
    },
  },
];

/**
 * User-message tools: tool calls whose arguments are a message shown to the end user (the agent
 * "talking" through a tool). A tool is one when its name, lower-cased with `-`/space as `_`, is in
 * this list, or when the span sets `lookout.tool.user_facing` to true. The message is taken from
 * the first of USER_MESSAGE_ARGUMENT_KEYS present in its (JSON) arguments, or the arguments
 * themselves when they are a plain string; `messages: [...]` shows the first and counts the rest
 * as omitted.
 */
export const USER_MESSAGE_TOOLS: readonly string[] = [
  'send_message',
  'send_user_message',
  'send_message_to_user',
  'message_user',
  'reply',
  'reply_to_user',
  'respond',
  'respond_to_user',
  'notify_user',
  'ask_user',
  'final_answer',
];
/**
 * Markers of an agent-invocation span: `gen_ai.operation.name` invoke_agent or create_agent,
 * OpenInference span kind AGENT, the AI SDK's generateText/streamText loop (the span its
 * functionId and metadata name), or `lookout.span_class=agent`. Some instrumentations copy a
 * placeholder agent name onto every span (the official OpenAI Agents instrumentation writes
 * `gen_ai.agent.name="OpenAI Agent"` everywhere and the real name only on `invoke_agent <name>`);
 * the name on a marked span wins over those.
 */
export const AGENT_INVOCATION_MARKERS: readonly { key: string; values: readonly string[] }[] = [
  { key: 'lookout.span_class', values: ['agent'] },
  { key: 'gen_ai.operation.name', values: ['invoke_agent', 'create_agent'] },
  { key: 'openinference.span.kind', values: ['AGENT'] },
  { key: 'ai.operationId', values: ['ai.generateText', 'ai.streamText'] },
];

export function isAgentInvocation(attrs: Attributes): boolean {
  for (const marker of AGENT_INVOCATION_MARKERS) {
    const value = attrs[marker.key];
    if (typeof value === 'string' && marker.values.includes(value)) return true;
  }
  return false;
}

export const USER_FACING_ATTRIBUTE = 'lookout.tool.user_facing';
export const USER_MESSAGE_ARGUMENT_KEYS: readonly string[] = ['message', 'text', 'content', 'body', 'reply', 'response', 'answer'];

// ---------------------------------------------------------------------------------------------

export interface MappedAttributes {
  model: string;
  provider: string;
  /** null when no source is present (the span carries no usage). */
  inputTokens: number | null;
  outputTokens: number | null;
  cachedInputTokens: number | null;
  cacheWriteInputTokens: number | null;
  agentName: string;
  toolName: string;
  /** Raw arguments as text (JSON as sent), null when absent. */
  toolArguments: string | null;
  /** Raw result as text, null when absent. */
  toolResult: string | null;
  threadId: string;
  release: string;
  agentInput: string | null;
  agentOutput: string | null;
  spanClass: SpanClass;
  userFacingTool: boolean;
  /**
   * The span is an agent invocation by an explicit marker (AGENT_INVOCATION_MARKERS): the agent it
   * names is the run's agent before any name other spans carry (trace-summary traceAgentName).
   */
  agentInvocation: boolean;
}

function present(value: AttributeValue | undefined): value is Exclude<AttributeValue, null> {
  return value !== undefined && value !== null && value !== '';
}

function lookup(field: MappedField, attrs: Attributes, resourceAttrs: Attributes): AttributeValue | undefined {
  for (const source of ATTRIBUTE_MAP[field]) {
    const value = source.on === 'span' ? attrs[source.key] : resourceAttrs[source.key];
    if (present(value)) return value;
  }
  return undefined;
}

function asText(value: AttributeValue | undefined): string {
  if (!present(value)) return '';
  return typeof value === 'string' ? value : typeof value === 'object' ? JSON.stringify(value) : String(value);
}

function asTextOrNull(value: AttributeValue | undefined): string | null {
  return present(value) ? asText(value) : null;
}

/**
 * A token count: a non-negative integer (number or numeric string) up to 2^53 − 1; anything else
 * counts as absent. Past that a count is no longer exact, and from 1e21 on JSON writes it with an
 * exponent, which ClickHouse refuses for a UInt64 column: the whole flush failed, every request in
 * it with a 503, again on each retry.
 */
function asCount(value: AttributeValue | undefined): number | null {
  const count = typeof value === 'number' ? Math.round(value) : typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : NaN;
  return count >= 0 && count <= Number.MAX_SAFE_INTEGER ? count : null;
}

function firstCount(field: MappedField, attrs: Attributes, resourceAttrs: Attributes): number | null {
  // A malformed first source should not hide a good later one.
  for (const source of ATTRIBUTE_MAP[field]) {
    const value = source.on === 'span' ? attrs[source.key] : resourceAttrs[source.key];
    const count = asCount(value);
    if (count !== null) return count;
  }
  return null;
}

export function normalizeProvider(raw: string): string {
  const lower = raw.trim().toLowerCase();
  const dot = lower.indexOf('.');
  // "openai.chat" → "openai"; but keep dotted gen_ai system names such as "az.ai.inference", "aws.bedrock".
  if (dot > 0 && !lower.startsWith('az.') && !lower.startsWith('aws.') && !lower.startsWith('gcp.')) return lower.slice(0, dot);
  return lower;
}

export function isUserMessageTool(toolName: string, attrs: Attributes): boolean {
  const flag = attrs[USER_FACING_ATTRIBUTE];
  if (flag === true || flag === 'true') return true;
  if (flag === false || flag === 'false') return false;
  const normalized = toolName.trim().toLowerCase().replace(/[-\s]+/g, '_');
  return normalized !== '' && USER_MESSAGE_TOOLS.includes(normalized);
}

export function classifySpan(attrs: Attributes, mapped: Pick<MappedAttributes, 'toolName' | 'model'>, hasAgentName: boolean): SpanClass {
  for (const rule of SPAN_CLASS_RULES) {
    const value = attrs[rule.key];
    if (typeof value === 'string' && value in rule.values) return rule.values[value];
  }
  if (mapped.toolName !== '') return 'tool';
  if (mapped.model !== '') return 'generation';
  if (hasAgentName) return 'agent';
  return 'other';
}

/**
 * OpenInference's OpenAI Agents processor names an agent only by its AGENT span's `graph.node.id`
 * (and span name), with no `agent.name`. Taken on AGENT spans only: elsewhere (LangGraph's CHAIN
 * spans) a graph node is a step, not an agent.
 */
function openInferenceAgentNode(attrs: Attributes): string {
  return attrs['openinference.span.kind'] === 'AGENT' ? asText(attrs['graph.node.id']) : '';
}

/** Applies the table to one span. Pure; the only place attribute names are interpreted. */
export function mapAttributes(attrs: Attributes, resourceAttrs: Attributes): MappedAttributes {
  const model = asText(lookup('model', attrs, resourceAttrs));
  const providerRaw = asText(lookup('provider', attrs, resourceAttrs));
  const toolName = asText(lookup('toolName', attrs, resourceAttrs));
  // An agent name set only on the span itself (not a functionId shared by every AI SDK span) marks an agent span.
  const ownAgentName = asText(attrs['lookout.agent_name']) || asText(attrs['gen_ai.agent.name']) || asText(attrs['agent.name']);
  const spanClass = classifySpan(attrs, { toolName, model }, ownAgentName !== '');
  return {
    model,
    provider: providerRaw === '' ? '' : normalizeProvider(providerRaw),
    inputTokens: firstCount('inputTokens', attrs, resourceAttrs),
    outputTokens: firstCount('outputTokens', attrs, resourceAttrs),
    cachedInputTokens: firstCount('cachedInputTokens', attrs, resourceAttrs),
    cacheWriteInputTokens: firstCount('cacheWriteInputTokens', attrs, resourceAttrs),
    agentName: asText(lookup('agentName', attrs, resourceAttrs)) || openInferenceAgentNode(attrs),
    toolName,
    toolArguments: spanClass === 'tool' ? asTextOrNull(lookup('toolArguments', attrs, resourceAttrs)) : null,
    toolResult: spanClass === 'tool' ? asTextOrNull(lookup('toolResult', attrs, resourceAttrs)) : null,
    threadId: asText(lookup('threadId', attrs, resourceAttrs)),
    release: asText(lookup('release', attrs, resourceAttrs)),
    agentInput: asTextOrNull(lookup('agentInput', attrs, resourceAttrs)),
    agentOutput: asTextOrNull(lookup('agentOutput', attrs, resourceAttrs)),
    spanClass,
    userFacingTool: spanClass === 'tool' && isUserMessageTool(toolName, attrs),
    agentInvocation: isAgentInvocation(attrs),
  };
}
